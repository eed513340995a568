package queue_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

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

// runCycles has benchWorkers goroutines do n put + get + delete cycles
// in all on q (through the azqueue SDK) and adds them to st. A cycle puts
// a message, gets one (any worker's: each worker puts before it gets, so
// one is always visible) and deletes it with its receipt.
func runCycles(b *testing.B, side string, q *azqueue.QueueClient, n int, st *cycleStats) {
	ctx := context.Background()
	work := make(chan struct{}, n)
	for range n {
		work <- struct{}{}
	}
	close(work)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, n/benchWorkers+1)
			for range work {
				t0 := time.Now()
				if _, err := q.EnqueueMessage(ctx, "benchmark message", nil); err != nil {
					b.Error(err)
					return
				}
				got, err := q.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: to.Ptr(int32(300))})
				if err != nil || len(got.Messages) != 1 {
					b.Errorf("%s get: %v (%d messages)", side, err, len(got.Messages))
					return
				}
				m := got.Messages[0]
				if _, err := q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
					b.Error(err)
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

func benchQueue(b *testing.B, connStr, name string) *azqueue.QueueClient {
	b.Helper()
	svc, err := azqueue.NewServiceClientFromConnectionString(connStr, &azqueue.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateQueue(context.Background(), name, nil); err != nil {
		b.Fatal(err)
	}
	return svc.NewQueueClient(name)
}

// BenchmarkQueueCycles: put + get + delete cycles per second from 16
// workers on one queue, blobshare's Queue service (httptest, SQLite in a
// temp dir) against Azurite's (on disk in a temp dir), both through the
// azqueue SDK, in one run: b.N cycles per side, split into three rounds
// that alternate the sides so both see the machine's same moods. Reports
// cycles/s, p50 and p99 cycle latency for each side and the ratios.
//
//	go test ./queue -run '^$' -bench '^BenchmarkQueueCycles$' -benchtime 3000x
func BenchmarkQueueCycles(b *testing.B) {
	az := azuritetest.StartQueue(b)
	ours := newEnv(b, nil)
	sides := []struct {
		name string
		q    *azqueue.QueueClient
		st   *cycleStats
	}{
		{"blobshare", benchQueue(b, ours.ConnStr, "bench"), &cycleStats{}},
		{"azurite", benchQueue(b, az.ConnectionString, "bench"), &cycleStats{}},
	}
	// Warm both (connections, JIT) outside the measurement.
	for _, s := range sides {
		runCycles(b, s.name, s.q, 2*benchWorkers, &cycleStats{})
	}
	per := max(b.N/benchRounds, benchWorkers)
	b.ResetTimer()
	for range benchRounds {
		for _, s := range sides {
			runCycles(b, s.name, s.q, per, s.st)
		}
	}
	b.StopTimer()
	bs, az2 := sides[0].st, sides[1].st
	ratio := bs.perSecond() / az2.perSecond()
	b.ReportMetric(bs.perSecond(), "blobshare_cycles/s")
	b.ReportMetric(az2.perSecond(), "azurite_cycles/s")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(float64(bs.pct(0.99).Microseconds()), "blobshare_p99_µs")
	b.ReportMetric(float64(az2.pct(0.99).Microseconds()), "azurite_p99_µs")
	b.Logf("%d workers, %d cycles per side in %d alternating rounds: blobshare %.0f cycles/s (p50 %v, p99 %v), azurite %.0f cycles/s (p50 %v, p99 %v); ratio %.2fx (aim ≥ 5x), p99 %s",
		benchWorkers, bs.cycles, benchRounds, bs.perSecond(), bs.pct(0.5), bs.pct(0.99), az2.perSecond(), az2.pct(0.5), az2.pct(0.99), ratio,
		map[bool]string{true: "below Azurite's", false: "NOT below Azurite's"}[bs.pct(0.99) < az2.pct(0.99)])
}
