package reliability

import "testing"

// The oracle itself: a record decodes to its version, zeros to 0, and any
// mix, shift or foreign record is refused.
func TestRecordOracle(t *testing.T) {
	v1 := record(7, 3, 1, 4096)
	v2 := record(7, 3, 2, 4096)
	torn := append(append([]byte{}, v1[:2048]...), v2[2048:]...)
	cases := []struct {
		name    string
		b       []byte
		want    uint32
		wantErr bool
	}{
		{"version 1", v1, 1, false},
		{"version 2", v2, 2, false},
		{"zeros", make([]byte, 4096), 0, false},
		{"torn mix", torn, 0, true},
		{"other slot", record(7, 4, 1, 4096), 0, true},
		{"other file", record(8, 3, 1, 4096), 0, true},
		{"truncated", v1[:4000], 0, true},
		{"zero tail", append(append([]byte{}, v1[:100]...), make([]byte, 3996)...), 0, true},
		{"garbage", []byte("hello world, this is not a record"), 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeRecord(tc.b, 7, 3)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("version %d, want %d", got, tc.want)
			}
		})
	}
}
