package tablesvc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func code(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Code
	}
	if err != nil {
		return "not an InputError: " + err.Error()
	}
	return ""
}

func TestValidTableName(t *testing.T) {
	for _, tc := range []struct{ name, code string }{
		{"abc", ""}, {"MyTable", ""}, {"a12", ""}, {strings.Repeat("a", 63), ""},
		{"ab", "OutOfRangeInput"}, {strings.Repeat("a", 64), "OutOfRangeInput"}, {"", "OutOfRangeInput"},
		{"1ab", "InvalidResourceName"}, {"ab-c", "InvalidResourceName"}, {"ab_c", "InvalidResourceName"},
		{"$MetricsHour", "InvalidResourceName"}, {"tablé", "InvalidResourceName"},
		{"tables", "InvalidInput"}, {"Tables", "InvalidInput"},
	} {
		if got := code(ValidTableName(tc.name)); got != tc.code {
			t.Errorf("ValidTableName(%q) = %q, want %q", tc.name, got, tc.code)
		}
	}
}

func TestValidKey(t *testing.T) {
	astral := "😀" // two UTF-16 units
	for _, tc := range []struct{ key, code string }{
		{"", ""}, {"a b'c~!@$%^&*()", ""}, {"ünïcode", ""},
		{strings.Repeat("k", 512), ""}, {strings.Repeat(astral, 256), ""}, {strings.Repeat("é", 512), ""},
		{strings.Repeat("k", 513), "PropertyValueTooLarge"}, {strings.Repeat(astral, 256) + "k", "PropertyValueTooLarge"},
		{"a/b", "OutOfRangeInput"}, {`a\b`, "OutOfRangeInput"}, {"#", "OutOfRangeInput"}, {"?", "OutOfRangeInput"},
		{"\x00", "OutOfRangeInput"}, {"\t", "OutOfRangeInput"}, {"\n", "OutOfRangeInput"}, {"\x1f", "OutOfRangeInput"},
		{"\x7f", "OutOfRangeInput"}, {"\u0080", "OutOfRangeInput"}, {"\u009f", "OutOfRangeInput"}, {"\u00a0", ""},
		{"\xff", "InvalidInput"},
	} {
		if got := code(ValidKey("RowKey", tc.key)); got != tc.code {
			t.Errorf("ValidKey(%.20q) = %q, want %q", tc.key, got, tc.code)
		}
	}
}

func TestValidPropertyName(t *testing.T) {
	for _, tc := range []struct{ name, code string }{
		{"A", ""}, {"_a", ""}, {"a1", ""}, {"Émile", ""}, {"名前", ""}, {"a\u0301", ""}, {"a_b", ""},
		{strings.Repeat("n", 255), ""}, {strings.Repeat("é", 255), ""},
		{strings.Repeat("n", 256), "PropertyNameTooLong"},
		{"", "PropertyNameInvalid"}, {"1a", "PropertyNameInvalid"}, {"a-b", "PropertyNameInvalid"}, {"a b", "PropertyNameInvalid"},
		{"a.b", "PropertyNameInvalid"}, {"\u0301a", "PropertyNameInvalid"}, {"a$", "PropertyNameInvalid"},
		{"PartitionKey", "InvalidInput"}, {"Timestamp", "InvalidInput"},
	} {
		if got := code(ValidPropertyName(tc.name)); got != tc.code {
			t.Errorf("ValidPropertyName(%.20q) = %q, want %q", tc.name, got, tc.code)
		}
	}
}

func TestValidateValue(t *testing.T) {
	astral := "😀"
	for _, tc := range []struct {
		what string
		v    Value
		code string
	}{
		{"32768 units", Value{Type: String, Str: strings.Repeat("s", 32768)}, ""},
		{"32769 units", Value{Type: String, Str: strings.Repeat("s", 32769)}, "PropertyValueTooLarge"},
		{"16384 astral", Value{Type: String, Str: strings.Repeat(astral, 16384)}, ""},
		{"16385 astral", Value{Type: String, Str: strings.Repeat(astral, 16385)}, "PropertyValueTooLarge"},
		{"32768 two-byte", Value{Type: String, Str: strings.Repeat("é", 32768)}, ""},
		{"bad UTF-8", Value{Type: String, Str: "\xff"}, "InvalidInput"},
		{"64 KiB binary", Value{Type: Binary, Bin: make([]byte, 65536)}, ""},
		{"65537 binary", Value{Type: Binary, Bin: make([]byte, 65537)}, "PropertyValueTooLarge"},
		{"Int32 max", Value{Type: Int32, Int: math.MaxInt32}, ""},
		{"Int32 over", Value{Type: Int32, Int: math.MaxInt32 + 1}, "InvalidInput"},
		{"Int64 min", Value{Type: Int64, Int: math.MinInt64}, ""},
		{"NaN", Value{Type: Double, Num: math.NaN()}, ""},
		{"1601", Value{Type: DateTime, Time: MinTime}, ""},
		{"1600", Value{Type: DateTime, Time: MinTime.Add(-Tick)}, "OutOfRangeInput"},
		{"9999", Value{Type: DateTime, Time: MaxTime}, ""},
		{"10000", Value{Type: DateTime, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "OutOfRangeInput"},
		{"guid", Value{Type: Guid, Str: "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"}, ""},
		{"bad guid", Value{Type: Guid, Str: "abc"}, "InvalidInput"},
		{"braced guid", Value{Type: Guid, Str: "{0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9}"}, "InvalidInput"},
		{"unknown type", Value{Type: Binary + 1}, "InvalidInput"},
	} {
		if got := code(ValidateValue("P", tc.v)); got != tc.code {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.code)
		}
	}
}

func TestValidateEntityLimits(t *testing.T) {
	props := func(n int) []Property {
		var p []Property
		for i := range n {
			p = append(p, Property{Name: "P" + strings.Repeat("x", i/26) + string(rune('a'+i%26)), Value: Value{Type: Boolean}})
		}
		return p
	}
	if got := code(ValidateEntity(Entity{PartitionKey: "p", RowKey: "r", Props: props(252)})); got != "" {
		t.Errorf("252 user properties (255 with the system ones): %q", got)
	}
	if got := code(ValidateEntity(Entity{PartitionKey: "p", RowKey: "r", Props: props(253)})); got != "TooManyProperties" {
		t.Errorf("253 user properties: %q", got)
	}
	// DM's estimate: 4 + 2×len(PK+RK) + per property 8 + 2×len(name) + 2×len(string) + 4.
	// With PK "p", RK "r" and 16 string properties "A".."P" of n units:
	// 4 + 4 + 16×(8 + 2 + 4) + 32×n = 232 + 32n; 1 MiB allows n = 32760.
	big := func(n int) Entity {
		e := Entity{PartitionKey: "p", RowKey: "r"}
		for i := range 16 {
			e.Props = append(e.Props, Property{Name: string(rune('A' + i)), Value: Value{Type: String, Str: strings.Repeat("s", n)}})
		}
		return e
	}
	if s := EntitySize(big(32760)); s != 232+32*32760 || s > MaxEntityBytes {
		t.Fatalf("EntitySize = %d, want %d (≤ 1 MiB)", s, 232+32*32760)
	}
	if got := code(ValidateEntity(big(32760))); got != "" {
		t.Errorf("entity of %d bytes: %q", EntitySize(big(32760)), got)
	}
	if got := code(ValidateEntity(big(32761))); got != "EntityTooLarge" {
		t.Errorf("entity of %d bytes: %q, want EntityTooLarge", EntitySize(big(32761)), got)
	}
	dup := Entity{Props: []Property{{Name: "A"}, {Name: "A"}}}
	if got := code(ValidateEntity(dup)); got != "DuplicatePropertiesSpecified" {
		t.Errorf("duplicate: %q", got)
	}
	sizes := Entity{PartitionKey: "pk", RowKey: "", Props: []Property{
		{"I", Value{Type: Int32}}, {"L", Value{Type: Int64}}, {"D", Value{Type: Double}}, {"B", Value{Type: Boolean}},
		{"T", Value{Type: DateTime, Time: MinTime}}, {"G", Value{Type: Guid}}, {"X", Value{Type: Binary, Bin: []byte{1, 2, 3}}},
	}}
	// 4 + 4 + 7×(8+2) + 4 + 8 + 8 + 1 + 8 + 16 + (3+4)
	if got, want := EntitySize(sizes), 4+4+70+4+8+8+1+8+16+7; got != want {
		t.Errorf("EntitySize by type = %d, want %d", got, want)
	}
}

// FuzzValidateKey: any key string is either refused with an InputError or
// accepted and then survives the stored form unchanged.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"", "pk", "a/b", "\x00", "😀", strings.Repeat("k", 513), "\xff"} {
		f.Add(s, "Name")
	}
	f.Fuzz(func(t *testing.T, key, name string) {
		if err := ValidKey("PartitionKey", key); err != nil && code(err) == "" {
			t.Fatalf("ValidKey(%q): %v", key, err)
		}
		err := ValidateEntity(Entity{PartitionKey: "p", RowKey: key, Props: []Property{{Name: name, Value: Value{Type: String, Str: key}}}})
		if err != nil {
			if code(err) == "" || strings.HasPrefix(code(err), "not an") {
				t.Fatalf("ValidateEntity: %v", err)
			}
			return
		}
		props, err := DecodeProps(EncodeProps(nil, []Property{{Name: name, Value: Value{Type: String, Str: key}}}))
		if err != nil || props[0].Name != name || props[0].Value.Str != key {
			t.Fatalf("stored form changed %q/%q: %+v %v", name, key, props, err)
		}
	})
}
