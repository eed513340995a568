// Package storetest is the conformance suite of tablesvc.Store: every
// store (sqlstore, pgstore) runs Run, and RunShared when two Store values
// can open one database (two processes, or two gateways). The suite drives the Store through tablesvc.Service, so it
// checks what clients see — the seed's concurrency rules, batch
// atomicity, query order and continuation — on that store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/tablesvc"
)

// Clock is a settable clock for Timestamps and ETags.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock (backwards too).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// epoch is the suite's starting time: 7 fractional digits in use.
var epoch = time.Date(2026, 11, 28, 6, 36, 14, 598307800, time.UTC)

// env is one test's service over a fresh store, with its clock.
type env struct {
	t     *testing.T
	ctx   context.Context
	svc   *tablesvc.Service
	store tablesvc.Store
	clock *Clock
}

func newEnv(t *testing.T, open func(t *testing.T) tablesvc.Store) *env {
	st := open(t)
	c := NewClock(epoch)
	return &env{t: t, ctx: context.Background(), svc: tablesvc.New(st, c.Now), store: st, clock: c}
}

// Run runs the conformance suite; open returns an empty store that the
// test owns (open closes it with t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) tablesvc.Store) {
	for _, tc := range []struct {
		name string
		f    func(*env)
	}{
		{"Tables", testTables},
		{"ACLAndServiceProperties", testACLAndServiceProperties},
		{"ValuesRoundTrip", testValuesRoundTrip},
		{"SeedConcurrencyRules", testSeedRules},
		{"ReplaceAndMerge", testReplaceAndMerge},
		{"IfMatchForms", testIfMatchForms},
		{"TimestampsOnInjectedClock", testTimestamps},
		{"ValidationBeforeStore", testValidationBeforeStore},
		{"BatchAtomicity", testBatchAtomicity},
		{"BatchValidation", testBatchValidation},
		{"QueryOrderAndContinuation", testQueryContinuation},
		{"QueryFilterPushdown", testQueryPushdown},
		{"QueryScanBudget", testQueryScanBudget},
		{"QueryScanBytes", testQueryScanBytes},
		{"ScanRanges", testScanRanges},
		{"QueryTables", testQueryTables},
		{"DeleteTableRemovesEntities", testDeleteTableRemovesEntities},
		{"Contention", func(e *env) { contention(e.t, e.svc, e.svc) }},
		{"BatchesRacingSingleWrites", testBatchRacingWrites},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(newEnv(t, open)) })
	}
}

// RunShared runs the cross-instance tests: open returns two Stores on one
// database (two processes' view of it); the services over them race.
func RunShared(t *testing.T, open func(t *testing.T) (a, b tablesvc.Store)) {
	t.Run("ContentionAcrossStores", func(t *testing.T) {
		a, b := open(t)
		contention(t, tablesvc.New(a, nil), tablesvc.New(b, nil))
	})
	t.Run("OneWinnerAcrossStores", func(t *testing.T) {
		a, b := open(t)
		oneWinner(t, tablesvc.New(a, nil), tablesvc.New(b, nil))
	})
}

// helpers

func (e *env) mustCreate(name string) {
	e.t.Helper()
	if _, err := e.svc.CreateTable(e.ctx, name); err != nil {
		e.t.Fatalf("create table %s: %v", name, err)
	}
}

func (e *env) apply(table string, op tablesvc.Op) (tablesvc.Entity, error) {
	return e.svc.Apply(e.ctx, table, op)
}

func (e *env) mustApply(table string, op tablesvc.Op) tablesvc.Entity {
	e.t.Helper()
	got, err := e.apply(table, op)
	if err != nil {
		e.t.Fatalf("apply %v to %s/%s: %v", op.Kind, op.Entity.PartitionKey, op.Entity.RowKey, err)
	}
	return got
}

func (e *env) mustGet(table, pk, rk string) tablesvc.Entity {
	e.t.Helper()
	got, err := e.svc.Get(e.ctx, table, pk, rk)
	if err != nil {
		e.t.Fatalf("get %s/%s/%s: %v", table, pk, rk, err)
	}
	return got
}

// ent builds an entity with string properties name=value pairs.
func ent(pk, rk string, kv ...string) tablesvc.Entity {
	e := tablesvc.Entity{PartitionKey: pk, RowKey: rk}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Props = append(e.Props, tablesvc.Property{Name: kv[i], Value: tablesvc.Value{Type: tablesvc.String, Str: kv[i+1]}})
	}
	return e
}

func intProp(name string, v int64) tablesvc.Property {
	return tablesvc.Property{Name: name, Value: tablesvc.Value{Type: tablesvc.Int64, Int: v}}
}

// wantErr fails unless err matches want (a sentinel, or an *InputError
// code given as a string).
func wantErr(t *testing.T, what string, err error, want any) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		if err != nil {
			t.Fatalf("%s: %v, want success", what, err)
		}
	case error:
		if !errors.Is(err, w) {
			t.Fatalf("%s: %v, want %v", what, err, w)
		}
	case string:
		var ie *tablesvc.InputError
		if !errors.As(err, &ie) || ie.Code != w {
			t.Fatalf("%s: %v, want InputError %s", what, err, w)
		}
	default:
		panic(fmt.Sprintf("wantErr: %T", want))
	}
}

func testTables(e *env) {
	t := e.t
	e.mustCreate("MyTable")
	_, err := e.svc.CreateTable(e.ctx, "mytable")
	wantErr(t, "create mytable after MyTable", err, tablesvc.ErrTableExists)
	got, err := e.svc.Table(e.ctx, "MYTABLE")
	if err != nil || got.Name != "MyTable" {
		t.Fatalf("Table(MYTABLE) = %+v, %v; want MyTable as created", got, err)
	}
	_, err = e.svc.Table(e.ctx, "other")
	wantErr(t, "missing table", err, tablesvc.ErrTableNotFound)
	for _, bad := range []struct{ name, code string }{{"ab", "OutOfRangeInput"}, {"1abc", "InvalidResourceName"}, {"a-bc", "InvalidResourceName"}} {
		_, err := e.svc.CreateTable(e.ctx, bad.name)
		wantErr(t, "create "+bad.name, err, bad.code)
	}
	wantErr(t, "delete mYtAbLe", e.svc.DeleteTable(e.ctx, "mYtAbLe"), nil)
	wantErr(t, "delete again", e.svc.DeleteTable(e.ctx, "MyTable"), tablesvc.ErrTableNotFound)
	e.mustCreate("mytable") // the name is free at once (as Azurite; Azure's TableBeingDeleted is not emulated)
	got, _ = e.svc.Table(e.ctx, "MyTable")
	if got.Name != "mytable" {
		t.Fatalf("recreated table is %q, want mytable", got.Name)
	}
}

func testACLAndServiceProperties(e *env) {
	t := e.t
	e.mustCreate("acls")
	ids, err := e.svc.ACL(e.ctx, "acls")
	if err != nil || len(ids) != 0 {
		t.Fatalf("new table's ACL = %v, %v; want empty", ids, err)
	}
	want := []tablesvc.SignedIdentifier{{ID: "p1", Start: "2026-01-01T00:00:00Z", Expiry: "2027-01-01T00:00:00.0000000Z", Permission: "raud"}, {ID: "p2", Permission: "r"}}
	wantErr(t, "set acl", e.svc.SetACL(e.ctx, "ACLS", want), nil)
	ids, err = e.svc.ACL(e.ctx, "acls")
	if err != nil || fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ACL = %v, %v; want %v", ids, err, want)
	}
	six := make([]tablesvc.SignedIdentifier, 6)
	for i := range six {
		six[i] = tablesvc.SignedIdentifier{ID: fmt.Sprint("id", i), Permission: "r"}
	}
	wantErr(t, "six policies", e.svc.SetACL(e.ctx, "acls", six), "InvalidXmlDocument")
	wantErr(t, "permission w", e.svc.SetACL(e.ctx, "acls", []tablesvc.SignedIdentifier{{ID: "x", Permission: "rw"}}), "InvalidXmlDocument")
	wantErr(t, "acl of missing", e.svc.SetACL(e.ctx, "nothere", nil), tablesvc.ErrTableNotFound)
	_, err = e.svc.ACL(e.ctx, "nothere")
	wantErr(t, "get acl of missing", err, tablesvc.ErrTableNotFound)
	wantErr(t, "clear acl", e.svc.SetACL(e.ctx, "acls", nil), nil)
	if ids, _ := e.svc.ACL(e.ctx, "acls"); len(ids) != 0 {
		t.Fatalf("cleared ACL = %v", ids)
	}

	doc, err := e.svc.ServiceProperties(e.ctx)
	if err != nil || doc != nil {
		t.Fatalf("service properties before any set = %q, %v; want nil", doc, err)
	}
	for _, d := range []string{"<StorageServiceProperties>1</StorageServiceProperties>", "<StorageServiceProperties>2</StorageServiceProperties>"} {
		wantErr(t, "set service properties", e.svc.SetServiceProperties(e.ctx, []byte(d)), nil)
		if got, err := e.svc.ServiceProperties(e.ctx); err != nil || string(got) != d {
			t.Fatalf("service properties = %q, %v; want %q", got, err, d)
		}
	}
}
