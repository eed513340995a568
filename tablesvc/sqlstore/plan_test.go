package sqlstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

// TestScanUsesPrimaryKey: every shape of Scan's statement is a range of
// the primary key in key order — no full scan, no sort — that starts at
// the continuation when there is one (else each page of a walk would read
// from the start of the range again).
func TestScanUsesPrimaryKey(t *testing.T) {
	st := open(t, filepath.Join(t.TempDir(), FileName))
	b := func(v string, incl bool) tablesvc.Bound { return tablesvc.Bound{Set: true, Value: v, Inclusive: incl} }
	for _, r := range []tablesvc.KeyRange{
		{},
		{PKLow: b("a", true), PKHigh: b("a", true)},
		{PKLow: b("a", false), PKHigh: b("m", false), RKLow: b("x", true)},
		{PKLow: b("a", true), PKHigh: b("a", true), RKLow: b("b", true), RKHigh: b("c", false)},
		{After: &tablesvc.Key{PK: "p", RK: "r"}},
		{PKHigh: b("q", true), After: &tablesvc.Key{PK: "p", RK: "r"}},
		{PKLow: b("a", true), PKHigh: b("a", true), RKLow: b("b", false), After: &tablesvc.Key{PK: "a", RK: "c"}},
		{PKLow: b("a", true), PKHigh: b("z", false), After: &tablesvc.Key{PK: "p", RK: "r"}},
	} {
		q, args := scanSQL("tbl", r)
		rows, err := st.reader.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		t.Log(p)
		if !strings.Contains(p, "SEARCH tb_entities USING PRIMARY KEY") || strings.Contains(p, "TEMP B-TREE") ||
			r.RKLow.Set && r.PKLow == r.PKHigh && !strings.Contains(p, "pk=? AND rk>") ||
			r.After != nil && r.PKLow != r.PKHigh && !strings.Contains(p, "(pk,rk)>") {
			t.Errorf("%s\nplan: %s", q, p)
		}
	}
}
