package fs

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blobshare/blobshare/internal/diskbench"
)

// BenchmarkPutRanges is the FileREST upload without HTTP: 4 writers each
// taking the next 4 MiB range of a file of diskbench.TransferBytes and
// putting it (PutRange: durable staging, group commit, the log's sync),
// against the disk's durable bandwidth at the same concurrency
// (diskbench.WriteParallel) in the same rounds, each side after the same
// page-cache warm-up, the sides taking turns. vs_disk4 is the median of
// the per-round ratios: what the store and metadata path leave of the
// disk, with the SDK, TCP and net/http out of the picture.
//
//	BLOBSHARE_BENCH_BYTES=268435456 go test ./fs -run '^$' -bench '^BenchmarkPutRanges$' -benchtime 5x
func BenchmarkPutRanges(b *testing.B) {
	n, err := diskbench.TransferBytes()
	if err != nil {
		b.Fatal(err)
	}
	const writers = 4
	e := newEnv(b)
	e.share("bench")
	dir := b.TempDir()
	src, err := diskbench.Source(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var fsTime, diskTime time.Duration
	var ratios []float64
	for i := 0; i < b.N; i++ {
		path := fmt.Sprintf("bench/f%d", i)
		var up, d4 time.Duration
		sides := []func(){
			func() {
				if err := diskbench.Warm(dir, src, n); err != nil {
					b.Fatal(err)
				}
				d, err := diskbench.WriteParallel(dir, src, n, writers)
				if err != nil {
					b.Fatal(err)
				}
				d4 = d
			},
			func() {
				if err := diskbench.Warm(dir, src, n); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: path, Size: n}); err != nil {
					b.Fatal(err)
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, writers)
				for range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							off := (next.Add(1) - 1) * maxPutRange
							if off >= n {
								return
							}
							m := min(maxPutRange, n-off)
							body := io.NewSectionReader(src, off, m)
							if _, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: path, Offset: off, Length: m, Body: body}); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
				up = time.Since(start)
			},
		}
		for k := range sides {
			sides[(i+k)%len(sides)]()
		}
		fsTime += up
		diskTime += d4
		ratios = append(ratios, d4.Seconds()/up.Seconds())
	}
	total := n * int64(b.N)
	b.ReportMetric(float64(total)/(1<<20)/fsTime.Seconds(), "putrange_MB/s")
	b.ReportMetric(float64(total)/(1<<20)/diskTime.Seconds(), "disk4_fsync_MB/s")
	b.ReportMetric(diskbench.Median(ratios), "vs_disk4")
	b.Logf("%d MiB ×%d: Put Ranges at %.2f of 4 fsyncing writers (rounds %.2f)", n>>20, b.N, diskbench.Median(ratios), ratios)
}
