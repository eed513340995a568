package tablesvc

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// touchStore fails the test on any store access: the calls that must be
// decided before the store is reached use it.
type touchStore struct {
	Store
	t *testing.T
}

func (s touchStore) touched(what string) {
	s.t.Helper()
	s.t.Fatalf("the store was reached (%s)", what)
}
func (s touchStore) CreateTable(context.Context, string) error {
	s.touched("CreateTable")
	return nil
}
func (s touchStore) DeleteTable(context.Context, string) error {
	s.touched("DeleteTable")
	return nil
}
func (s touchStore) Table(context.Context, string) (Table, error) {
	s.touched("Table")
	return Table{}, nil
}
func (s touchStore) ScanTables(context.Context, string, func(Table) bool) error {
	s.touched("ScanTables")
	return nil
}
func (s touchStore) SetACL(context.Context, string, []SignedIdentifier) error {
	s.touched("SetACL")
	return nil
}
func (s touchStore) Get(context.Context, string, string, string) (Entity, error) {
	s.touched("Get")
	return Entity{}, nil
}
func (s touchStore) Scan(context.Context, string, KeyRange, func(Entity) bool) error {
	s.touched("Scan")
	return nil
}
func (s touchStore) Write(context.Context, string, func(Tx) error) error {
	s.touched("Write")
	return nil
}

// TestInputErrorsBeforeStore: every refusal of input happens before any
// store access.
func TestInputErrorsBeforeStore(t *testing.T) {
	ctx := context.Background()
	svc := New(touchStore{t: t}, nil)
	e := Entity{PartitionKey: "p", RowKey: "r"}
	bad := Entity{PartitionKey: "p", RowKey: "r", Props: []Property{{Name: "a-b"}}}
	for _, tc := range []struct {
		name string
		call func() error
		code string
	}{
		{"create bad name", func() error { _, err := svc.CreateTable(ctx, "a"); return err }, "OutOfRangeInput"},
		{"delete bad name", func() error { return svc.DeleteTable(ctx, "a_b") }, "InvalidResourceName"},
		{"get bad name", func() error { _, err := svc.Get(ctx, "tables", "p", "r"); return err }, "InvalidInput"},
		{"apply bad name", func() error { _, err := svc.Apply(ctx, "9abc", Op{Kind: Insert, Entity: e}); return err }, "InvalidResourceName"},
		{"apply bad property", func() error { _, err := svc.Apply(ctx, "abc", Op{Kind: InsertOrMerge, Entity: bad}); return err }, "PropertyNameInvalid"},
		{"apply bad If-Match", func() error { _, err := svc.Apply(ctx, "abc", Op{Kind: Update, Entity: e, IfMatch: "x"}); return err }, "InvalidInput"},
		{"apply unknown kind", func() error { _, err := svc.Apply(ctx, "abc", Op{Kind: 42, Entity: e}); return err }, "InvalidInput"},
		{"delete without If-Match", func() error { _, err := svc.Apply(ctx, "abc", Op{Kind: Delete, Entity: e}); return err }, "MissingRequiredHeader"},
		{"batch bad op", func() error {
			_, err := svc.Batch(ctx, "abc", []Op{{Kind: Insert, Entity: e}, {Kind: Insert, Entity: bad}})
			return err
		}, "PropertyNameInvalid"},
		{"query bad filter", func() error { _, err := svc.Query(ctx, "abc", Query{Filter: "N eq"}); return err }, "InvalidInput"},
		{"query bad top", func() error { _, err := svc.Query(ctx, "abc", Query{Top: -5}); return err }, "InvalidInput"},
		{"tables bad filter", func() error { _, _, err := svc.QueryTables(ctx, "TableName eq 'x", 0, ""); return err }, "InvalidInput"},
		{"acl six", func() error { return svc.SetACL(ctx, "abc", make([]SignedIdentifier, 6)) }, "InvalidXmlDocument"},
		{"acl long id", func() error {
			return svc.SetACL(ctx, "abc", []SignedIdentifier{{ID: strings.Repeat("i", 65)}})
		}, "InvalidXmlDocument"},
	} {
		if got := code(tc.call()); got != tc.code {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.code)
		}
	}
	var be *BatchError
	_, err := svc.Batch(ctx, "abc", []Op{{Kind: Insert, Entity: e}, {Kind: Insert, Entity: bad}})
	if !errors.As(err, &be) || be.Index != 1 {
		t.Fatalf("batch error %v, want index 1", err)
	}
}

// failStore's writes fail: the error reaches the caller unchanged, and a
// batch reports it at index 0.
type failStore struct{ Store }

var errDisk = errors.New("disk on fire")

func (failStore) Write(context.Context, string, func(Tx) error) error { return errDisk }

func TestStoreErrorsPassThrough(t *testing.T) {
	ctx := context.Background()
	svc := New(failStore{}, nil)
	e := Entity{PartitionKey: "p", RowKey: "r"}
	if _, err := svc.Apply(ctx, "abc", Op{Kind: Insert, Entity: e}); !errors.Is(err, errDisk) {
		t.Fatalf("apply: %v", err)
	}
	_, err := svc.Batch(ctx, "abc", []Op{{Kind: Insert, Entity: e}})
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 0 || !errors.Is(err, errDisk) {
		t.Fatalf("batch: %v", err)
	}
}

func TestMergeProps(t *testing.T) {
	s := func(v string) Value { return Value{Type: String, Str: v} }
	old := []Property{{"A", s("1")}, {"B", s("2")}}
	got := mergeProps(old, []Property{{"B", Value{Type: Int32, Int: 3}}, {"C", s("4")}})
	if len(got) != 3 || got[0].Name != "A" || got[1].Value.Type != Int32 || got[2].Name != "C" {
		t.Fatalf("merge = %+v", got)
	}
	if old[1].Value.Type != String {
		t.Fatal("merge changed its input")
	}
}

func TestSystemPropsIgnored(t *testing.T) {
	s := func(n string) Property { return Property{Name: n, Value: Value{Type: String, Str: n}} }
	in := []Property{s("Timestamp"), s("A"), s("PartitionKey"), s("B"), s("RowKey")}
	c, err := validateOp(Op{Kind: InsertOrReplace, Entity: Entity{PartitionKey: "p", RowKey: "r", Props: in}})
	if err != nil || len(c.Entity.Props) != 2 || c.Entity.Props[0].Name != "A" || c.Entity.Props[1].Name != "B" {
		t.Fatalf("validateOp kept %+v, %v", c.Entity.Props, err)
	}
	if in[0].Name != "Timestamp" || len(in) != 5 {
		t.Fatal("validateOp changed the caller's slice")
	}
}
