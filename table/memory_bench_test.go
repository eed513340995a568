package table_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/internal/procstat"
)

// memorySizes are the table sizes BenchmarkTableServeMemory measures:
// 10,000 and 100,000 entities, and 1,000,000 with BLOBSHARE_BENCH_FULL=1.
func memorySizes() []int {
	if os.Getenv("BLOBSHARE_BENCH_FULL") == "1" {
		return []int{10_000, 100_000, 1_000_000}
	}
	return []int{10_000, 100_000}
}

// BenchmarkTableServeMemory: the peak resident memory of a `blobshare
// serve` process (built from this tree, SQLite in a temp dir) while it
// answers the same queries over one table of 10,000 entities, then of
// 100,000 (and 1,000,000 with BLOBSHARE_BENCH_FULL=1): a query whose $filter
// on a non-key property matches nothing (every entity read, streamed
// through continuation pages), a PartitionKey-range query over a tenth of
// the table, and 1,000 point reads. The peak is reset (clear_refs) before
// each size's queries. Reports the peaks and the ratio of the last to the
// first ("growth", aim: flat) and to the second ("growth_from_100k"): at
// 10,000 entities the whole database is smaller than SQLite's page caches
// (2 MiB a connection), which fill up to that bound as the table grows.
//
//	go test ./table -run '^$' -bench '^BenchmarkTableServeMemory$' -benchtime 1x
func BenchmarkTableServeMemory(b *testing.B) {
	sizes := memorySizes()
	bin, err := servetest.Build("..")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	srv, err := servetest.Start(bin, b.TempDir(), "--smb", "off")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Stop() })
	ctx := context.Background()
	if _, err := benchService(b, envAt(srv.TableURL, nil).ConnStr).CreateTable(ctx, "mem", nil); err != nil {
		b.Fatal(err)
	}
	lc, err := newLeanClient(srv.TableURL)
	if err != nil {
		b.Fatal(err)
	}
	loaded := 0
	grow := func(to int) {
		t0 := time.Now()
		if err := loadLean(ctx, lc, "mem", loaded, to); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d entities loaded in %v", to-loaded, time.Since(t0).Round(time.Millisecond))
		loaded = to
	}
	measure := func() int64 {
		if err := procstat.ResetPeak(srv.Pid()); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if n, err := lc.query(ctx, "mem", "N eq -1"); err != nil || n != 0 {
			b.Fatalf("full scan: %d entities, %v", n, err)
		}
		if n, err := lc.query(ctx, "mem", "PartitionKey ge 'p040' and PartitionKey lt 'p050'"); err != nil || n != loaded/10 {
			b.Fatalf("range query: %d entities, want %d; %v", n, loaded/10, err)
		}
		for i := range 1000 {
			j := i * (loaded / 1000)
			if _, _, err := lc.do(ctx, "GET", lc.entityPath("mem", fmt.Sprintf("p%03d", j%100), fmt.Sprintf("%08d", j)), nil, nil, 200); err != nil {
				b.Fatal(err)
			}
		}
		peak, err := procstat.PeakRSS(srv.Pid())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d entities: queries in %v, peak RSS %.1f MiB; now %s", loaded, time.Since(t0).Round(time.Millisecond), float64(peak)/(1<<20), procstat.Kinds(srv.Pid()))
		return peak
	}
	b.ResetTimer()
	var peaks []int64
	for _, n := range sizes {
		grow(n)
		peaks = append(peaks, measure())
	}
	b.StopTimer()
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	last := len(peaks) - 1
	for i, n := range sizes {
		b.ReportMetric(mib(peaks[i]), fmt.Sprintf("peak_MiB_at_%dk", n/1000))
	}
	b.ReportMetric(float64(peaks[last])/float64(peaks[0]), "growth")
	b.ReportMetric(float64(peaks[last])/float64(peaks[1]), "growth_from_100k")
	b.Logf("serve's peak RSS: %.1f MiB at %d entities, %.1f MiB at %d: growth %.2fx (aim: flat), %.2fx from %d",
		mib(peaks[0]), sizes[0], mib(peaks[last]), sizes[last], float64(peaks[last])/float64(peaks[0]),
		float64(peaks[last])/float64(peaks[1]), sizes[1])
}

// loadLean inserts entities from to to into tbl, 100 per batch, four
// batches in flight: entity i is (p<i%100>, <i>) with a number and a
// 100-byte string.
func loadLean(ctx context.Context, lc *leanClient, tbl string, from, to int) error {
	filler := strings.Repeat("x", 100)
	batches := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range batches {
				// A batch is one partition: entities start, start+100, … share i%100.
				es := make([][]byte, 0, 100)
				for k := range 100 {
					i := start + k*100
					es = append(es, []byte(fmt.Sprintf(`{"PartitionKey":"p%03d","RowKey":"%08d","N":%d,"S":"%s"}`, i%100, i, i, filler)))
				}
				if err := lc.insertBatch(ctx, tbl, es); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for block := from; block < to; block += 100 * 100 {
		for p := range 100 {
			select {
			case batches <- block + p:
			case err = <-errs:
				break feed
			}
		}
	}
	close(batches)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}
