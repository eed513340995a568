package tablesvc

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
)

func TestFormatAndParseTime(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"2026-11-28T06:36:14.5983078Z", "2026-11-28T06:36:14.5983078Z"},
		{"2026-11-28T06:36:14Z", "2026-11-28T06:36:14.0000000Z"},
		{"2026-11-28T06:36:14.5Z", "2026-11-28T06:36:14.5000000Z"},
		{"2026-11-28T08:36:14.5983078+02:00", "2026-11-28T06:36:14.5983078Z"},
		{"2026-11-28T06:36:14.5983078", "2026-11-28T06:36:14.5983078Z"}, // no zone: UTC
		{"1601-01-01T00:00:00Z", "1601-01-01T00:00:00.0000000Z"},
		{"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999Z"},
	} {
		got, err := ParseTime(tc.in)
		if err != nil || FormatTime(got) != tc.want {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", tc.in, FormatTime(got), err, tc.want)
		}
	}
	for _, bad := range []string{"", "2026-11-28", "2026-11-28T06:36:14.59830781Z", "2026-11-28T06:36:14.Z", "yesterday", "2026-13-01T00:00:00Z"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
	// FormatTime truncates to 100 ns and converts to UTC.
	in := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	if got := FormatTime(in); got != "2026-01-02T02:04:05.1234567Z" {
		t.Errorf("FormatTime = %s", got)
	}
}

func TestETag(t *testing.T) {
	e := Entity{Timestamp: time.Date(2019, 5, 10, 18, 41, 33, 451622600, time.UTC)}
	if got, want := e.ETag(), `W/"datetime'2019-05-10T18%3A41%3A33.4516226Z'"`; got != want {
		t.Fatalf("ETag = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		ifMatch string
		ok      bool // parses
		matches bool
	}{
		{"*", true, true},
		{`W/"datetime'2019-05-10T18%3A41%3A33.4516226Z'"`, true, true},
		{`W/"datetime'2019-05-10T18:41:33.4516226Z'"`, true, true},
		{`W/"datetime'2019-05-10T18%3a41%3a33.4516226Z'"`, true, true},
		{`W/"datetime'2019-05-10T18%3A41%3A33.4516227Z'"`, true, false},
		{`"datetime'2019-05-10T18%3A41%3A33.4516226Z'"`, true, false},
		{`W/"wrong"`, true, false},
		{`""`, true, false},
		{"garbage", false, false},
		{`W/wrong`, false, false},
		{`W/"a", W/"b"`, false, false},
		{`"a`, false, false},
		{" *", false, false},
		{"", false, false},
	} {
		m, err := parseIfMatch(tc.ifMatch)
		if (err == nil) != tc.ok {
			t.Errorf("parseIfMatch(%q): %v", tc.ifMatch, err)
			continue
		}
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Code != "InvalidInput" {
				t.Errorf("parseIfMatch(%q): %v, want InvalidInput", tc.ifMatch, err)
			}
			continue
		}
		if got := m.matches(e); got != tc.matches {
			t.Errorf("If-Match %q matches = %v, want %v", tc.ifMatch, got, tc.matches)
		}
	}
}

func TestTypes(t *testing.T) {
	for ty := String; ty <= Binary; ty++ {
		got, ok := ParseType(ty.EdmName())
		if !ok || got != ty {
			t.Errorf("ParseType(%s) = %v, %v", ty.EdmName(), got, ok)
		}
	}
	for _, bad := range []string{"", "edm.string", "Edm.Decimal", "Edm.DateTimeOffset"} {
		if _, ok := ParseType(bad); ok {
			t.Errorf("ParseType(%q) accepted", bad)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, tm := range []time.Time{MinTime, MaxTime, time.Unix(0, 0).UTC(), time.Date(1969, 12, 31, 23, 59, 59, 999999900, time.UTC), time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC)} {
		if got := FromTicks(Ticks(tm)); !got.Equal(tm) {
			t.Errorf("FromTicks(Ticks(%v)) = %v", tm, got)
		}
	}
	if Ticks(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)) != 0 {
		t.Error("tick 0 is not 0001-01-01")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	props := sample.Props
	b := EncodeProps(nil, props)
	got, err := DecodeProps(b)
	if err != nil || len(got) != len(props) {
		t.Fatalf("DecodeProps: %d props, %v", len(got), err)
	}
	for i := range props {
		p, q := props[i], got[i]
		eq := p.Name == q.Name && p.Value.Type == q.Value.Type && p.Value.Str == q.Value.Str && p.Value.Int == q.Value.Int &&
			p.Value.Bool == q.Value.Bool && p.Value.Time.Equal(q.Value.Time) && bytes.Equal(p.Value.Bin, q.Value.Bin) &&
			(p.Value.Num == q.Value.Num || math.IsNaN(p.Value.Num) && math.IsNaN(q.Value.Num))
		if !eq {
			t.Errorf("property %d: %+v, want %+v", i, q, p)
		}
	}
	if empty, err := DecodeProps(EncodeProps(nil, nil)); err != nil || len(empty) != 0 {
		t.Fatalf("empty: %v %v", empty, err)
	}
	for n := range len(b) { // every truncation is an error, not a panic
		if _, err := DecodeProps(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes decoded", n)
		}
	}
}

// FuzzDecodeProps: stored bytes never panic the decoder, and what decodes
// encodes back to the same bytes.
func FuzzDecodeProps(f *testing.F) {
	f.Add(EncodeProps(nil, sample.Props))
	f.Add(EncodeProps(nil, nil))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		props, err := DecodeProps(b)
		if err != nil {
			return
		}
		if again := EncodeProps(nil, props); !bytes.Equal(again, b) {
			// Varints have one canonical form on encode; a non-canonical
			// input may decode: it must then decode to the same props.
			p2, err := DecodeProps(again)
			if err != nil || len(p2) != len(props) {
				t.Fatalf("re-encoding %x gave %x (%v)", b, again, err)
			}
		}
	})
}
