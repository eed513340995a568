package table_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
)

const (
	benchWorkers = 16
	benchRounds  = 3 // rounds per side, alternating blobshare and Azurite
)

// cycleStats is one side's measurements.
type cycleStats struct {
	cycles  int
	elapsed time.Duration
	lat     []time.Duration // one per cycle
}

func (s *cycleStats) perSecond() float64 { return float64(s.cycles) / s.elapsed.Seconds() }

func (s *cycleStats) pct(q float64) time.Duration {
	slices.Sort(s.lat)
	return s.lat[min(len(s.lat)-1, int(q*float64(len(s.lat))))]
}

func benchService(b *testing.B, connStr string) *aztables.ServiceClient {
	b.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, noRetry)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

func benchTable(b *testing.B, svc *aztables.ServiceClient, name string) *aztables.Client {
	b.Helper()
	if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
		b.Fatal(err)
	}
	return svc.NewClient(name)
}

// runCycles has benchWorkers goroutines do n insert + point query + merge
// cycles in all on c and adds them to st. Each worker writes its own
// partition (keys never repeat: round names them), so cycles conflict
// only in the server.
func runCycles(b *testing.B, side string, c *aztables.Client, round string, n int, st *cycleStats) {
	ctx := context.Background()
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pk := fmt.Sprintf("w%02d", w)
			lat := make([]time.Duration, 0, n/benchWorkers+1)
			for i := range work {
				rk := fmt.Sprintf("%s-%08d", round, i)
				t0 := time.Now()
				add, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","Name":"benchmark entity","N":1}`),
					&aztables.AddEntityOptions{})
				if err != nil {
					b.Errorf("%s insert: %v", side, err)
					return
				}
				if _, err := c.GetEntity(ctx, pk, rk, nil); err != nil {
					b.Errorf("%s get: %v", side, err)
					return
				}
				if _, err := c.UpdateEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","N":2}`),
					&aztables.UpdateEntityOptions{IfMatch: &add.ETag, UpdateMode: aztables.UpdateModeMerge}); err != nil {
					b.Errorf("%s merge: %v", side, err)
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			st.lat = append(st.lat, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	st.elapsed += time.Since(start)
	st.cycles += n
}

// BenchmarkTableCycles: insert + point query + merge (with the insert's
// ETag) cycles from 16 clients, blobshare's Table service (httptest,
// SQLite in a temp dir) against Azurite's (on disk in a temp dir), both
// through the aztables SDK, in one run: b.N cycles per side in three
// rounds that alternate the sides. Reports operations/s (3 per cycle), p99
// cycle latency and the ratios.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableCycles$' -benchtime 3000x
func BenchmarkTableCycles(b *testing.B) {
	az := azuritetest.StartTable(b)
	ours := newEnv(b, nil)
	sides := []struct {
		name string
		c    *aztables.Client
		st   *cycleStats
	}{
		{"blobshare", benchTable(b, benchService(b, ours.ConnStr), "bench"), &cycleStats{}},
		{"azurite", benchTable(b, benchService(b, az.ConnectionString), "bench"), &cycleStats{}},
	}
	for _, s := range sides {
		runCycles(b, s.name, s.c, "warm", 2*benchWorkers, &cycleStats{})
	}
	per := max(b.N/benchRounds, benchWorkers)
	b.ResetTimer()
	for r := range benchRounds {
		for _, s := range sides {
			runCycles(b, s.name, s.c, fmt.Sprint("r", r), per, s.st)
		}
	}
	b.StopTimer()
	bs, az2 := sides[0].st, sides[1].st
	ratio := bs.perSecond() / az2.perSecond()
	b.ReportMetric(3*bs.perSecond(), "blobshare_ops/s")
	b.ReportMetric(3*az2.perSecond(), "azurite_ops/s")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(float64(bs.pct(0.99).Microseconds()), "blobshare_p99_µs")
	b.ReportMetric(float64(az2.pct(0.99).Microseconds()), "azurite_p99_µs")
	b.Logf("%d clients, %d cycles per side in %d alternating rounds: blobshare %.0f ops/s (p50 %v, p99 %v), azurite %.0f ops/s (p50 %v, p99 %v); ratio %.2fx (aim ≥ 10x), p99 %s",
		benchWorkers, bs.cycles, benchRounds, 3*bs.perSecond(), bs.pct(0.5), bs.pct(0.99), 3*az2.perSecond(), az2.pct(0.5), az2.pct(0.99), ratio,
		map[bool]string{true: "below Azurite's", false: "NOT below Azurite's"}[bs.pct(0.99) < az2.pct(0.99)])
}

// rangeEntities is the table size of BenchmarkTableRangeQuery: 10,000,
// or the 100,000 with BLOBSHARE_BENCH_FULL=1.
func rangeEntities() int {
	if os.Getenv("BLOBSHARE_BENCH_FULL") == "1" {
		return 100_000
	}
	return 10_000
}

// loadRange fills c with n entities in 100 partitions (p000..p099) by
// batches of 100, four at a time.
func loadRange(b *testing.B, c *aztables.Client, n int) {
	ctx := context.Background()
	batches := make(chan int, n/100)
	for i := range n / 100 {
		batches <- i
	}
	close(batches)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				pk := fmt.Sprintf("p%03d", i%100)
				acts := make([]aztables.TransactionAction, 100)
				for j := range acts {
					acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
						Entity: []byte(fmt.Sprintf(`{"PartitionKey":"%s","RowKey":"%06d-%03d","N":%d,"Name":"entity %d"}`, pk, i, j, j, j))}
				}
				if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
					b.Errorf("loading: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkTableRangeQuery: a PartitionKey-range query (10 of the 100
// partitions: a tenth of the table) walked to its end through every
// continuation page, over a table of rangeEntities() entities, blobshare
// against Azurite, b.N queries per side in alternating rounds. Reports
// the entities returned per second and the ratio. Each run loads both
// tables first, so -benchtime 1x (one run: three rounds of one query a
// side) keeps the load from happening twice.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableRangeQuery$' -benchtime 1x
func BenchmarkTableRangeQuery(b *testing.B) {
	n := rangeEntities()
	az := azuritetest.StartTable(b)
	ours := newEnv(b, nil)
	sides := []struct {
		name    string
		c       *aztables.Client
		elapsed time.Duration
		got     int
	}{
		{name: "blobshare", c: benchTable(b, benchService(b, ours.ConnStr), "range")},
		{name: "azurite", c: benchTable(b, benchService(b, az.ConnectionString), "range")},
	}
	for i := range sides {
		t0 := time.Now()
		loadRange(b, sides[i].c, n)
		b.Logf("%s: %d entities loaded in %v", sides[i].name, n, time.Since(t0).Round(time.Millisecond))
	}
	query := func(c *aztables.Client) int {
		got := 0
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey ge 'p040' and PartitionKey lt 'p050'")})
		for pager.More() {
			p, err := pager.NextPage(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			got += len(p.Entities)
		}
		return got
	}
	per := max(b.N/benchRounds, 1)
	b.ResetTimer()
	for range benchRounds {
		for i := range sides {
			t0 := time.Now()
			for range per {
				if got := query(sides[i].c); got != n/10 {
					b.Fatalf("%s: the range query returned %d entities, want %d", sides[i].name, got, n/10)
				}
				sides[i].got += n / 10
			}
			sides[i].elapsed += time.Since(t0)
		}
	}
	b.StopTimer()
	rate := func(i int) float64 { return float64(sides[i].got) / sides[i].elapsed.Seconds() }
	b.ReportMetric(rate(0), "blobshare_entities/s")
	b.ReportMetric(rate(1), "azurite_entities/s")
	b.ReportMetric(rate(0)/rate(1), "ratio")
	b.Logf("range query over %d entities (%d returned), %d per side in %d alternating rounds: blobshare %.0f entities/s (%v a query), azurite %.0f entities/s (%v a query); ratio %.2fx (aim ≥ 10x)",
		n, n/10, per*benchRounds, benchRounds, rate(0), sides[0].elapsed/time.Duration(per*benchRounds), rate(1), sides[1].elapsed/time.Duration(per*benchRounds), rate(0)/rate(1))
}
