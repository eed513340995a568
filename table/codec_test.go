package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// TestDecodeEntityTypes: every EDM type from its JSON form, annotated
// and not, and the keys.
func TestDecodeEntityTypes(t *testing.T) {
	body := `{"odata.metadata":"x","PartitionKey":"p","RowKey":"r","Timestamp":"2020-01-01T00:00:00Z",
	"S":"text","I":42,"Big":"9223372036854775807","Big@odata.type":"Edm.Int64",
	"D":2.5,"Whole@odata.type":"Edm.Double","Whole":3,"N@odata.type":"Edm.Double","N":"NaN",
	"Inf":"Infinity","Inf@odata.type":"Edm.Double","NInf":"-Infinity","NInf@odata.type":"Edm.Double",
	"B":true,"T@odata.type":"Edm.DateTime","T":"2026-11-28T06:36:14.5983078Z",
	"G@odata.type":"Edm.Guid","G":"0B3C1E9A-1111-2222-3333-444455556666","Bin@odata.type":"Edm.Binary","Bin":"AAEC/w==",
	"Null":null,"Unannotated":3000000000,"I32@odata.type":"Edm.Int32","I32":"-5"}`
	d, err := decodeEntity([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if d.pk != "p" || d.rk != "r" || !d.hasPK || !d.hasRK {
		t.Fatalf("keys %+v", d)
	}
	got := map[string]tablesvc.Value{}
	var order []string
	for _, p := range d.props {
		got[p.Name] = p.Value
		order = append(order, p.Name)
	}
	if strings.Join(order, ",") != "S,I,Big,D,Whole,N,Inf,NInf,B,T,G,Bin,Unannotated,I32" {
		t.Errorf("properties in order %v (Timestamp and nulls dropped, body order kept)", order)
	}
	tm := time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC)
	for name, want := range map[string]tablesvc.Value{
		"S": {Type: tablesvc.String, Str: "text"}, "I": {Type: tablesvc.Int32, Int: 42},
		"Big": {Type: tablesvc.Int64, Int: math.MaxInt64}, "D": {Type: tablesvc.Double, Num: 2.5},
		"Whole": {Type: tablesvc.Double, Num: 3}, "Inf": {Type: tablesvc.Double, Num: math.Inf(1)},
		"NInf": {Type: tablesvc.Double, Num: math.Inf(-1)}, "B": {Type: tablesvc.Boolean, Bool: true},
		"T": {Type: tablesvc.DateTime, Time: tm}, "G": {Type: tablesvc.Guid, Str: "0B3C1E9A-1111-2222-3333-444455556666"},
		"Unannotated": {Type: tablesvc.Double, Num: 3e9}, "I32": {Type: tablesvc.Int32, Int: -5},
	} {
		g := got[name]
		if g.Type != want.Type || g.Str != want.Str || g.Int != want.Int || g.Num != want.Num || g.Bool != want.Bool || !g.Time.Equal(want.Time) {
			t.Errorf("%s = %+v, want %+v", name, g, want)
		}
	}
	if n := got["N"]; n.Type != tablesvc.Double || !math.IsNaN(n.Num) {
		t.Errorf("N = %+v, want NaN", n)
	}
	if b := got["Bin"]; b.Type != tablesvc.Binary || !bytes.Equal(b.Bin, []byte{0, 1, 2, 255}) {
		t.Errorf("Bin = %+v", b)
	}
}

func TestDecodeEntityRefuses(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `"x"`, `{`, `{"A":1`, `{"A":1}{}`, `{"A":1} x`, `{"A":{"B":1}}`, `{"A":[1]}`,
		`{"A":1,"A":2}`, `{"A@odata.type":"Edm.Int64","A@odata.type":"Edm.Int64","A":"1"}`,
		`{"A@odata.type":"Edm.Int64","A":"abc"}`, `{"A@odata.type":"Edm.Int64","A":"9223372036854775808"}`,
		`{"A@odata.type":"Edm.Int32","A":2147483648}`, `{"A@odata.type":"Edm.Guid","A":"not-a-guid"}`,
		`{"A@odata.type":"Edm.DateTime","A":"yesterday"}`, `{"A@odata.type":"Edm.Binary","A":"!!"}`,
		`{"A@odata.type":"Edm.Double","A":"fast"}`, `{"A@odata.type":"Edm.Boolean","A":"true"}`,
		`{"A@odata.type":"Edm.Nope","A":"1"}`, `{"A@odata.type":5,"A":"1"}`, `{"PartitionKey":5}`,
		`{"RowKey@odata.type":"Edm.Int32","RowKey":"1"}`, "{\"A\":\"\xff\"}",
		`{"A":` + strings.Repeat("[", 10000) + `}`,
	} {
		_, err := decodeEntity([]byte(body))
		var se *storagehttp.Error
		if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
			t.Errorf("decodeEntity(%.60q) = %v, want a 400", body, err)
		}
	}
}

// TestEncodeLevels: what each metadata level carries.
func TestEncodeLevels(t *testing.T) {
	e := tablesvc.Entity{PartitionKey: "p", RowKey: "r'1", Timestamp: time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC),
		Props: []tablesvc.Property{
			{Name: "S", Value: tablesvc.Value{Type: tablesvc.String, Str: "a\"b\n"}},
			{Name: "I", Value: tablesvc.Value{Type: tablesvc.Int32, Int: 7}},
			{Name: "L", Value: tablesvc.Value{Type: tablesvc.Int64, Int: -9}},
			{Name: "D", Value: tablesvc.Value{Type: tablesvc.Double, Num: 1.5}},
			{Name: "W", Value: tablesvc.Value{Type: tablesvc.Double, Num: 2}},
			{Name: "N", Value: tablesvc.Value{Type: tablesvc.Double, Num: math.Inf(-1)}},
		}}
	for _, tc := range []struct {
		l           level
		has, hasNot []string
	}{
		{noMeta, []string{`"PartitionKey":"p"`, `"Timestamp":"2026-11-28T06:36:14.5983078Z"`, `"L":"-9"`, `"N":"-Infinity"`, `"S":"a\"b\n"`},
			[]string{"odata.", "@odata.type"}},
		{minimalMeta, []string{`"odata.metadata":"M"`, `"odata.etag":"W/\"datetime'2026-11-28T06%3A36%3A14.5983078Z'\""`,
			`"L@odata.type":"Edm.Int64"`, `"W@odata.type":"Edm.Double","W":2`, `"N@odata.type":"Edm.Double"`, `"D":1.5`},
			[]string{`"odata.type":`, "Timestamp@", "I@", "D@", "S@"}},
		{fullMeta, []string{`"odata.type":"acct.tab"`, `"odata.id":"http://h/acct/tab(PartitionKey='p',RowKey='r''1')"`,
			`"odata.editLink":"tab(PartitionKey='p',RowKey='r''1')"`, `"Timestamp@odata.type":"Edm.DateTime"`, `"I@odata.type":"Edm.Int32"`},
			[]string{"S@"}},
	} {
		o := entityOut{level: tc.l, base: "http://h/acct", table: "tab"}
		b := o.appendEntity(nil, e, "M")
		if !json.Valid(b) {
			t.Fatalf("level %d: invalid JSON %s", tc.l, b)
		}
		for _, s := range tc.has {
			if !bytes.Contains(b, []byte(s)) {
				t.Errorf("level %d: %s lacks %s", tc.l, b, s)
			}
		}
		for _, s := range tc.hasNot {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("level %d: %s has %s", tc.l, b, s)
			}
		}
	}
	o := entityOut{level: minimalMeta, fields: parseSelect("S, L")}
	b := string(o.appendEntity(nil, e, ""))
	if strings.Contains(b, "PartitionKey") || strings.Contains(b, `"I"`) || !strings.Contains(b, `"S"`) || !strings.Contains(b, "odata.etag") {
		t.Errorf("$select=S,L: %s", b)
	}
}

// TestCodecRoundTrip: what the encoder writes (minimal metadata) decodes
// to the same typed values.
func TestCodecRoundTrip(t *testing.T) {
	props := []tablesvc.Property{
		{Name: "S", Value: tablesvc.Value{Type: tablesvc.String, Str: "\x01é\u2028"}},
		{Name: "I", Value: tablesvc.Value{Type: tablesvc.Int32, Int: math.MinInt32}},
		{Name: "L", Value: tablesvc.Value{Type: tablesvc.Int64, Int: math.MinInt64}},
		{Name: "D", Value: tablesvc.Value{Type: tablesvc.Double, Num: 1e300}},
		{Name: "W", Value: tablesvc.Value{Type: tablesvc.Double, Num: -0.0}},
		{Name: "B", Value: tablesvc.Value{Type: tablesvc.Boolean}},
		{Name: "T", Value: tablesvc.Value{Type: tablesvc.DateTime, Time: time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)}},
		{Name: "G", Value: tablesvc.Value{Type: tablesvc.Guid, Str: "00000000-0000-0000-0000-000000000001"}},
		{Name: "X", Value: tablesvc.Value{Type: tablesvc.Binary, Bin: []byte{}}},
	}
	for _, l := range []level{minimalMeta, fullMeta} {
		o := entityOut{level: l, base: "http://h/a", table: "t"}
		d, err := decodeEntity(o.appendEntity(nil, tablesvc.Entity{PartitionKey: "p", RowKey: "r", Props: props}, "m"))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.props) != len(props) {
			t.Fatalf("level %d: %d properties back, want %d", l, len(d.props), len(props))
		}
		for i, p := range d.props {
			w := props[i].Value
			if p.Name != props[i].Name || p.Value.Type != w.Type || p.Value.Str != w.Str || p.Value.Int != w.Int ||
				p.Value.Num != w.Num || !p.Value.Time.Equal(w.Time) || !bytes.Equal(p.Value.Bin, w.Bin) {
				t.Errorf("level %d: %s came back as %+v, want %+v", l, props[i].Name, p.Value, w)
			}
		}
	}
}

func FuzzDecodeEntity(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1,"B@odata.type":"Edm.Int64","B":"5"}`,
		`{"A@odata.type":"Edm.Double","A":"NaN","T@odata.type":"Edm.DateTime","T":"2020-01-01T00:00:00.1234567Z"}`,
		`{"X@odata.type":"Edm.Binary","X":"AA==","G@odata.type":"Edm.Guid","G":"00000000-0000-0000-0000-000000000000"}`,
		`{"A":{"B":1}}`, `{"A":null,"odata.etag":"x"}`, `{"A":1e400}`, `{`,
		` { "A\u00e9\"" : "x\\y\/\ud83d\ude00" , "B" : -0.5e+3 , "C":true,"D":false,"E":[1] } `, `{}`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// The fast path reads exactly what encoding/json's tokenizer reads
		// (in valid UTF-8: decodeEntity refuses anything else first).
		if fast, ok := flatPairs(body); ok && utf8.Valid(body) {
			var slow []jsonPair
			errNested := errors.New("nested")
			err := tokenPairs(body, func(k string, v any) error {
				slow = append(slow, jsonPair{k, v})
				if _, nested := v.(json.Delim); nested {
					return errNested
				}
				return nil
			})
			if err != nil && !errors.Is(err, errNested) || !reflect.DeepEqual(fast, slow) && len(fast)+len(slow) > 0 {
				t.Fatalf("flatPairs(%q) = %#v, tokenPairs: %#v, %v", body, fast, slow, err)
			}
		}
		d, err := decodeEntity(body)
		if err != nil {
			var se *storagehttp.Error
			if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
				t.Fatalf("decodeEntity: %v, want a 400", err)
			}
			return
		}
		// What decoded re-encodes to valid JSON that decodes to the same.
		o := entityOut{level: minimalMeta, base: "http://h/a", table: "t"}
		out := o.appendEntity(nil, tablesvc.Entity{PartitionKey: d.pk, RowKey: d.rk, Props: d.props}, "m")
		if !json.Valid(out) {
			t.Fatalf("re-encoded entity is not JSON: %s", out)
		}
		d2, err := decodeEntity(out)
		if err != nil || len(d2.props) != len(d.props) || d2.pk != d.pk || d2.rk != d.rk {
			t.Fatalf("re-decoding %s: %+v, %v", out, d2, err)
		}
		for i := range d.props {
			a, b := d.props[i].Value, d2.props[i].Value
			same := a.Type == b.Type && a.Str == b.Str && a.Int == b.Int && a.Bool == b.Bool && a.Time.Equal(b.Time) &&
				bytes.Equal(a.Bin, b.Bin) && (a.Num == b.Num || math.IsNaN(a.Num) && math.IsNaN(b.Num))
			if !same {
				t.Fatalf("property %s: %+v became %+v", d.props[i].Name, a, b)
			}
		}
	})
}

// TestLevelOf: the Accept values levelOf knows by heart give what the
// media-type parse gives them, and the parse still reads the rest.
func TestLevelOf(t *testing.T) {
	for _, c := range []struct {
		accept string
		want   level
		ok     bool
	}{
		{"application/json", minimalMeta, true},
		{"application/json;odata=minimalmetadata", minimalMeta, true},
		{"application/json;odata=nometadata", noMeta, true},
		{"application/json;odata=fullmetadata", fullMeta, true},
		{"application/json; odata=NoMetadata", noMeta, true},
		{"Application/JSON;odata=fullmetadata;streaming=true", fullMeta, true},
		{"application/json;odata=verbose", 0, false},
		{"text/plain", 0, false},
	} {
		got, ok := levelOf(c.accept)
		if got != c.want || ok != c.ok {
			t.Errorf("levelOf(%q) = %v, %v; want %v, %v", c.accept, got, ok, c.want, c.ok)
		}
		// The same through the general parse (another parameter defeats
		// the fast cases).
		if got2, ok2 := levelOf(c.accept + ";x=1"); got2 != got || ok2 != ok {
			t.Errorf("levelOf(%q) through the parse = %v, %v; want %v, %v", c.accept+";x=1", got2, ok2, got, ok)
		}
	}
}
