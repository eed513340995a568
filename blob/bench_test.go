package blob_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	blobsvc "github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/internal/diskbench"
)

const (
	benchBlock       = 4 << 20 // 4 MiB blocks
	benchConcurrency = 4       // blocks in flight
)

// benchSides returns azblob clients for blobshare (in-process server on
// 127.0.0.1:0) and Azurite, each with container "bench".
func benchSides(b *testing.B) (bs, az *azblob.Client) {
	b.Helper()
	ctx := context.Background()
	azs := azuritetest.Start(b)
	if azs == nil {
		b.Skip("no Azurite")
	}
	e := newEnv(b, nil)
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: 10 * time.Minute}}}
	var err error
	if bs, err = azblob.NewClientFromConnectionString(e.ConnStr, opts); err != nil {
		b.Fatal(err)
	}
	if az, err = azblob.NewClientFromConnectionString(azs.ConnectionString, opts); err != nil {
		b.Fatal(err)
	}
	for _, c := range []*azblob.Client{bs, az} {
		if _, err := c.CreateContainer(ctx, "bench", nil); err != nil {
			b.Fatal(err)
		}
	}
	return bs, az
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / (1 << 20) / d.Seconds() }

// BenchmarkBlobTransfer uploads and downloads the same bytes, streamed
// from and to temp files with the azblob SDK (4 MiB blocks, 4 in flight),
// through blobshare's Blob service and Azurite's, and reports MB/s and
// the blobshare/Azurite ratios (aim ≥ 10× up, ≥ 5× down). In the same
// rounds it measures the upload's yardsticks: a no-op server that reads
// each block and stores nothing (the ceiling the SDK client, loopback TCP
// and net/http leave on this machine), and the disk's durable bandwidth
// at the same concurrency (4 writers each fsyncing every 4 MiB,
// diskbench.WriteParallel). Every timed upload starts after the same
// page-cache warm-up (diskbench.Warm) and the sides take turns going
// first; up_vs_disk4 and up_vs_sink are the medians of the per-round
// ratios (aims ≥ 0.8 and ≥ 0.5).
//
//	go test ./blob -run '^$' -bench '^BenchmarkBlobTransfer$' -benchtime 4x
//	BLOBSHARE_BENCH_BYTES=1073741824 go test ./blob -run '^$' -bench '^BenchmarkBlobTransfer$' -benchtime 3x -timeout 30m
func BenchmarkBlobTransfer(b *testing.B) {
	n, err := diskbench.TransferBytes()
	if err != nil {
		b.Fatal(err)
	}
	bs, az := benchSides(b)
	ctx := context.Background()
	dir := b.TempDir()
	src, err := diskbench.Source(dir, n) // uploads stream from it
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var up, down [2]time.Duration
	var sunk, disk4 time.Duration
	var vsDisk4, vsSink []float64
	sinkServer := sinkServerClient(b)
	sink, err := diskbench.Sink(dir, n) // downloads overwrite it
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	warm := func() {
		if err := diskbench.Warm(dir, src, n); err != nil {
			b.Fatal(err)
		}
	}
	clients := [2]*azblob.Client{bs, az}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("payload-%d", i)
		var sk, d4, bsUp time.Duration
		sides := []func(){
			func() { // the ceiling: the same upload into a server that stores nothing
				bb := sinkServer.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(name)
				warm()
				start := time.Now()
				if _, err := bb.UploadFile(ctx, src, &blockblob.UploadFileOptions{BlockSize: benchBlock, Concurrency: benchConcurrency}); err != nil {
					b.Fatalf("sink: %v", err)
				}
				sk = time.Since(start)
			},
			func() { // 4 writers acknowledging 4 MiB durably
				warm()
				d, err := diskbench.WriteParallel(dir, src, n, benchConcurrency)
				if err != nil {
					b.Fatalf("disk baseline: %v", err)
				}
				d4 = d
			},
		}
		for j, c := range clients {
			sides = append(sides, func() {
				bb := c.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(name)
				// Each side starts with no dirty pages of the other's run to
				// write back (Azurite never fsyncs; its writeback would land
				// in blobshare's commit) and the same warm page cache.
				warm()
				start := time.Now()
				if _, err := bb.UploadFile(ctx, src, &blockblob.UploadFileOptions{BlockSize: benchBlock, Concurrency: benchConcurrency}); err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				up[j] += d
				if j == 0 {
					bsUp = d
				}
				start = time.Now()
				got, err := bb.DownloadFile(ctx, sink, &blob.DownloadFileOptions{BlockSize: benchBlock, Concurrency: benchConcurrency})
				down[j] += time.Since(start)
				if err != nil || got != n {
					b.Fatalf("download: %d bytes, %v", got, err)
				}
			})
		}
		// The sides take turns going first.
		for k := range sides {
			sides[(i+k)%len(sides)]()
		}
		sunk += sk
		disk4 += d4
		vsDisk4 = append(vsDisk4, d4.Seconds()/bsUp.Seconds())
		vsSink = append(vsSink, sk.Seconds()/bsUp.Seconds())
	}
	b.StopTimer()
	total := n * int64(b.N)
	b.SetBytes(2 * n)
	b.ReportMetric(mbps(total, up[0]), "blobshare_up_MB/s")
	b.ReportMetric(mbps(total, down[0]), "blobshare_down_MB/s")
	b.ReportMetric(mbps(total, up[1]), "azurite_up_MB/s")
	b.ReportMetric(mbps(total, down[1]), "azurite_down_MB/s")
	b.ReportMetric(up[1].Seconds()/up[0].Seconds(), "up_ratio")
	b.ReportMetric(down[1].Seconds()/down[0].Seconds(), "down_ratio")
	b.ReportMetric(mbps(total, sunk), "sink_up_MB/s")
	b.ReportMetric(mbps(total, disk4), "disk4_fsync_MB/s")
	// The up_ratio of a Go net/http server that reads each block and
	// keeps nothing: what the SDK client, loopback TCP and net/http leave
	// of this machine's CPUs. A server built the same way that also
	// stores the bytes does that much work and more.
	b.ReportMetric(up[1].Seconds()/sunk.Seconds(), "up_ratio_ceiling")
	b.ReportMetric(diskbench.Median(vsDisk4), "up_vs_disk4")
	b.ReportMetric(diskbench.Median(vsSink), "up_vs_sink")
	b.Logf("%d MiB ×%d: blobshare up %.1f down %.1f MB/s; azurite up %.1f down %.1f MB/s; ratio up %.2fx down %.2fx; a server storing nothing takes the upload at %.1f MB/s, %.2fx Azurite; "+
		"4 writers fsyncing every 4 MiB %.1f MB/s; upload at %.2f of the 4-writer disk (aim ≥ 0.8; rounds %.2f) and %.2f of the no-op server (aim ≥ 0.5; rounds %.2f)",
		n>>20, b.N, mbps(total, up[0]), mbps(total, down[0]), mbps(total, up[1]), mbps(total, down[1]),
		up[1].Seconds()/up[0].Seconds(), down[1].Seconds()/down[0].Seconds(), mbps(total, sunk), up[1].Seconds()/sunk.Seconds(),
		mbps(total, disk4), diskbench.Median(vsDisk4), vsDisk4, diskbench.Median(vsSink), vsSink)
}

// sinkServerClient is an azblob client of a server that answers Put Block and
// Put Block List as the Blob service does (201, request id, ETag) after
// reading each body to the end, and stores nothing: the speed a Go
// net/http server that does no work of its own reaches on this machine.
func sinkServerClient(b *testing.B) *azblob.Client {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("x-ms-request-id", "sink")
		h.Set("x-ms-version", r.Header.Get("x-ms-version"))
		h.Set("x-ms-request-server-encrypted", "true")
		if r.Method != http.MethodPut {
			http.Error(w, "the sink takes uploads only", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Query().Get("comp") == "blocklist" {
			h.Set("ETag", `"0x8DCSINK"`)
			h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		}
		w.WriteHeader(http.StatusCreated)
	}))
	b.Cleanup(srv.Close)
	c, err := azblob.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName="+blobsvc.DevAccount+
		";AccountKey="+blobsvc.DevKey+";BlobEndpoint="+srv.URL+"/"+blobsvc.DevAccount+";", nil)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkBlobGetProperties runs b.N Get Blob Properties from 16
// concurrent clients against each side, two alternating rounds each, and
// reports ops/s, p99 and the blobshare/Azurite ratio of ops/s (aim ≥ 5×,
// p99 below Azurite's).
//
//	go test ./blob -run '^$' -bench '^BenchmarkBlobGetProperties$' -benchtime 4000x
func BenchmarkBlobGetProperties(b *testing.B) {
	const clients = 16
	bs, az := benchSides(b)
	ctx := context.Background()
	sides := [2]*blob.Client{}
	for j, c := range []*azblob.Client{bs, az} {
		if _, err := c.UploadBuffer(ctx, "bench", "props", []byte("hello"), nil); err != nil {
			b.Fatal(err)
		}
		sides[j] = c.ServiceClient().NewContainerClient("bench").NewBlobClient("props")
	}
	var elapsed [2]time.Duration
	var lat [2][]time.Duration
	b.ResetTimer()
	for round := range 4 {
		j := round % 2
		d, l := concurrentCalls(b, clients, max(b.N/2, 1), func() error {
			_, err := sides[j].GetProperties(ctx, nil)
			return err
		})
		elapsed[j] += d
		lat[j] = append(lat[j], l...)
	}
	b.StopTimer()
	ops := func(j int) float64 { return float64(len(lat[j])) / elapsed[j].Seconds() }
	p99 := func(j int) time.Duration {
		slices.Sort(lat[j])
		return lat[j][min(len(lat[j])-1, len(lat[j])*99/100)]
	}
	b.ReportMetric(ops(0), "blobshare_ops/s")
	b.ReportMetric(ops(1), "azurite_ops/s")
	b.ReportMetric(float64(p99(0).Microseconds()), "blobshare_p99_µs")
	b.ReportMetric(float64(p99(1).Microseconds()), "azurite_p99_µs")
	b.ReportMetric(ops(0)/ops(1), "ops_ratio")
	b.Logf("Get Blob Properties, %d clients: blobshare %.0f ops/s p99 %v; azurite %.0f ops/s p99 %v; ratio %.2fx",
		clients, ops(0), p99(0), ops(1), p99(1), ops(0)/ops(1))
}

// concurrentCalls makes n calls spread over callers goroutines and
// returns the wall time and each call's latency.
func concurrentCalls(b *testing.B, callers, n int, call func() error) (time.Duration, []time.Duration) {
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for range next {
				t := time.Now()
				if err := call(); err != nil {
					b.Error(err)
					return
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return time.Since(start), all
}
