package storetest

import (
	"fmt"
	"math/rand/v2"

	"github.com/blobshare/blobshare/tablesvc"
)

// testScanRanges: Store.Scan returns exactly the entities inside the
// range (KeyRange.Contains), in key order, for seeded random ranges
// mixing PartitionKey and RowKey bounds of every kind, single-partition
// ranges, and continuations before, inside and after them.
func testScanRanges(e *env) {
	t := e.t
	e.mustCreate("ranges")
	all := e.fill("ranges", 300) // PartitionKeys p00..p06, RowKeys r00000..r00299
	rng := rand.New(rand.NewPCG(28, 11))
	pkVal := func() string { return fmt.Sprintf("p%02d", rng.IntN(8)) + []string{"", "", "a"}[rng.IntN(3)] }
	rkVal := func() string { return fmt.Sprintf("r%05d", rng.IntN(310)) + []string{"", "", "x"}[rng.IntN(3)] }
	bound := func(v func() string) tablesvc.Bound {
		if rng.IntN(3) == 0 {
			return tablesvc.Bound{}
		}
		return tablesvc.Bound{Set: true, Value: v(), Inclusive: rng.IntN(2) == 0}
	}
	for i := range 400 {
		r := tablesvc.KeyRange{PKLow: bound(pkVal), PKHigh: bound(pkVal), RKLow: bound(rkVal), RKHigh: bound(rkVal)}
		if rng.IntN(3) == 0 { // one partition
			p := pkVal()
			r.PKLow = tablesvc.Bound{Set: true, Value: p, Inclusive: true}
			r.PKHigh = r.PKLow
		}
		if rng.IntN(2) == 0 {
			r.After = &tablesvc.Key{PK: pkVal(), RK: rkVal()}
		}
		var want []tablesvc.Entity
		for _, en := range all {
			if r.Contains(en.PartitionKey, en.RowKey) {
				want = append(want, en)
			}
		}
		var got []tablesvc.Entity
		if err := e.store.Scan(e.ctx, "ranges", r, func(en tablesvc.Entity) bool { got = append(got, en); return true }); err != nil {
			t.Fatal(err)
		}
		if keys(got) != keys(want) {
			after := "none"
			if r.After != nil {
				after = fmt.Sprint(*r.After)
			}
			t.Fatalf("range %d %+v after %s: %d entities, want %d", i, r, after, len(got), len(want))
		}
	}
	// yield's false stops the scan at once.
	n := 0
	if err := e.store.Scan(e.ctx, "ranges", tablesvc.KeyRange{}, func(tablesvc.Entity) bool { n++; return n < 5 }); err != nil || n != 5 {
		t.Fatalf("stopped scan: %d rows, %v", n, err)
	}
	err := e.store.Scan(e.ctx, "nosuch", tablesvc.KeyRange{}, func(tablesvc.Entity) bool { return true })
	wantErr(t, "scan of a missing table", err, tablesvc.ErrTableNotFound)
}
