package table_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/table"
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

// cycler runs one insert + point query + merge cycle on (pk, rk).
type cycler func(ctx context.Context, pk, rk string) error

// sdkCycler is the cycle through the aztables SDK: AddEntity, GetEntity,
// then UpdateEntity in merge mode with the insert's ETag.
func sdkCycler(c *aztables.Client) cycler {
	return func(ctx context.Context, pk, rk string) error {
		add, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","Name":"benchmark entity","N":1}`),
			&aztables.AddEntityOptions{})
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		if _, err := c.GetEntity(ctx, pk, rk, nil); err != nil {
			return fmt.Errorf("get: %w", err)
		}
		if _, err := c.UpdateEntity(ctx, []byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","N":2}`),
			&aztables.UpdateEntityOptions{IfMatch: &add.ETag, UpdateMode: aztables.UpdateModeMerge}); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		return nil
	}
}

// leanCycler is the same cycle through leanClient on table tbl.
func leanCycler(b *testing.B, endpoint, tbl string) cycler {
	b.Helper()
	c, err := newLeanClient(endpoint)
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context, pk, rk string) error { return c.cycle(ctx, tbl, pk, rk) }
}

// runCycles has benchWorkers goroutines do n cycles in all and adds them
// to st. Each worker writes its own partition (keys never repeat: round
// names them), so cycles conflict only in the server.
func runCycles(b *testing.B, side string, cycle cycler, round string, n int, st *cycleStats) {
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
				if err := cycle(ctx, pk, rk); err != nil {
					b.Errorf("%s: %v", side, err)
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
// SQLite in a temp dir) against Azurite's (on disk in a temp dir), in one
// run: b.N cycles per side in three rounds that alternate the sides.
//
// Two clients drive both servers in turn: leanClient (the aim's figure,
// "ratio": the servers compared) and the aztables SDK ("sdk_ratio"). The
// client runs on the same two cores as the server, and the SDK's CPU per
// request is about blobshare's whole answer, so a third pair of sides — a
// server that does nothing but answer each request with a canned reply
// (noopTableServer) — measures each client's own ceiling on this machine;
// "of_ceiling" is blobshare's share of the lean client's.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableCycles$' -benchtime 3000x
func BenchmarkTableCycles(b *testing.B) {
	az := azuritetest.StartTable(b)
	ours := newEnv(b, nil)
	noop := httptest.NewServer(noopTableServer{})
	b.Cleanup(noop.Close)
	noopURL := noop.URL + "/" + table.DevAccount
	// A table per client, so that the two never write the same keys.
	for _, conn := range []string{ours.ConnStr, az.ConnectionString} {
		benchTable(b, benchService(b, conn), "bench")
		benchTable(b, benchService(b, conn), "benchsdk")
	}
	sdkOn := func(connStr string) cycler { return sdkCycler(benchService(b, connStr).NewClient("benchsdk")) }
	type side struct {
		name  string
		cycle cycler
		st    cycleStats
	}
	sides := []*side{
		{name: "blobshare", cycle: leanCycler(b, ours.URL, "bench")},
		{name: "azurite", cycle: leanCycler(b, az.Endpoint, "bench")},
		{name: "noop", cycle: leanCycler(b, noopURL, "bench")},
		{name: "blobshare-sdk", cycle: sdkOn(ours.ConnStr)},
		{name: "azurite-sdk", cycle: sdkOn(az.ConnectionString)},
		{name: "noop-sdk", cycle: sdkOn(envAt(noopURL, nil).ConnStr)},
	}
	for _, s := range sides {
		runCycles(b, s.name, s.cycle, "warm", 2*benchWorkers, &cycleStats{})
	}
	per := max(b.N/benchRounds, benchWorkers)
	b.ResetTimer()
	for r := range benchRounds {
		for _, s := range sides {
			runCycles(b, s.name, s.cycle, fmt.Sprint("r", r), per, &s.st)
		}
	}
	b.StopTimer()
	bs, azl, nop, bsk, azk, nopk := &sides[0].st, &sides[1].st, &sides[2].st, &sides[3].st, &sides[4].st, &sides[5].st
	ratio := bs.perSecond() / azl.perSecond()
	b.ReportMetric(3*bs.perSecond(), "blobshare_ops/s")
	b.ReportMetric(3*azl.perSecond(), "azurite_ops/s")
	b.ReportMetric(3*nop.perSecond(), "noop_ops/s")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(bs.perSecond()/nop.perSecond(), "of_ceiling")
	b.ReportMetric(float64(bs.pct(0.99).Microseconds()), "blobshare_p99_µs")
	b.ReportMetric(float64(azl.pct(0.99).Microseconds()), "azurite_p99_µs")
	b.ReportMetric(3*bsk.perSecond(), "blobshare_sdk_ops/s")
	b.ReportMetric(3*azk.perSecond(), "azurite_sdk_ops/s")
	b.ReportMetric(3*nopk.perSecond(), "noop_sdk_ops/s")
	b.ReportMetric(bsk.perSecond()/azk.perSecond(), "sdk_ratio")
	b.ReportMetric(float64(bsk.pct(0.99).Microseconds()), "blobshare_sdk_p99_µs")
	b.ReportMetric(float64(azk.pct(0.99).Microseconds()), "azurite_sdk_p99_µs")
	below := map[bool]string{true: "below Azurite's", false: "NOT below Azurite's"}
	b.Logf("%d clients, %d cycles per side in %d alternating rounds", benchWorkers, bs.cycles, benchRounds)
	b.Logf("lean client: blobshare %.0f ops/s (p50 %v, p99 %v), azurite %.0f ops/s (p50 %v, p99 %v), no-op server %.0f ops/s; ratio %.2fx (aim ≥ 10x), p99 %s; blobshare at %.0f%% of the client's ceiling",
		3*bs.perSecond(), bs.pct(0.5), bs.pct(0.99), 3*azl.perSecond(), azl.pct(0.5), azl.pct(0.99), 3*nop.perSecond(), ratio, below[bs.pct(0.99) < azl.pct(0.99)], 100*bs.perSecond()/nop.perSecond())
	b.Logf("aztables SDK: blobshare %.0f ops/s (p50 %v, p99 %v), azurite %.0f ops/s (p50 %v, p99 %v), no-op server %.0f ops/s; ratio %.2fx, p99 %s; the SDK's ceiling is %.1fx Azurite",
		3*bsk.perSecond(), bsk.pct(0.5), bsk.pct(0.99), 3*azk.perSecond(), azk.pct(0.5), azk.pct(0.99), 3*nopk.perSecond(), bsk.perSecond()/azk.perSecond(), below[bsk.pct(0.99) < azk.pct(0.99)], nopk.perSecond()/azk.perSecond())
}

// noopTableServer answers the cycle's three requests with canned replies
// and does nothing else: the ceiling a client reaches on this machine.
type noopTableServer struct{}

func (noopTableServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("x-ms-version", "2019-02-02")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	io.Copy(io.Discard, r.Body)
	const etag = `W/"datetime'2026-11-28T00%3A00%3A00.0000000Z'"`
	switch r.Method {
	case http.MethodGet:
		h.Set("Content-Type", "application/json;odata=nometadata;streaming=true;charset=utf-8")
		h.Set("ETag", etag)
		io.WriteString(w, `{"PartitionKey":"p","RowKey":"r","Timestamp":"2026-11-28T00:00:00.0000000Z","Name":"benchmark entity","N":1}`)
	case http.MethodPost: // Insert Entity: the SDK asks for no content
		h.Set("ETag", etag)
		h.Set("Preference-Applied", "return-no-content")
		w.WriteHeader(http.StatusNoContent)
	default: // MERGE, PATCH
		h.Set("ETag", etag)
		w.WriteHeader(http.StatusNoContent)
	}
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
// against Azurite, b.N queries per side in alternating rounds, through two
// clients: leanClient, which reads each page's bytes and counts its
// entities (the aim's figure, "ratio": the servers compared), and the
// aztables SDK, which decodes every entity into a map ("sdk_ratio"; its
// decoding costs about three times blobshare's whole answer per entity,
// and a query's pages are fetched one after another, so it bounds that
// ratio). Reports the entities returned per second and the ratios. Each
// run loads both tables first, so -benchtime 1x (one run: three rounds of
// one query a side and client) keeps the load from happening twice.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableRangeQuery$' -benchtime 1x
func BenchmarkTableRangeQuery(b *testing.B) {
	const filter = "PartitionKey ge 'p040' and PartitionKey lt 'p050'"
	n := rangeEntities()
	az := azuritetest.StartTable(b)
	ours := newEnv(b, nil)
	type side struct {
		name    string
		query   func() (int, error)
		elapsed time.Duration
		got     int
	}
	var sides []*side
	for _, t := range []struct{ name, conn, endpoint string }{
		{"blobshare", ours.ConnStr, ours.URL},
		{"azurite", az.ConnectionString, az.Endpoint},
	} {
		c := benchTable(b, benchService(b, t.conn), "range")
		t0 := time.Now()
		loadRange(b, c, n)
		b.Logf("%s: %d entities loaded in %v", t.name, n, time.Since(t0).Round(time.Millisecond))
		lc, err := newLeanClient(t.endpoint)
		if err != nil {
			b.Fatal(err)
		}
		sides = append(sides, &side{name: t.name, query: func() (int, error) { return lc.query(context.Background(), "range", filter) }},
			&side{name: t.name + "-sdk", query: func() (int, error) {
				got := 0
				pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr(filter)})
				for pager.More() {
					p, err := pager.NextPage(context.Background())
					if err != nil {
						return got, err
					}
					got += len(p.Entities)
				}
				return got, nil
			}})
	}
	sides = []*side{sides[0], sides[2], sides[1], sides[3]} // blobshare, azurite, blobshare-sdk, azurite-sdk
	per := max(b.N/benchRounds, 1)
	b.ResetTimer()
	for range benchRounds {
		for _, s := range sides {
			t0 := time.Now()
			for range per {
				got, err := s.query()
				if err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
				if got != n/10 {
					b.Fatalf("%s: the range query returned %d entities, want %d", s.name, got, n/10)
				}
				s.got += got
			}
			s.elapsed += time.Since(t0)
		}
	}
	b.StopTimer()
	rate := func(i int) float64 { return float64(sides[i].got) / sides[i].elapsed.Seconds() }
	each := func(i int) time.Duration { return sides[i].elapsed / time.Duration(per*benchRounds) }
	b.ReportMetric(rate(0), "blobshare_entities/s")
	b.ReportMetric(rate(1), "azurite_entities/s")
	b.ReportMetric(rate(0)/rate(1), "ratio")
	b.ReportMetric(rate(2), "blobshare_sdk_entities/s")
	b.ReportMetric(rate(3), "azurite_sdk_entities/s")
	b.ReportMetric(rate(2)/rate(3), "sdk_ratio")
	b.Logf("range query over %d entities (%d returned), %d per side in %d alternating rounds", n, n/10, per*benchRounds, benchRounds)
	b.Logf("lean client: blobshare %.0f entities/s (%v a query), azurite %.0f entities/s (%v a query); ratio %.2fx (aim ≥ 10x)",
		rate(0), each(0), rate(1), each(1), rate(0)/rate(1))
	b.Logf("aztables SDK: blobshare %.0f entities/s (%v a query), azurite %.0f entities/s (%v a query); ratio %.2fx",
		rate(2), each(2), rate(3), each(3), rate(2)/rate(3))
}
