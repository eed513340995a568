package tablesvc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// sample is the entity the filter table tests evaluate against.
var sample = Entity{
	PartitionKey: "pk", RowKey: "rk'1",
	Timestamp: time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC),
	Props: []Property{
		{"Name", Value{Type: String, Str: "Banana"}},
		{"Quote", Value{Type: String, Str: "it's"}},
		{"N", Value{Type: Int32, Int: 5}},
		{"Big", Value{Type: Int64, Int: 12}},
		{"Huge", Value{Type: Int64, Int: math.MaxInt64}},
		{"D", Value{Type: Double, Num: 2.5}},
		{"NaN", Value{Type: Double, Num: math.NaN()}},
		{"Ok", Value{Type: Boolean, Bool: true}},
		{"No", Value{Type: Boolean}},
		{"When", Value{Type: DateTime, Time: time.Date(2019, 5, 10, 18, 41, 33, 451622600, time.UTC)}},
		{"Id", Value{Type: Guid, Str: "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"}},
		{"Bin", Value{Type: Binary, Bin: []byte{0x07, 0xff}}},
	},
}

func TestFilterEval(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		// table.md §5, §8 examples
		{"", true},
		{"PartitionKey eq 'pk'", true},
		{"PartitionKey eq 'pk' and RowKey eq 'rk''1'", true}, // doubled quote
		{"Quote eq 'it''s'", true},
		{"N eq 5", true},
		{"N gt 4 and N lt 6", true},
		{"N ne 5", false},
		{"N eq 5L", false},     // type-strict: an Int64 literal never equals an Int32 property
		{"N eq '5'", false},    // N eq '3' on an Int32 matches nothing
		{"N eq 5.0", false},    // nor does a Double literal
		{"N ne '5'", false},    // nor does ne across types
		{"Big eq 12L", true},   // Int64 with L (Azurite #755, #2385, #2396)
		{"Big gt 120L", false}, // the 12L/120 bug compared strings of digits
		{"Big lt 120L", true},
		{"Big eq 12", false},
		{"Huge eq 9223372036854775807L", true},
		{"Huge gt -9223372036854775808L", true},
		{"D eq 2.5", true},
		{"D gt 2", false}, // Int32 literal on a Double: type mismatch
		{"D ge 2.5e0", true},
		{"D lt 25E-1d", false},
		{"NaN eq 1.0", false},
		{"NaN ne 1.0", true},
		{"Ok", true}, // a bare Boolean property
		{"No", false},
		{"Ok eq true", true},
		{"No eq false and Ok ne false", true},
		{"not No", true},        // not (Azurite #1828)
		{"not (N eq 5)", false}, // not of a parenthesised comparison
		{"not N eq 5", false},   // not binds to the comparison
		{"not not Ok", true},
		{"5 eq N", true}, // literal on the left (Azurite #1599)
		{"4 lt N", true}, // 4 lt N ≡ N gt 4
		{"6 lt N", false},
		{"'Apple' lt Name", true},
		{"Name lt 'a'", true}, // ordinal: 'B' < 'a'
		{"Name ge 'banana'", false},
		{"When eq datetime'2019-05-10T18:41:33.4516226Z'", true},  // 7 digits
		{"When eq datetime'2019-05-10T18:41:33.4516227Z'", false}, // 100 ns apart (Azurite compares ms)
		{"When gt datetime'2019-05-10T18:41:33.451Z'", true},
		{"When eq datetime'2019-05-10T20:41:33.4516226+02:00'", true},
		{"Timestamp eq datetime'2026-11-28T06:36:14.5983078Z'", true},
		{"Timestamp lt datetime'2026-11-28T06:36:14.5983079Z'", true},
		{"Id eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'", true},
		{"Id eq '0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9'", false}, // a String literal is not a Guid
		{"Bin eq X'07ff'", true},
		{"Bin eq binary'07FF'", true},
		{"Bin gt X'07'", true},
		{"Missing eq 1", false},
		{"Missing ne 1", false}, // a missing property matches no comparison
		{"not (Missing ne 1)", true},
		{"Missing", false},
		{"N eq 1 or N eq 5", true},
		{"N eq 1 or N eq 2 and N eq 5", false}, // and binds tighter
		{"(N eq 1 or N eq 5) and Ok", true},
		{"((((N eq 5))))", true},
		{"  N   eq   5  ", true},
		{"N eq -5", false},
		{"PartitionKey eq 'pk'and RowKey ne ''", true}, // 'pk'and lexes as 'pk' and
	} {
		f, err := ParseFilter(tc.filter)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", tc.filter, err)
			continue
		}
		if got := f.MatchEntity(&sample); got != tc.want {
			t.Errorf("%q on the sample = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	deep := strings.Repeat("(", MaxFilterDepth+2) + "Ok" + strings.Repeat(")", MaxFilterDepth+2)
	nots := strings.Repeat("not ", MaxFilterDepth+2) + "Ok"
	many := strings.Repeat("N eq 1 or ", MaxFilterComparisons) + "N eq 1"
	for _, bad := range []string{
		"N eq 'x",               // unterminated string (Azurite accepts it)
		"N eq",                  // missing operand
		"eq 5",                  // missing property
		"N EQ 5",                // operators are case-sensitive
		"N eq 5 AND Ok",         // so are and/or
		"N == 5",                // not OData
		"N eq 5 Ok",             // trailing junk
		"(N eq 5",               // unbalanced
		"N eq 5)",               // unbalanced
		"N eq M",                // two properties
		"1 eq 1",                // two literals
		"5",                     // a bare literal
		"startswith(Name, 'B')", // no functions
		"N eq 2147483648",       // Int32 out of range without L
		"N eq 1x",               // malformed number
		"N eq 0x10",
		"Big eq 9223372036854775808L",
		"When eq datetime'2019-05-10'X",
		"When eq datetime'yesterday'",
		"When eq datetime'2019-05-10T18:41:33.45162261Z'", // 8 fractional digits
		"Id eq guid'nope'",
		"Bin eq X'7'",
		"Bin eq X'zz'",
		"N eq foo'1'",
		"N eq 5 and",
		"not",
		"and",
		"N eq 5 &",
		deep, nots, many,
		strings.Repeat(" ", MaxFilterLength+1),
	} {
		_, err := ParseFilter(bad)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Code != "InvalidInput" || !strings.HasPrefix(ie.Message, msgBadFilter) {
			t.Errorf("ParseFilter(%.60q) = %v, want InvalidInput", bad, err)
		}
	}
	// The bounds themselves are allowed.
	ok := []string{
		strings.Repeat("(", MaxFilterDepth) + "Ok" + strings.Repeat(")", MaxFilterDepth),
		strings.Repeat("N eq 1 or ", MaxFilterComparisons-1) + "N eq 1",
	}
	for _, s := range ok {
		if _, err := ParseFilter(s); err != nil {
			t.Errorf("ParseFilter(%.60q): %v", s, err)
		}
	}
}

func TestFilterKeyRange(t *testing.T) {
	b := func(v string, incl bool) Bound { return Bound{Set: true, Value: v, Inclusive: incl} }
	for _, tc := range []struct {
		filter   string
		want     KeyRange
		possible bool
	}{
		{"", KeyRange{}, true},
		{"PartitionKey eq 'p'", KeyRange{PKLow: b("p", true), PKHigh: b("p", true)}, true},
		{"PartitionKey eq 'p' and RowKey gt 'a' and RowKey le 'm'", KeyRange{PKLow: b("p", true), PKHigh: b("p", true), RKLow: b("a", false), RKHigh: b("m", true)}, true},
		{"PartitionKey ge 'a' and PartitionKey gt 'a'", KeyRange{PKLow: b("a", false)}, true},
		{"PartitionKey ge 'a' and PartitionKey gt 'b' and PartitionKey lt 'x' and PartitionKey le 'w'", KeyRange{PKLow: b("b", false), PKHigh: b("w", true)}, true},
		{"'m' gt PartitionKey", KeyRange{PKHigh: b("m", false)}, true},
		{"PartitionKey eq 'p' or PartitionKey eq 'q'", KeyRange{}, true}, // or is not pushed down
		{"not (PartitionKey eq 'p')", KeyRange{}, true},
		{"PartitionKey ne 'p'", KeyRange{}, true},
		{"(PartitionKey eq 'p' and N eq 1) and RowKey lt 'z'", KeyRange{PKLow: b("p", true), PKHigh: b("p", true), RKHigh: b("z", false)}, true},
		{"PartitionKey eq 'p' and PartitionKey eq 'q'", KeyRange{}, false},
		{"PartitionKey gt 'p' and PartitionKey lt 'p'", KeyRange{}, false},
		{"PartitionKey eq 5", KeyRange{}, false},
		{"RowKey eq true and PartitionKey eq 'p'", KeyRange{}, false},
	} {
		f, err := ParseFilter(tc.filter)
		if err != nil {
			t.Fatalf("%q: %v", tc.filter, err)
		}
		got, possible := f.KeyRange()
		if possible != tc.possible || possible && got != tc.want {
			t.Errorf("%q: range %+v possible %v, want %+v %v", tc.filter, got, possible, tc.want, tc.possible)
		}
	}
}

// FuzzParseFilter: no input panics or hangs the parser; a parsed filter
// evaluates without panicking, and its key range is sound: every entity
// it matches lies inside the range (the pushdown never loses a match).
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"", "PartitionKey eq 'pk'", "PartitionKey ge 'a' and PartitionKey lt 'q' and RowKey gt 'r'",
		"not (N eq 5) or Ok", "Big eq 12L", "5 eq N", "When eq datetime'2019-05-10T18:41:33.4516226Z'",
		"Id eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'", "Bin eq X'07ff'", "D lt 2.5e3d", "Quote eq 'it''s'",
		"((PartitionKey eq 'pk'))", "'rk''1' ge RowKey", "N eq 'x", "not not not Ok",
	} {
		f.Add(s)
	}
	entities := []Entity{sample, {PartitionKey: "a", RowKey: "b"}, {PartitionKey: "pk", RowKey: ""}, {PartitionKey: "", RowKey: "zz"}}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Code != "InvalidInput" {
				t.Fatalf("%q: error %v is not InvalidInput", s, err)
			}
			return
		}
		r, possible := flt.KeyRange()
		for i := range entities {
			if flt.MatchEntity(&entities[i]) && (!possible || !r.Contains(entities[i].PartitionKey, entities[i].RowKey)) {
				t.Fatalf("%q matches %s/%s outside its key range %+v (possible %v)", s, entities[i].PartitionKey, entities[i].RowKey, r, possible)
			}
		}
	})
}
