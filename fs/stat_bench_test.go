package fs

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// BenchmarkStat measures the per-request cost of the two hottest read
// paths with 16 concurrent callers, reporting p50 and p99: Stat (REST Get
// File Properties) and a handle read (locks.CheckIO on every read).
//
//	go test ./fs -run '^$' -bench '^BenchmarkStat$' -benchtime 4000x
func BenchmarkStat(b *testing.B) {
	const callers = 16
	e := newEnv(b)
	e.share("bench")
	e.putFile("bench/f.txt", []byte("hello"))
	h := e.mustOpen("bench/f.txt", locks.AccessRead, allShare, DispositionOpen)
	b.Cleanup(func() { h.Close(ctxBG) })
	for _, bc := range []struct {
		name string
		call func() error
	}{
		{"stat", func() error { _, _, err := e.fs.Stat(ctxBG, "bench/f.txt", ""); return err }},
		{"read", func() error { _, err := h.ReadAt(ctxBG, make([]byte, 5), 0); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			var mu sync.Mutex
			var wg sync.WaitGroup
			next := make(chan struct{}, b.N)
			for range b.N {
				next <- struct{}{}
			}
			close(next)
			b.ResetTimer()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var local []time.Duration
					for range next {
						start := time.Now()
						if err := bc.call(); err != nil {
							b.Error(err)
							return
						}
						local = append(local, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, local...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			b.StopTimer()
			if len(lat) == 0 {
				return
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
			b.ReportMetric(float64(p(0.50).Microseconds()), "p50_µs")
			b.ReportMetric(float64(p(0.99).Microseconds()), "p99_µs")
		})
	}
}
