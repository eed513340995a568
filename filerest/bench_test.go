package filerest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/blobshare/blobshare/bench/latency"
	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/internal/diskbench"
)

const (
	benchChunk       = 4 << 20 // 4 MiB ranges / blocks
	benchConcurrency = 4
)

// benchSource is the file of n random bytes uploads stream from
// (diskbench.Source).
func benchSource(b *testing.B, n int64) *os.File {
	b.Helper()
	f, err := diskbench.Source(b.TempDir(), n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// sinkFile is the file downloads of n bytes overwrite (diskbench.Sink).
func sinkFile(b *testing.B, n int64) *os.File {
	b.Helper()
	f, err := diskbench.Sink(b.TempDir(), n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / (1 << 20) / d.Seconds() }

// BenchmarkTransfer uploads and downloads the same bytes through
// blobshare (Go azfile SDK, 4 MiB ranges, 4 in parallel) and through
// Azurite's Blob API (azblob, 4 MiB blocks, 4 in parallel) in one run,
// and reports MB/s for each and the blobshare/Azurite ratios. Beside them,
// in the same rounds, the yardsticks of the upload: the disk's durable
// bandwidth at the same concurrency (4 writers each fsyncing every 4 MiB,
// diskbench.WriteParallel), the same with one writer (diskbench.Write),
// and a no-op FileREST server that reads each range and stores nothing
// (the SDK client, loopback TCP and net/http on this machine's CPUs).
// Every timed upload starts after the same page-cache warm-up
// (diskbench.Warm), and the sides take turns going first; up_vs_disk4
// and up_vs_sink are the medians of the per-round ratios (aims ≥ 0.8 and
// ≥ 0.5).
//
//	go test ./filerest -run '^$' -bench '^BenchmarkTransfer$' -benchtime 4x
//	BLOBSHARE_BENCH_BYTES=1073741824 go test ./filerest -run '^$' -bench '^BenchmarkTransfer$' -benchtime 3x -timeout 30m
func BenchmarkTransfer(b *testing.B) {
	n, err := diskbench.TransferBytes()
	if err != nil {
		b.Fatal(err)
	}
	az := azuritetest.Start(b)
	var store *countingStore
	e := newEnvStore(b, func(s blobstore.Store) blobstore.Store { store = &countingStore{Store: s}; return store })
	src := benchSource(b, n)
	ctx := context.Background()
	e.mustShare("bench")
	sinkURL := fileSinkServer(b, n)

	cred, err := azblob.NewSharedKeyCredential(az.Account, az.Key)
	if err != nil {
		b.Fatal(err)
	}
	bc, err := azblob.NewClientWithSharedKeyCredential(az.Endpoint+"/", cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: 10 * time.Minute},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bc.CreateContainer(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}

	var fsUp, fsDown, azUp, azDown, disk, disk4, sunk, sunkDown time.Duration
	var commits int64 // blob commits of the blobshare uploads
	var vsDisk4, vsSink []float64
	sink := sinkFile(b, n)
	diskDir := b.TempDir()
	warm := func() {
		if err := diskbench.Warm(diskDir, src, n); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("payload-%d", i)
		var up, d4, sk time.Duration
		sides := []func(){
			func() { // 4 writers acknowledging 4 MiB durably (diskbench.WriteParallel)
				warm()
				d, err := diskbench.WriteParallel(diskDir, src, n, benchConcurrency)
				if err != nil {
					b.Fatalf("disk baseline: %v", err)
				}
				d4 = d
			},
			func() { // one writer, one fsync after the other (diskbench.Write)
				warm()
				d, err := diskbench.Write(diskDir, src, n)
				if err != nil {
					b.Fatalf("disk baseline: %v", err)
				}
				disk += d
			},
			func() { // the no-op server: Create File and the Put Ranges, nothing stored
				fc, err := file.NewClientWithNoCredential(sinkURL+"/bench/"+name, nil)
				if err != nil {
					b.Fatal(err)
				}
				warm()
				start := time.Now()
				if _, err := fc.Create(ctx, n, nil); err != nil {
					b.Fatalf("sink: %v", err)
				}
				if err := fc.UploadFile(ctx, src, &file.UploadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil {
					b.Fatalf("sink: %v", err)
				}
				sk = time.Since(start)
				start = time.Now()
				if got, err := fc.DownloadFile(ctx, sink, &file.DownloadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil || got != n {
					b.Fatalf("sink download: %d bytes, %v", got, err)
				}
				sunkDown += time.Since(start)
			},
			func() {
				fc := e.file("bench", name)
				warm()
				// A FileREST upload starts with Create File, as an azblob
				// upload ends with Put Block List: both are timed.
				c0 := store.commits.Load()
				start := time.Now()
				if _, err := fc.Create(ctx, n, nil); err != nil {
					b.Fatal(err)
				}
				if err := fc.UploadFile(ctx, src, &file.UploadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil {
					b.Fatal(err)
				}
				up = time.Since(start)
				commits += store.commits.Load() - c0
				start = time.Now()
				if got, err := fc.DownloadFile(ctx, sink, &file.DownloadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil || got != n {
					b.Fatalf("blobshare download: %d bytes, %v", got, err)
				}
				fsDown += time.Since(start)
			},
			func() {
				bb := bc.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(name)
				warm()
				start := time.Now()
				if _, err := bb.UploadFile(ctx, src, &blockblob.UploadFileOptions{BlockSize: benchChunk, Concurrency: benchConcurrency}); err != nil {
					b.Fatal(err)
				}
				azUp += time.Since(start)
				start = time.Now()
				if got, err := bb.DownloadFile(ctx, sink, &blob.DownloadFileOptions{BlockSize: benchChunk, Concurrency: benchConcurrency}); err != nil || got != n {
					b.Fatalf("azurite download: %d bytes, %v", got, err)
				}
				azDown += time.Since(start)
			},
		}
		// The sides take turns going first.
		for k := range sides {
			sides[(i+k)%len(sides)]()
		}
		fsUp += up
		disk4 += d4
		sunk += sk
		vsDisk4 = append(vsDisk4, d4.Seconds()/up.Seconds())
		vsSink = append(vsSink, sk.Seconds()/up.Seconds())
	}
	total := n * int64(b.N)
	b.SetBytes(n)
	b.ReportMetric(mbps(total, fsUp), "blobshare_up_MB/s")
	b.ReportMetric(mbps(total, fsDown), "blobshare_down_MB/s")
	b.ReportMetric(mbps(total, azUp), "azurite_up_MB/s")
	b.ReportMetric(mbps(total, azDown), "azurite_down_MB/s")
	b.ReportMetric(azUp.Seconds()/fsUp.Seconds(), "up_ratio")
	b.ReportMetric(azDown.Seconds()/fsDown.Seconds(), "down_ratio")
	b.ReportMetric(mbps(total, disk), "disk_fsync_MB/s")
	b.ReportMetric(disk.Seconds()/fsUp.Seconds(), "up_vs_disk")
	b.ReportMetric(mbps(total, disk4), "disk4_fsync_MB/s")
	b.ReportMetric(mbps(total, sunk), "sink_up_MB/s")
	b.ReportMetric(mbps(total, sunkDown), "sink_down_MB/s")
	b.ReportMetric(sunkDown.Seconds()/fsDown.Seconds(), "down_vs_sink")
	b.ReportMetric(azDown.Seconds()/sunkDown.Seconds(), "sink_down_ratio")
	b.ReportMetric(diskbench.Median(vsDisk4), "up_vs_disk4")
	b.ReportMetric(diskbench.Median(vsSink), "up_vs_sink")
	// How many Put Ranges each blob commit carried (group commit): 1 when
	// every range waits for a commit of its own.
	ranges := float64(b.N) * float64((n+benchChunk-1)/benchChunk)
	b.ReportMetric(ranges/float64(commits), "ranges/commit")
	b.Logf("%d MiB ×%d: blobshare up %.1f MB/s down %.1f MB/s; azurite up %.1f MB/s down %.1f MB/s; ratio up %.2fx down %.2fx (aim ≥ 10x down); "+
		"disk %.1f MB/s fsynced every 4 MiB by one writer, %.1f MB/s by 4; no-op server up %.1f MB/s down %.1f MB/s (%.2fx Azurite's download); upload at %.2f of the 4-writer disk (aim ≥ 0.8; rounds %.2f) and %.2f of the no-op server (aim ≥ 0.5; rounds %.2f)",
		n>>20, b.N, mbps(total, fsUp), mbps(total, fsDown), mbps(total, azUp), mbps(total, azDown),
		azUp.Seconds()/fsUp.Seconds(), azDown.Seconds()/fsDown.Seconds(), mbps(total, disk), mbps(total, disk4), mbps(total, sunk), mbps(total, sunkDown), azDown.Seconds()/sunkDown.Seconds(),
		diskbench.Median(vsDisk4), vsDisk4, diskbench.Median(vsSink), vsSink)
}

// countingStore counts blob commits (a Put Range's, or a group's) and
// passes everything else through, durable staging included.
type countingStore struct {
	blobstore.Store
	commits atomic.Int64
}

func (c *countingStore) CommitBlocks(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	c.commits.Add(1)
	return c.Store.CommitBlocks(ctx, key, ids, cond)
}

func (c *countingStore) StageBlockDurable(ctx context.Context, key, id string, r io.Reader) (int64, error) {
	return blobstore.StageBlockDurable(ctx, c.Store, key, id, r)
}

// fileSinkServer starts a server that answers Create File and Put Range
// as the File service does (201, request id) after reading each body to
// the end, and stores nothing: the speed a Go net/http server that does
// no work of its own takes a FileREST upload at on this machine. It also
// answers Get File Properties and ranged Get File for any path as a file
// of size bytes whose content is one 4 MiB block repeated, from memory:
// the speed the SDK client downloads at when the server costs nothing
// (the client, loopback TCP and the sink file's page cache).
func fileSinkServer(b *testing.B, size int64) string {
	b.Helper()
	block := make([]byte, benchChunk)
	for i := range block {
		block[i] = byte(i*7 + i>>9)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("x-ms-request-id", "sink")
		h.Set("x-ms-version", r.Header.Get("x-ms-version"))
		h.Set("ETag", `"0x8DCSINK"`)
		h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			sinkDownload(w, r, block, size)
			return
		case http.MethodPut:
		default:
			http.Error(w, "the sink takes uploads and downloads only", http.StatusMethodNotAllowed)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.Set("x-ms-request-server-encrypted", "true")
		w.WriteHeader(http.StatusCreated)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// sinkDownload answers a Get File Properties (HEAD) or a Get File of the
// range in x-ms-range or Range with bytes of block, repeated.
func sinkDownload(w http.ResponseWriter, r *http.Request, block []byte, size int64) {
	h := w.Header()
	h.Set("x-ms-type", "File")
	if r.Method == http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		return
	}
	rg := r.Header.Get("x-ms-range")
	if rg == "" {
		rg = r.Header.Get("Range")
	}
	var start, end int64
	if _, err := fmt.Sscanf(rg, "bytes=%d-%d", &start, &end); err != nil || start > end || end >= size {
		http.Error(w, "the sink answers ranged downloads only", http.StatusRequestedRangeNotSatisfiable)
		return
	}
	n := end - start + 1
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, size))
	w.WriteHeader(http.StatusPartialContent)
	for n > 0 {
		off := start % int64(len(block))
		k := min(n, int64(len(block))-off)
		if _, err := w.Write(block[off : off+k]); err != nil {
			return
		}
		start += k
		n -= k
	}
}

// BenchmarkGetFileProperties measures Get File Properties latency with 16
// concurrent SDK clients and reports p50 and p99.
//
//	go test ./filerest -run '^$' -bench '^BenchmarkGetFileProperties$' -benchtime 2000x
func BenchmarkGetFileProperties(b *testing.B) {
	const clients = 16
	e := newEnv(b)
	e.mustShare("bench")
	fc := e.mustFile("bench", "f.txt", []byte("hello"))
	ctx := context.Background()
	// The aim is absolute (p99 < 5 ms): start on a quiet disk, not while
	// the kernel writes back what an earlier benchmark left dirty.
	syscall.Sync()
	p50, p99 := latency.Run(b, clients, func() error {
		_, err := fc.GetProperties(ctx, nil)
		return err
	})
	b.Logf("%d Get File Properties, %d clients: p50 %v p99 %v", b.N, clients, p50, p99)
}
