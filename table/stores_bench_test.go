package table_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/blobshare/blobshare/internal/pgtest"
	"github.com/blobshare/blobshare/table"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/pgstore"
)

// pg is a throwaway PostgreSQL cluster for the benchmarks that compare
// the stores; it starts on first use.
var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// pgEnv is the Table service (httptest) over a PostgreSQL store on a new
// schema of pg.
func pgEnv(b *testing.B) string {
	b.Helper()
	store, err := pgstore.Open(context.Background(), pg.Schema(b), pgstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h, err := table.New(table.Config{Service: tablesvc.New(store, nil)})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(func() {
		srv.Close()
		store.Close()
	})
	return srv.URL + "/" + table.DevAccount
}

// BenchmarkTableStores: the cycles of BenchmarkTableCycles (16 clients,
// the lean client) against the Table service on its SQLite store (the
// default, table.db) and on its PostgreSQL store (serve --meta), in
// alternating rounds: ops/s and the cycle's p50 and p99 on each, side by
// side. PostgreSQL runs on the same two cores (a throwaway cluster), so
// this is its cost per operation, not what several nodes would reach.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableStores$' -benchtime 3000x
func BenchmarkTableStores(b *testing.B) {
	lite := newEnv(b, nil)
	pgURL := pgEnv(b)
	sides := []struct {
		name  string
		cycle cycler
		st    cycleStats
	}{
		{name: "sqlite", cycle: leanCycler(b, lite.URL, "bench")},
		{name: "postgres", cycle: leanCycler(b, pgURL, "bench")},
	}
	benchTable(b, benchService(b, lite.ConnStr), "bench")
	benchTable(b, benchService(b, envAt(pgURL, nil).ConnStr), "bench")
	for i := range sides {
		runCycles(b, sides[i].name, sides[i].cycle, "warm", 2*benchWorkers, &cycleStats{})
	}
	per := max(b.N/benchRounds, benchWorkers)
	b.ResetTimer()
	for r := range benchRounds {
		for i := range sides {
			runCycles(b, sides[i].name, sides[i].cycle, fmt.Sprint("r", r), per, &sides[i].st)
		}
	}
	b.StopTimer()
	for i := range sides {
		st := &sides[i].st
		b.ReportMetric(3*st.perSecond(), sides[i].name+"_ops/s")
		b.ReportMetric(float64(st.pct(0.5).Microseconds()), sides[i].name+"_p50_µs")
		b.ReportMetric(float64(st.pct(0.99).Microseconds()), sides[i].name+"_p99_µs")
		b.Logf("%s: %.0f ops/s, a cycle (insert, point query, merge) p50 %v, p99 %v", sides[i].name, 3*st.perSecond(), st.pct(0.5), st.pct(0.99))
	}
}
