package storetest

import (
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/tablesvc"
)

// wantBatchErr fails unless err is a *BatchError at index wrapping want.
func wantBatchErr(e *env, what string, err error, index int, want any) {
	e.t.Helper()
	var be *tablesvc.BatchError
	if !errors.As(err, &be) || be.Index != index {
		e.t.Fatalf("%s: %v, want a BatchError at %d", what, err, index)
	}
	wantErr(e.t, what, be.Err, want)
}

// count is the number of entities in the table (walking every page).
func (e *env) count(table string) int {
	e.t.Helper()
	return len(e.all(table, ""))
}

func (e *env) all(table, filter string) []tablesvc.Entity {
	e.t.Helper()
	var out []tablesvc.Entity
	q := tablesvc.Query{Filter: filter}
	for {
		p, err := e.svc.Query(e.ctx, table, q)
		if err != nil {
			e.t.Fatalf("query %s %q: %v", table, filter, err)
		}
		out = append(out, p.Entities...)
		if !p.More {
			return out
		}
		q.NextPK, q.NextRK, q.HasNext = p.NextPK, p.NextRK, true
	}
}

func testBatchAtomicity(e *env) {
	t := e.t
	e.mustCreate("batch")
	old := e.mustApply("batch", tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", "c", "V", "old")})
	e.clock.Add(1)
	cur := e.mustApply("batch", tablesvc.Op{Kind: tablesvc.Merge, Entity: ent("p", "c"), IfMatch: "*"})
	for _, tc := range []struct {
		name  string
		ops   []tablesvc.Op
		index int
		want  error
	}{
		{"insert of an existing entity", []tablesvc.Op{
			{Kind: tablesvc.Insert, Entity: ent("p", "a")},
			{Kind: tablesvc.InsertOrReplace, Entity: ent("p", "b")},
			{Kind: tablesvc.Insert, Entity: ent("p", "c")},
		}, 2, tablesvc.ErrEntityExists},
		{"stale ETag", []tablesvc.Op{
			{Kind: tablesvc.Insert, Entity: ent("p", "a")},
			{Kind: tablesvc.Update, Entity: ent("p", "c", "V", "new"), IfMatch: old.ETag()},
		}, 1, tablesvc.ErrConditionNotMet},
		{"missing entity", []tablesvc.Op{
			{Kind: tablesvc.Merge, Entity: ent("p", "c", "V", "new"), IfMatch: cur.ETag()},
			{Kind: tablesvc.Delete, Entity: ent("p", "zz"), IfMatch: "*"},
		}, 1, tablesvc.ErrEntityNotFound},
	} {
		_, err := e.svc.Batch(e.ctx, "batch", tc.ops)
		wantBatchErr(e, tc.name, err, tc.index, tc.want)
		all := e.all("batch", "")
		if len(all) != 1 || all[0].ETag() != cur.ETag() || all[0].Props[0].Value.Str != "old" {
			t.Fatalf("%s: a failed batch left %+v", tc.name, all)
		}
	}
	_, err := e.svc.Batch(e.ctx, "nosuch", []tablesvc.Op{{Kind: tablesvc.Insert, Entity: ent("p", "a")}})
	wantBatchErr(e, "missing table", err, 0, tablesvc.ErrTableNotFound)

	// A good batch applies every kind of op, in order, with results in op order.
	e.clock.Add(1000)
	res, err := e.svc.Batch(e.ctx, "batch", []tablesvc.Op{
		{Kind: tablesvc.Insert, Entity: ent("p", "a", "V", "1")},
		{Kind: tablesvc.InsertOrMerge, Entity: ent("p", "b", "V", "2")},
		{Kind: tablesvc.Update, Entity: ent("p", "c", "V", "3"), IfMatch: cur.ETag()},
		{Kind: tablesvc.InsertOrReplace, Entity: ent("p", "d", "V", "4")},
	})
	if err != nil || len(res) != 4 {
		t.Fatalf("batch: %v, %d results", err, len(res))
	}
	for i, en := range e.all("batch", "") {
		if want := fmt.Sprint(i + 1); en.Props[0].Value.Str != want || res[i].ETag() != en.ETag() || en.RowKey != res[i].RowKey {
			t.Fatalf("entity %d after batch: %+v, result %+v", i, en, res[i])
		}
	}
	res, err = e.svc.Batch(e.ctx, "batch", []tablesvc.Op{
		{Kind: tablesvc.Delete, Entity: ent("p", "a"), IfMatch: res[0].ETag()},
		{Kind: tablesvc.Delete, Entity: ent("p", "b"), IfMatch: "*"},
	})
	if err != nil || len(res) != 2 || res[0].RowKey != "a" || e.count("batch") != 2 {
		t.Fatalf("delete batch: %v, %+v, %d left", err, res, e.count("batch"))
	}
}

func testBatchValidation(e *env) {
	e.mustCreate("batchv")
	ops := func(n int) []tablesvc.Op {
		var o []tablesvc.Op
		for i := range n {
			o = append(o, tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", fmt.Sprint("r", i))})
		}
		return o
	}
	twoParts := ops(3)
	twoParts[1].Entity.PartitionKey = "q"
	dup := ops(4)
	dup[3].Entity.RowKey = "r1"
	badKey := ops(3)
	badKey[2].Entity.RowKey = "a?b"
	badETag := ops(2)
	badETag[1] = tablesvc.Op{Kind: tablesvc.Delete, Entity: ent("p", "x"), IfMatch: "garbage"}
	for _, tc := range []struct {
		name  string
		ops   []tablesvc.Op
		index int
		code  string
	}{
		{"101 operations", ops(101), 0, "InvalidInput"},
		{"two partitions", twoParts, 1, "CommandsInBatchActOnDifferentPartitions"},
		{"a row twice", dup, 3, "InvalidDuplicateRow"},
		{"bad key", badKey, 2, "OutOfRangeInput"},
		{"bad ETag", badETag, 1, "InvalidInput"},
	} {
		for _, table := range []string{"batchv", "missing"} { // validation precedes the table lookup
			_, err := e.svc.Batch(e.ctx, table, tc.ops)
			wantBatchErr(e, tc.name+" on "+table, err, tc.index, tc.code)
		}
		if n := e.count("batchv"); n != 0 {
			e.t.Fatalf("%s: %d entities stored", tc.name, n)
		}
	}
	if res, err := e.svc.Batch(e.ctx, "batchv", ops(100)); err != nil || len(res) != 100 || e.count("batchv") != 100 {
		e.t.Fatalf("100 operations: %v, %d results", err, len(res))
	}
}
