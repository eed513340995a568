package storetest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blobshare/blobshare/tablesvc"
)

// fill inserts n entities over a few partitions with batches, with
// properties N (Int32 = i), L (Int64 = i*1e10), S (String), Even (Boolean);
// it returns them in key order.
func (e *env) fill(table string, n int) []tablesvc.Entity {
	e.t.Helper()
	var all []tablesvc.Entity
	byPK := map[string][]tablesvc.Op{}
	for i := range n {
		en := tablesvc.Entity{PartitionKey: fmt.Sprintf("p%02d", i%7), RowKey: fmt.Sprintf("r%05d", i), Props: []tablesvc.Property{
			{Name: "N", Value: tablesvc.Value{Type: tablesvc.Int32, Int: int64(i)}},
			{Name: "L", Value: tablesvc.Value{Type: tablesvc.Int64, Int: int64(i) * 1e10}},
			{Name: "S", Value: tablesvc.Value{Type: tablesvc.String, Str: fmt.Sprint("s", i%10)}},
			{Name: "Even", Value: tablesvc.Value{Type: tablesvc.Boolean, Bool: i%2 == 0}},
		}}
		all = append(all, en)
		ops := append(byPK[en.PartitionKey], tablesvc.Op{Kind: tablesvc.Insert, Entity: en})
		if len(ops) == tablesvc.MaxBatchOps {
			if _, err := e.svc.Batch(e.ctx, table, ops); err != nil {
				e.t.Fatal(err)
			}
			ops = nil
		}
		byPK[en.PartitionKey] = ops
	}
	for _, ops := range byPK {
		if len(ops) > 0 {
			if _, err := e.svc.Batch(e.ctx, table, ops); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	slices.SortFunc(all, func(a, b tablesvc.Entity) int {
		return strings.Compare(a.PartitionKey+"\x00"+a.RowKey, b.PartitionKey+"\x00"+b.RowKey)
	})
	stored := e.all(table, "")
	if keys(stored) != keys(all) {
		e.t.Fatalf("stored %d entities, want %d in key order", len(stored), len(all))
	}
	return stored // with their Timestamps
}

func keys(es []tablesvc.Entity) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.PartitionKey + "/" + e.RowKey + " ")
	}
	return b.String()
}

func testQueryContinuation(e *env) {
	t := e.t
	e.mustCreate("pages")
	all := e.fill("pages", 1234)
	for _, top := range []int{5, 1000, 0, 5000} {
		var got []tablesvc.Entity
		q := tablesvc.Query{Top: top}
		pages := 0
		for {
			p, err := e.svc.Query(e.ctx, "pages", q)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			limit := min(max(top, 1), 1000)
			if top == 0 {
				limit = 1000
			}
			if len(p.Entities) > limit {
				t.Fatalf("top %d: a page of %d", top, len(p.Entities))
			}
			got = append(got, p.Entities...)
			if !p.More {
				break
			}
			q.NextPK, q.NextRK, q.HasNext = p.NextPK, p.NextRK, true
			if pages > 3000 {
				t.Fatal("no end")
			}
		}
		if keys(got) != keys(all) {
			t.Fatalf("top %d: walked %d entities, want %d in key order", top, len(got), len(all))
		}
		if top == 1000 && pages != 2 {
			t.Fatalf("top 1000 over 1234 entities took %d pages, want 2 (no trailing empty page)", pages)
		}
	}
	_, err := e.svc.Query(e.ctx, "pages", tablesvc.Query{Top: -1})
	wantErr(t, "top -1", err, "InvalidInput")
	_, err = e.svc.Query(e.ctx, "pages", tablesvc.Query{Filter: "N eq"})
	wantErr(t, "bad filter", err, "InvalidInput")
}

// testQueryPushdown: whatever the key bounds taken from the filter, the
// walked result is the full table filtered row by row.
func testQueryPushdown(e *env) {
	t := e.t
	e.mustCreate("push")
	all := e.fill("push", 700)
	filters := []string{
		"PartitionKey eq 'p03'",
		"PartitionKey eq 'p03' and RowKey ge 'r00100' and RowKey lt 'r00300'",
		"PartitionKey ge 'p02' and PartitionKey le 'p04' and N lt 200",
		"PartitionKey gt 'p02' and PartitionKey lt 'p02'",
		"PartitionKey eq 'p01' and PartitionKey eq 'p02'",
		"'p05' le PartitionKey and RowKey gt 'r00650'",
		"PartitionKey eq 'p03' or PartitionKey eq 'p05'",
		"not (PartitionKey ne 'p04') and Even",
		"PartitionKey eq 3",
		"RowKey lt 'r00050' and L ge 200000000000L",
		"(PartitionKey eq 'p06' and RowKey le 'r00013') or N eq 699",
		"S eq 's3' and N gt 600",
		"PartitionKey ne 'p00' and PartitionKey lt 'p02'",
		"Timestamp ge datetime'2000-01-01T00:00:00Z'",
		"",
	}
	for _, f := range filters {
		pf, err := tablesvc.ParseFilter(f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		var want []tablesvc.Entity
		for i := range all {
			if pf.MatchEntity(&all[i]) {
				want = append(want, all[i])
			}
		}
		for _, budget := range []int{tablesvc.DefaultScanBudget, 13} {
			svc := e.svc.WithScanBudget(budget)
			var got []tablesvc.Entity
			q := tablesvc.Query{Filter: f, Top: 50}
			for {
				p, err := svc.Query(e.ctx, "push", q)
				if err != nil {
					t.Fatalf("%q: %v", f, err)
				}
				got = append(got, p.Entities...)
				if !p.More {
					break
				}
				q.NextPK, q.NextRK, q.HasNext = p.NextPK, p.NextRK, true
			}
			if keys(got) != keys(want) {
				t.Fatalf("filter %q, budget %d: %d entities, want %d", f, budget, len(got), len(want))
			}
		}
	}
	// Spot checks independent of the evaluator under test.
	for _, tc := range []struct {
		filter string
		n      int
	}{{"PartitionKey eq 'p03'", 100}, {"N ge 10 and N lt 20", 10}, {"L eq 50000000000L", 1}, {"L eq 5", 0}, {"N eq '3'", 0}, {"Even eq true", 350}, {"not Even", 350}} {
		if got := len(e.all("push", tc.filter)); got != tc.n {
			t.Errorf("%q matched %d, want %d", tc.filter, got, tc.n)
		}
	}
}

// testQueryScanBudget: a filter that matches nothing answers pages of no
// entities with a continuation after reading the budget, and the walk
// still ends with the right answer.
func testQueryScanBudget(e *env) {
	t := e.t
	e.mustCreate("budget")
	all := e.fill("budget", 500)
	svc := e.svc.WithScanBudget(100)
	q := tablesvc.Query{Filter: "N eq 499"}
	var found []tablesvc.Entity
	pages := 0
	for {
		p, err := svc.Query(e.ctx, "budget", q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		found = append(found, p.Entities...)
		if !p.More {
			break
		}
		if p.NextPK != all[pages*100].PartitionKey || p.NextRK != all[pages*100].RowKey {
			t.Fatalf("page %d continues at %s/%s, want the 101st row %s/%s", pages, p.NextPK, p.NextRK, all[pages*100].PartitionKey, all[pages*100].RowKey)
		}
		q.NextPK, q.NextRK, q.HasNext = p.NextPK, p.NextRK, true
	}
	if pages != 5 || len(found) != 1 || found[0].Props[0].Value.Int != 499 {
		t.Fatalf("%d pages, found %+v", pages, found)
	}
}

// testQueryScanBytes: pages of large entities end by bytes read, each
// page taking at least one row, and the walk still sees every entity.
func testQueryScanBytes(e *env) {
	t := e.t
	e.mustCreate("bytes")
	var ops []tablesvc.Op
	for i := range 40 {
		ops = append(ops, tablesvc.Op{Kind: tablesvc.Insert, Entity: ent("p", fmt.Sprintf("r%02d", i), "S", strings.Repeat("x", 1000))})
	}
	if _, err := e.svc.Batch(e.ctx, "bytes", ops); err != nil {
		t.Fatal(err)
	}
	size := tablesvc.EntitySize(ops[0].Entity) // 2,026 bytes by DM's formula
	for _, tc := range []struct{ budget, perPage int }{{10 * size, 10}, {10*size + 1, 11}, {1, 1}} {
		svc := e.svc.WithScanBytes(tc.budget)
		q, pages, seen := tablesvc.Query{}, 0, 0
		for {
			p, err := svc.Query(e.ctx, "bytes", q)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			seen += len(p.Entities)
			if p.More && len(p.Entities) != tc.perPage {
				t.Fatalf("budget %d: a page of %d entities, want %d", tc.budget, len(p.Entities), tc.perPage)
			}
			if !p.More {
				break
			}
			q = tablesvc.Query{NextPK: p.NextPK, NextRK: p.NextRK, HasNext: true}
		}
		if seen != 40 || pages != (40+tc.perPage-1)/tc.perPage {
			t.Fatalf("budget %d: %d entities in %d pages", tc.budget, seen, pages)
		}
	}
}

func testQueryTables(e *env) {
	t := e.t
	names := []string{"Bravo", "alpha", "bzzz", "Charlie", "ba1", "delta"}
	for _, n := range names {
		e.mustCreate(n)
	}
	walk := func(svc *tablesvc.Service, filter string, top int) []string {
		var out []string
		next := ""
		for range 20 {
			ts, nn, err := svc.QueryTables(e.ctx, filter, top, next)
			if err != nil {
				t.Fatalf("query tables %q: %v", filter, err)
			}
			for _, x := range ts {
				out = append(out, x.Name)
			}
			if nn == "" {
				return out
			}
			next = nn
		}
		t.Fatal("no end")
		return nil
	}
	for _, tc := range []struct {
		filter string
		top    int
		want   string
	}{
		{"", 0, "alpha ba1 Bravo bzzz Charlie delta"},
		{"", 1, "alpha ba1 Bravo bzzz Charlie delta"},
		{"TableName ge 'b' and TableName lt 'c'", 2, "ba1 bzzz"},
		{"TableName eq 'Bravo' or TableName eq 'delta'", 0, "Bravo delta"},
		{"not (TableName lt 'C')", 4, "alpha ba1 bzzz Charlie delta"},
		{"Other eq 'x'", 0, ""},
	} {
		for _, budget := range []int{tablesvc.DefaultScanBudget, 1} {
			if got := strings.Join(walk(e.svc.WithScanBudget(budget), tc.filter, tc.top), " "); got != tc.want {
				t.Errorf("tables %q top %d budget %d: %q, want %q", tc.filter, tc.top, budget, got, tc.want)
			}
		}
	}
	ts, next, err := e.svc.QueryTables(e.ctx, "", 2, "")
	if err != nil || len(ts) != 2 || next != "bravo" {
		t.Fatalf("first page of 2: %v, next %q, %v; want next bravo", ts, next, err)
	}
	_, _, err = e.svc.QueryTables(e.ctx, "TableName eq", 0, "")
	wantErr(t, "bad tables filter", err, "InvalidInput")
}

func testDeleteTableRemovesEntities(e *env) {
	t := e.t
	e.mustCreate("gone")
	e.fill("gone", 150)
	if err := e.svc.DeleteTable(e.ctx, "GONE"); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Get(e.ctx, "gone", "p00", "r00000")
	wantErr(t, "get after delete", err, tablesvc.ErrTableNotFound)
	e.mustCreate("gone")
	if n := e.count("gone"); n != 0 {
		t.Fatalf("re-created table has %d entities", n)
	}
}
