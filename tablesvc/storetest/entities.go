package storetest

import (
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/blobshare/blobshare/tablesvc"
)

func testValuesRoundTrip(e *env) {
	t := e.t
	e.mustCreate("values")
	v := func(p string, val tablesvc.Value) tablesvc.Property { return tablesvc.Property{Name: p, Value: val} }
	in := tablesvc.Entity{PartitionKey: "", RowKey: "ünï'cödé", Props: []tablesvc.Property{
		v("S", tablesvc.Value{Type: tablesvc.String, Str: "x\x00y 😀"}),
		v("Empty", tablesvc.Value{Type: tablesvc.String}),
		v("I32", tablesvc.Value{Type: tablesvc.Int32, Int: math.MinInt32}),
		v("I64", tablesvc.Value{Type: tablesvc.Int64, Int: math.MaxInt64}),
		v("Neg64", tablesvc.Value{Type: tablesvc.Int64, Int: math.MinInt64}),
		v("D", tablesvc.Value{Type: tablesvc.Double, Num: -2.5e-300}),
		v("Inf", tablesvc.Value{Type: tablesvc.Double, Num: math.Inf(-1)}),
		v("B", tablesvc.Value{Type: tablesvc.Boolean, Bool: true}),
		v("Early", tablesvc.Value{Type: tablesvc.DateTime, Time: tablesvc.MinTime}),
		v("Late", tablesvc.Value{Type: tablesvc.DateTime, Time: tablesvc.MaxTime}),
		v("Ticks", tablesvc.Value{Type: tablesvc.DateTime, Time: time.Date(2020, 2, 29, 23, 59, 59, 123456700, time.UTC)}),
		v("G", tablesvc.Value{Type: tablesvc.Guid, Str: "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"}),
		v("Bin", tablesvc.Value{Type: tablesvc.Binary, Bin: []byte{0, 1, 0xff}}),
		v("Nan", tablesvc.Value{Type: tablesvc.Double, Num: math.NaN()}),
	}}
	got := e.mustApply("values", tablesvc.Op{Kind: tablesvc.Insert, Entity: in})
	read := e.mustGet("values", "", "ünï'cödé")
	for _, g := range []tablesvc.Entity{got, read} {
		if len(g.Props) != len(in.Props) {
			t.Fatalf("got %d properties, want %d", len(g.Props), len(in.Props))
		}
		for i, p := range in.Props {
			q := g.Props[i]
			same := reflect.DeepEqual(p, q) || p.Value.Type == tablesvc.DateTime && p.Value.Time.Equal(q.Value.Time) && p.Name == q.Name ||
				p.Name == "Nan" && q.Name == "Nan" && math.IsNaN(q.Value.Num)
			if !same {
				t.Errorf("property %d = %+v, want %+v", i, q, p)
			}
		}
	}
	if !read.Timestamp.Equal(epoch) || read.ETag() != got.ETag() {
		t.Fatalf("read Timestamp %v ETag %s; want %v and the insert's %s", read.Timestamp, read.ETag(), epoch, got.ETag())
	}
	if want := `W/"datetime'2026-11-28T06%3A36%3A14.5983078Z'"`; got.ETag() != want {
		t.Fatalf("ETag %s, want %s", got.ETag(), want)
	}
}

// testSeedRules is the seed's table, operation by operation.
func testSeedRules(e *env) {
	t := e.t
	e.mustCreate("seed")
	ins := e.mustApply("seed", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r", "A", "x")})
	_, err := e.apply("seed", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r", "A", "again")})
	wantErr(t, "Insert of an existing entity", err, tablesvc.ErrEntityExists)

	// Another writer updates: the first writer's ETag is stale.
	e.clock.Add(time.Millisecond)
	other := e.mustApply("seed", tablesvc.Op{Kind: tablesvc.Update, Entity: ent("p", "r", "A", "other"), IfMatch: ins.ETag()})
	if other.ETag() == ins.ETag() {
		t.Fatal("an update kept the ETag")
	}
	for _, kind := range []tablesvc.OpKind{tablesvc.Update, tablesvc.Merge, tablesvc.Delete} {
		_, err := e.apply("seed", tablesvc.Op{Kind: kind, Entity: ent("p", "r", "A", "stale"), IfMatch: ins.ETag()})
		wantErr(t, "stale ETag", err, tablesvc.ErrConditionNotMet)
	}
	if got := e.mustGet("seed", "p", "r"); got.Props[0].Value.Str != "other" {
		t.Fatalf("a stale write changed the entity: %+v", got)
	}
	// "*" forces the write: last writer wins.
	e.clock.Add(time.Millisecond)
	forced := e.mustApply("seed", tablesvc.Op{Kind: tablesvc.Update, Entity: ent("p", "r", "A", "forced"), IfMatch: "*"})
	if got := e.mustGet("seed", "p", "r"); got.Props[0].Value.Str != "forced" || got.ETag() != forced.ETag() {
		t.Fatalf("after If-Match *: %+v", got)
	}
	// If-Match on a missing entity: 404, whatever the value; nothing is inserted.
	for _, kind := range []tablesvc.OpKind{tablesvc.Update, tablesvc.Merge, tablesvc.Delete} {
		for _, im := range []string{"*", forced.ETag()} {
			_, err := e.apply("seed", tablesvc.Op{Kind: kind, Entity: ent("p", "missing", "A", "x"), IfMatch: im})
			wantErr(t, "If-Match on a missing entity", err, tablesvc.ErrEntityNotFound)
		}
	}
	_, err = e.svc.Get(e.ctx, "seed", "p", "missing")
	wantErr(t, "get missing", err, tablesvc.ErrEntityNotFound)
	// Upserts are unchecked: they insert, and they overwrite whatever ETag the entity has.
	for _, kind := range []tablesvc.OpKind{tablesvc.InsertOrReplace, tablesvc.InsertOrMerge} {
		e.mustApply("seed", tablesvc.Op{Kind: kind, Entity: ent("p", "up"+kind.String(), "A", "new")})
		e.mustApply("seed", tablesvc.Op{Kind: kind, Entity: ent("p", "r", "A", "upsert")})
	}
	// Delete: stale 412, current succeeds, again 404.
	cur := e.mustGet("seed", "p", "r")
	_, err = e.apply("seed", tablesvc.Op{Kind: tablesvc.Delete, Entity: ent("p", "r"), IfMatch: `W/"wrong"`})
	wantErr(t, "delete with W/\"wrong\"", err, tablesvc.ErrConditionNotMet)
	e.mustApply("seed", tablesvc.Op{Kind: tablesvc.Delete, Entity: ent("p", "r"), IfMatch: cur.ETag()})
	_, err = e.apply("seed", tablesvc.Op{Kind: tablesvc.Delete, Entity: ent("p", "r"), IfMatch: "*"})
	wantErr(t, "delete again", err, tablesvc.ErrEntityNotFound)
	// A missing table is TableNotFound for every operation.
	_, err = e.apply("nosuch", tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: ent("p", "r")})
	wantErr(t, "write to a missing table", err, tablesvc.ErrTableNotFound)
	_, err = e.svc.Get(e.ctx, "nosuch", "p", "r")
	wantErr(t, "get from a missing table", err, tablesvc.ErrTableNotFound)
	_, err = e.svc.Query(e.ctx, "nosuch", tablesvc.Query{})
	wantErr(t, "query a missing table", err, tablesvc.ErrTableNotFound)
}

func propNames(en tablesvc.Entity) string {
	var b []string
	for _, p := range en.Props {
		b = append(b, p.Name+"="+p.Value.Type.EdmName())
	}
	return strings.Join(b, ",")
}

func testReplaceAndMerge(e *env) {
	t := e.t
	e.mustCreate("merge")
	first := e.mustApply("merge", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r", "A", "a", "B", "b")})
	// Merge: named properties change (type too), others stay, new ones are appended.
	upd := ent("p", "r", "C", "c")
	upd.Props = append([]tablesvc.Property{intProp("A", 5)}, upd.Props...)
	e.clock.Add(time.Second)
	merged := e.mustApply("merge", tablesvc.Op{Kind: tablesvc.Merge, Entity: upd, IfMatch: first.ETag()})
	if got := propNames(e.mustGet("merge", "p", "r")); got != "A=Edm.Int64,B=Edm.String,C=Edm.String" || propNames(merged) != got {
		t.Fatalf("after merge: %s (returned %s)", got, propNames(merged))
	}
	// An empty merge keeps everything but bumps the ETag.
	empty := e.mustApply("merge", tablesvc.Op{Kind: tablesvc.Merge, Entity: ent("p", "r"), IfMatch: merged.ETag()})
	if empty.ETag() == merged.ETag() || propNames(empty) != propNames(merged) {
		t.Fatalf("empty merge: %s %s", empty.ETag(), propNames(empty))
	}
	// Replace writes exactly the body's properties.
	e.mustApply("merge", tablesvc.Op{Kind: tablesvc.Update, Entity: ent("p", "r", "Z", "z"), IfMatch: "*"})
	if got := propNames(e.mustGet("merge", "p", "r")); got != "Z=Edm.String" {
		t.Fatalf("after replace: %s", got)
	}
	e.mustApply("merge", tablesvc.Op{Kind: tablesvc.InsertOrMerge, Entity: ent("p", "r", "Y", "y")})
	e.mustApply("merge", tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: ent("p", "r", "X", "x")})
	if got := propNames(e.mustGet("merge", "p", "r")); got != "X=Edm.String" {
		t.Fatalf("after insert-or-merge then insert-or-replace: %s", got)
	}
	// A merge whose result exceeds the property count is refused and changes nothing.
	big := ent("p", "r")
	for i := range tablesvc.MaxUserProperties {
		big.Props = append(big.Props, intProp("P"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), int64(i)))
	}
	_, err := e.apply("merge", tablesvc.Op{Kind: tablesvc.InsertOrMerge, Entity: big})
	wantErr(t, "merge to 253 properties", err, "TooManyProperties")
	if got := propNames(e.mustGet("merge", "p", "r")); got != "X=Edm.String" {
		t.Fatalf("a refused merge changed the entity: %s", got)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func testIfMatchForms(e *env) {
	t := e.t
	e.mustCreate("etags")
	cur := e.mustApply("etags", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r")})
	colons := func(etag string) string { return strings.ReplaceAll(etag, "%3A", ":") }
	lowerHex := func(etag string) string { return strings.ReplaceAll(etag, "%3A", "%3a") }
	fixed := func(v string) func(string) string { return func(string) string { return v } }
	for _, tc := range []struct {
		ifMatch func(current string) string
		want    any
	}{
		{fixed("garbage"), "InvalidInput"},
		{fixed(`W/"a" , W/"b"`), "InvalidInput"},
		{fixed(`W/"wrong"`), tablesvc.ErrConditionNotMet},
		{fixed(`"wrong"`), tablesvc.ErrConditionNotMet},
		{fixed(`W/"datetime'2015-01-01T00%3A00%3A00.0000000Z'"`), tablesvc.ErrConditionNotMet},
		{func(c string) string { return strings.TrimPrefix(c, "W/") }, tablesvc.ErrConditionNotMet}, // a strong tag is another tag
		{colons, nil},
		{lowerHex, nil},
		{func(c string) string { return c }, nil},
	} {
		e.clock.Add(time.Second)
		im := tc.ifMatch(cur.ETag())
		got, err := e.apply("etags", tablesvc.Op{Kind: tablesvc.Merge, Entity: ent("p", "r"), IfMatch: im})
		wantErr(t, "If-Match "+im, err, tc.want)
		if err == nil {
			cur = got
		}
	}
	_, err := e.apply("etags", tablesvc.Op{Kind: tablesvc.Delete, Entity: ent("p", "r")})
	wantErr(t, "Delete without If-Match", err, "MissingRequiredHeader")
	_, err = e.apply("etags", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "s"), IfMatch: "*"})
	wantErr(t, "Insert with If-Match", err, "InvalidInput")
}

// testTimestamps: Timestamp and ETag come from the injected clock at
// 100 ns, and strictly increase per entity even when the clock stands
// still or steps back.
func testTimestamps(e *env) {
	t := e.t
	e.mustCreate("clock")
	first := e.mustApply("clock", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "r")})
	if !first.Timestamp.Equal(epoch) {
		t.Fatalf("Timestamp %v, want the clock's %v", first.Timestamp, epoch)
	}
	prev := first
	for i, step := range []time.Duration{0, 0, -time.Hour, 50 * time.Nanosecond, time.Second} {
		e.clock.Add(step)
		got := e.mustApply("clock", tablesvc.Op{Kind: tablesvc.InsertOrMerge, Entity: ent("p", "r")})
		want := e.clock.Now().Truncate(tablesvc.Tick)
		if !want.After(prev.Timestamp) {
			want = prev.Timestamp.Add(tablesvc.Tick)
		}
		if !got.Timestamp.Equal(want) || got.ETag() == prev.ETag() {
			t.Fatalf("write %d (clock %v): Timestamp %v, want %v", i, e.clock.Now(), got.Timestamp, want)
		}
		if read := e.mustGet("clock", "p", "r"); !read.Timestamp.Equal(got.Timestamp) {
			t.Fatalf("stored Timestamp %v, returned %v", read.Timestamp, got.Timestamp)
		}
		prev = got
	}
	// Another entity takes the clock's time, not the first entity's.
	other := e.mustApply("clock", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "other")})
	if !other.Timestamp.Equal(e.clock.Now().Truncate(tablesvc.Tick)) {
		t.Fatalf("new entity's Timestamp %v, want %v", other.Timestamp, e.clock.Now())
	}
}

// testValidationBeforeStore: input errors come before the table lookup
// (so they are answered even for a missing table) and store nothing.
func testValidationBeforeStore(e *env) {
	t := e.t
	e.mustCreate("valid")
	long := strings.Repeat("k", 513)
	for _, tc := range []struct {
		name string
		e    tablesvc.Entity
		code string
	}{
		{"slash in PartitionKey", ent("a/b", "r"), "OutOfRangeInput"},
		{"hash in RowKey", ent("p", "#"), "OutOfRangeInput"},
		{"tab in key", ent("p\t", "r"), "OutOfRangeInput"},
		{"513-character key", ent(long, "r"), "PropertyValueTooLarge"},
		{"dashed name", ent("p", "r", "a-b", "x"), "PropertyNameInvalid"},
		{"256-character name", ent("p", "r", strings.Repeat("n", 256), "x"), "PropertyNameTooLong"},
		{"duplicate name", ent("p", "r", "A", "x", "A", "y"), "DuplicatePropertiesSpecified"},
		{"32769-unit string", ent("p", "r", "A", strings.Repeat("s", 32769)), "PropertyValueTooLarge"},
	} {
		for _, table := range []string{"valid", "missing"} {
			_, err := e.apply(table, tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: tc.e})
			wantErr(t, tc.name+" in "+table, err, tc.code)
		}
	}
	if p, err := e.svc.Query(e.ctx, "valid", tablesvc.Query{}); err != nil || len(p.Entities) != 0 {
		t.Fatalf("refused writes stored %d entities (%v)", len(p.Entities), err)
	}
}
