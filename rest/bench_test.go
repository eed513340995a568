package rest_test

import (
	"context"
	"fmt"
	"os"
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
// and reports MB/s for each and the blobshare/Azurite ratios.
//
//	go test ./rest -run '^$' -bench '^BenchmarkTransfer$' -benchtime 2x
//	BLOBSHARE_BENCH_BYTES=1073741824 go test ./rest -run '^$' -bench '^BenchmarkTransfer$' -benchtime 2x -timeout 30m
func BenchmarkTransfer(b *testing.B) {
	n, err := diskbench.TransferBytes()
	if err != nil {
		b.Fatal(err)
	}
	az := azuritetest.Start(b)
	e := newEnv(b)
	src := benchSource(b, n)
	ctx := context.Background()
	e.mustShare("bench")

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

	var fsUp, fsDown, azUp, azDown, disk time.Duration
	sink := sinkFile(b, n)
	diskDir := b.TempDir()
	for i := 0; i < b.N; i++ {
		// The yardstick: one writer acknowledging 4 MiB ranges durably,
		// one after the other (diskbench.Write).
		syscall.Sync()
		d, err := diskbench.Write(diskDir, src, n)
		if err != nil {
			b.Fatalf("disk baseline: %v", err)
		}
		disk += d

		name := fmt.Sprintf("payload-%d", i)
		blobshareSide := func() {
			fc := e.file("bench", name)
			syscall.Sync()
			// A FileREST upload starts with Create File, as an azblob
			// upload ends with Put Block List: both are timed.
			start := time.Now()
			if _, err := fc.Create(ctx, n, nil); err != nil {
				b.Fatal(err)
			}
			if err := fc.UploadFile(ctx, src, &file.UploadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil {
				b.Fatal(err)
			}
			fsUp += time.Since(start)
			start = time.Now()
			if got, err := fc.DownloadFile(ctx, sink, &file.DownloadFileOptions{ChunkSize: benchChunk, Concurrency: benchConcurrency}); err != nil || got != n {
				b.Fatalf("blobshare download: %d bytes, %v", got, err)
			}
			fsDown += time.Since(start)
		}
		azuriteSide := func() {
			bb := bc.ServiceClient().NewContainerClient("bench").NewBlockBlobClient(name)
			syscall.Sync()
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
		}
		// Alternate which side goes first (the one after the disk
		// baseline finds the space it freed).
		if i%2 == 0 {
			blobshareSide()
			azuriteSide()
		} else {
			azuriteSide()
			blobshareSide()
		}
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
	b.Logf("%d MiB: blobshare up %.1f MB/s down %.1f MB/s; azurite up %.1f MB/s down %.1f MB/s; ratio up %.2fx down %.2fx (aim ≥ 10x up, 5x down); disk %.1f MB/s fsynced every 4 MiB, upload at %.2f of it (aim ≥ 0.5)",
		n>>20, mbps(total, fsUp), mbps(total, fsDown), mbps(total, azUp), mbps(total, azDown),
		azUp.Seconds()/fsUp.Seconds(), azDown.Seconds()/fsDown.Seconds(), mbps(total, disk), disk.Seconds()/fsUp.Seconds())
}

// BenchmarkGetFileProperties measures Get File Properties latency with 16
// concurrent SDK clients and reports p50 and p99.
//
//	go test ./rest -run '^$' -bench '^BenchmarkGetFileProperties$' -benchtime 2000x
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
