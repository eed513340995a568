// Package latency measures per-call latency under concurrent callers, for
// benchmarks that report percentiles rather than throughput.
package latency

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Run makes b.N calls of call spread over callers goroutines, reports the
// p50 and p99 latencies as the metrics "p50_µs" and "p99_µs", and returns
// them. A failing call fails the benchmark and stops its goroutine; with no
// call timed, both are zero and nothing is reported.
func Run(b *testing.B, callers int, call func() error) (p50, p99 time.Duration) {
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
			local := make([]time.Duration, 0, b.N/callers+1)
			for range next {
				start := time.Now()
				if err := call(); err != nil {
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
		return 0, 0
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	p50, p99 = p(0.50), p(0.99)
	b.ReportMetric(float64(p50.Microseconds()), "p50_µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99_µs")
	return p50, p99
}
