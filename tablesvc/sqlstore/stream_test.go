package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
)

// load fills table with n entities in partitions of perPK rows, each with
// a pad-byte string property and an Int32, by batches of 100 (every batch
// one transaction).
func load(tb testing.TB, svc *tablesvc.Service, table string, n, perPK, pad int) {
	tb.Helper()
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, table); err != nil {
		tb.Fatal(err)
	}
	padding := strings.Repeat("x", pad)
	var ops []tablesvc.Op
	flush := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := svc.Batch(ctx, table, ops); err != nil {
			tb.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		pk := fmt.Sprintf("p%06d", i/perPK)
		if len(ops) > 0 && (len(ops) == tablesvc.MaxBatchOps || ops[0].Entity.PartitionKey != pk) {
			flush()
		}
		ops = append(ops, tablesvc.Op{Kind: tablesvc.Insert, Entity: tablesvc.Entity{
			PartitionKey: pk, RowKey: fmt.Sprintf("r%09d", i),
			Props: []tablesvc.Property{
				{Name: "Pad", Value: tablesvc.Value{Type: tablesvc.String, Str: padding}},
				{Name: "N", Value: tablesvc.Value{Type: tablesvc.Int32, Int: int64(i)}},
			},
		}})
	}
	flush()
}

// heapStore samples the live heap (after a GC) every sampleEvery rows a
// Scan yields: what a query holds while it streams.
type heapStore struct {
	tablesvc.Store
	sampleEvery int
	mu          sync.Mutex
	samples     []uint64
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (h *heapStore) Scan(ctx context.Context, table string, r tablesvc.KeyRange, yield func(tablesvc.Entity) bool) error {
	n := 0
	return h.Store.Scan(ctx, table, r, func(e tablesvc.Entity) bool {
		n++
		if n%h.sampleEvery == 0 {
			h.mu.Lock()
			h.samples = append(h.samples, liveHeap())
			h.mu.Unlock()
		}
		return yield(e)
	})
}

// TestQueryStreamsInBoundedMemory: one query page that reads all of a
// 200,000-entity table (≈ 48 MB of property data; a filter matching
// nothing, both scan budgets lifted) holds no more live heap at the end
// of the scan than near its start: rows are decoded one at a time and
// dropped. The live heap is sampled after a GC every tenth of the rows.
// Under -short or the race detector (which slows loading tenfold) the
// table has 10,000 entities of 2,000 bytes instead: fewer rows, the same
// order of data.
func TestQueryStreamsInBoundedMemory(t *testing.T) {
	n, pad := 200_000, 200
	if testing.Short() || raceEnabled {
		n, pad = 10_000, 2000
	}
	st := open(t, filepath.Join(t.TempDir(), FileName))
	load(t, tablesvc.New(st, nil), "big", n, 1000, pad)

	h := &heapStore{Store: st, sampleEvery: n / 10}
	svc := tablesvc.New(h, nil).WithScanBudget(n + 1).WithScanBytes(1 << 40)
	before := liveHeap()
	page, err := svc.Query(context.Background(), "big", tablesvc.Query{Filter: "N lt 0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) != 0 || page.More || len(h.samples) != n/h.sampleEvery {
		t.Fatalf("page of %d entities, More %v, %d samples", len(page.Entities), page.More, len(h.samples))
	}
	first, peak := h.samples[0], uint64(0)
	for _, s := range h.samples {
		peak = max(peak, s)
	}
	t.Logf("live heap before %d KiB, after %d rows %d KiB, peak %d KiB over %d rows", before>>10, n/10, first>>10, peak>>10, n)
	// A query that kept rows would grow by at least 0.9 × n × pad bytes
	// (36 MB, or 18 MB under -short) between the first and the last
	// sample. Allow 4 MiB of
	// noise (the runtime's and the driver's own buffers).
	if peak > first+4<<20 {
		t.Fatalf("live heap grew from %d KiB to %d KiB while streaming", first>>10, peak>>10)
	}

	// And a walk of the whole table by pages of 1000 sees every entity once.
	q, seen := tablesvc.Query{}, 0
	for {
		p, err := tablesvc.New(st, nil).Query(context.Background(), "big", q)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(p.Entities)
		if !p.More {
			break
		}
		q = tablesvc.Query{NextPK: p.NextPK, NextRK: p.NextRK, HasNext: true}
	}
	if seen != n {
		t.Fatalf("walked %d entities, want %d", seen, n)
	}
}

var benchOnce struct {
	sync.Once
	st  *Store
	err error
}

// BenchmarkQueryRange: a PartitionKey-range query (10 partitions of
// 1,000 rows out of 100) over 100,000 entities, walked page by page; the
// store is built once per benchmark binary in a temporary directory.
func BenchmarkQueryRange(b *testing.B) {
	benchOnce.Do(func() {
		dir, err := filepath.Abs(b.TempDir())
		if err != nil {
			benchOnce.err = err
			return
		}
		benchOnce.st, benchOnce.err = Open(context.Background(), filepath.Join(dir, FileName))
		if benchOnce.err == nil {
			load(b, tablesvc.New(benchOnce.st, nil), "bench", 100_000, 1000, 200)
		}
	})
	if benchOnce.err != nil {
		b.Fatal(benchOnce.err)
	}
	svc := tablesvc.New(benchOnce.st, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q, seen := tablesvc.Query{Filter: "PartitionKey ge 'p000040' and PartitionKey lt 'p000050'"}, 0
		for {
			p, err := svc.Query(ctx, "bench", q)
			if err != nil {
				b.Fatal(err)
			}
			seen += len(p.Entities)
			if !p.More {
				break
			}
			q.NextPK, q.NextRK, q.HasNext = p.NextPK, p.NextRK, true
		}
		if seen != 10_000 {
			b.Fatalf("range query saw %d entities, want 10000", seen)
		}
	}
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "entities/s")
}

// BenchmarkCycle: insert, point query and merge with If-Match of one new
// entity per iteration, from parallel goroutines on one store (the
// store-level part of the front end's 16-client cycle benchmark).
func BenchmarkCycle(b *testing.B) {
	st, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := tablesvc.New(st, nil)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "cycle"); err != nil {
		b.Fatal(err)
	}
	var next sync.Mutex
	id := 0
	b.SetParallelism(8) // 16 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			next.Lock()
			id++
			rk := fmt.Sprint("r", id)
			next.Unlock()
			e := tablesvc.Entity{PartitionKey: "p", RowKey: rk, Props: []tablesvc.Property{{Name: "N", Value: tablesvc.Value{Type: tablesvc.Int32, Int: 1}}}}
			if _, err := svc.Apply(ctx, "cycle", tablesvc.Op{Kind: tablesvc.Insert, Entity: e}); err != nil {
				b.Error(err)
				return
			}
			got, err := svc.Get(ctx, "cycle", "p", rk)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := svc.Apply(ctx, "cycle", tablesvc.Op{Kind: tablesvc.Merge, Entity: e, IfMatch: got.ETag()}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "ops/s")
}
