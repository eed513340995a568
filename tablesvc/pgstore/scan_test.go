package pgstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

// TestScanIsOneSnapshot: a Scan over 2,000 entities (many cursor
// fetches) that another gateway rewrites with one batch after the scan's
// first row sees every entity as it was when the scan began; a scan
// stopped after ten rows returns at once; a scan begun afterwards sees
// the batch whole.
func TestScanIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	a, b := open(t, conn), open(t, conn)
	svcA, svcB := tablesvc.New(a, nil), tablesvc.New(b, nil)
	if _, err := svcA.CreateTable(ctx, "snap"); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	write := func(svc *tablesvc.Service, from, to int, v string) {
		t.Helper()
		for lo := from; lo < to; lo += tablesvc.MaxBatchOps {
			var ops []tablesvc.Op
			for i := lo; i < min(lo+tablesvc.MaxBatchOps, to); i++ {
				e := tablesvc.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i), Props: []tablesvc.Property{strProp("v", v)}}
				ops = append(ops, tablesvc.Op{Kind: tablesvc.InsertOrReplace, Entity: e})
			}
			if _, err := svc.Batch(ctx, "snap", ops); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(svcA, 0, n, "old")
	seen, old := 0, 0
	var prev string
	err := a.Scan(ctx, "snap", tablesvc.KeyRange{}, func(e tablesvc.Entity) bool {
		if seen == 0 {
			write(svcB, n-tablesvc.MaxBatchOps, n, "new") // commits while the scan runs
		}
		if e.RowKey <= prev {
			t.Fatalf("row %s after %s", e.RowKey, prev)
		}
		prev = e.RowKey
		seen++
		if v, _ := e.Prop("v"); v.Str == "old" {
			old++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != n || old != n {
		t.Fatalf("scan saw %d entities, %d of them as they were at its start; want %d and %d", seen, old, n, n)
	}
	stopped := 0
	if err := a.Scan(ctx, "snap", tablesvc.KeyRange{}, func(tablesvc.Entity) bool { stopped++; return stopped < 10 }); err != nil || stopped != 10 {
		t.Fatalf("stopped scan: %d rows, %v", stopped, err)
	}
	newer := 0
	if err := a.Scan(ctx, "snap", tablesvc.KeyRange{}, func(e tablesvc.Entity) bool {
		if v, _ := e.Prop("v"); v.Str == "new" {
			newer++
		}
		return true
	}); err != nil || newer != tablesvc.MaxBatchOps {
		t.Fatalf("a later scan sees %d rewritten entities, %v; want %d", newer, err, tablesvc.MaxBatchOps)
	}
}
