package integration

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// BenchmarkGetPropertiesFileVsBlob: Get File Properties (FileREST, which
// checks the lock table on every request) against Get Blob Properties
// (the Blob service) from 16 clients each, on one `blobshare serve`
// process, b.N calls a side in three rounds that alternate the sides.
// Reports each side's ops/s and p99 and the ratio FileREST ÷ Blob (aim ≥ 1).
//
//	go test ./integration -run '^$' -bench '^BenchmarkGetPropertiesFileVsBlob$' -benchtime 6000x
func BenchmarkGetPropertiesFileVsBlob(b *testing.B) {
	const clients, rounds = 16, 3
	srv, err := servetest.Start(blobshareBin, b.TempDir(), "--smb", "off")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Stop() })
	ctx := context.Background()
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	cred, err := service.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
	if err != nil {
		b.Fatal(err)
	}
	files, err := service.NewClientWithSharedKeyCredential(srv.RESTURL+"/", cred, &service.ClientOptions{ClientOptions: opts})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := files.NewShareClient("bench").Create(ctx, nil); err != nil {
		b.Fatal(err)
	}
	fc := files.NewShareClient("bench").NewRootDirectoryClient().NewFileClient("f.txt")
	if _, err := fc.Create(ctx, 5, nil); err != nil {
		b.Fatal(err)
	}
	blobs, err := azblob.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName="+storagehttp.DevAccount+
		";AccountKey="+storagehttp.DevKey+";BlobEndpoint="+srv.BlobURL+";", &azblob.ClientOptions{ClientOptions: opts})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := blobs.CreateContainer(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	if _, err := blobs.UploadBuffer(ctx, "bench", "b.txt", bytes.Repeat([]byte("x"), 5), nil); err != nil {
		b.Fatal(err)
	}
	bc := blobs.ServiceClient().NewContainerClient("bench").NewBlobClient("b.txt")
	type side struct {
		name    string
		call    func() error
		elapsed time.Duration
		lat     []time.Duration
	}
	sides := []*side{
		{name: "file", call: func() error { _, err := fc.GetProperties(ctx, nil); return err }},
		{name: "blob", call: func() error { _, err := bc.GetProperties(ctx, nil); return err }},
	}
	run := func(s *side, n int) {
		work := make(chan struct{}, n)
		for range n {
			work <- struct{}{}
		}
		close(work)
		var mu sync.Mutex
		var wg sync.WaitGroup
		t0 := time.Now()
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var local []time.Duration
				for range work {
					c0 := time.Now()
					if err := s.call(); err != nil {
						b.Errorf("%s: %v", s.name, err)
						return
					}
					local = append(local, time.Since(c0))
				}
				mu.Lock()
				s.lat = append(s.lat, local...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		s.elapsed += time.Since(t0)
	}
	for _, s := range sides {
		run(s, 200) // warm
		s.elapsed, s.lat = 0, nil
	}
	per := max(b.N/rounds, clients)
	b.ResetTimer()
	for range rounds {
		for _, s := range sides {
			run(s, per)
		}
	}
	b.StopTimer()
	rate := func(s *side) float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }
	p99 := func(s *side) time.Duration {
		slices.Sort(s.lat)
		return s.lat[min(len(s.lat)-1, len(s.lat)*99/100)]
	}
	f, bl := sides[0], sides[1]
	b.ReportMetric(rate(f), "file_ops/s")
	b.ReportMetric(rate(bl), "blob_ops/s")
	b.ReportMetric(rate(f)/rate(bl), "ratio")
	b.ReportMetric(float64(p99(f).Microseconds()), "file_p99_µs")
	b.ReportMetric(float64(p99(bl).Microseconds()), "blob_p99_µs")
	b.Logf("%d clients, %d calls a side in %d alternating rounds: Get File Properties %.0f ops/s (p99 %v), Get Blob Properties %.0f ops/s (p99 %v): ratio %s",
		clients, len(f.lat), rounds, rate(f), p99(f), rate(bl), p99(bl), fmt.Sprintf("%.2f (aim ≥ 1)", rate(f)/rate(bl)))
}
