package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
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
// process, b.N calls a side in nine rounds, the sides taking turns to go
// first. Reports each side's ops/s and p99 over all rounds and the median
// of the per-round ratios FileREST ÷ Blob (aim ≥ 1, and p99 < 5 ms): a
// shared machine's speed drifts between rounds by more than the sides
// differ, and a round's two halves run back to back. Beside them, the CPU
// time per call of the serve process and of the SDK clients (this
// process) on each side, which the machine's other work does not inflate.
//
//	go test ./integration -run '^$' -bench '^BenchmarkGetPropertiesFileVsBlob$' -benchtime 9000x
func BenchmarkGetPropertiesFileVsBlob(b *testing.B) {
	const clients, rounds = 16, 9
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
		cpu     time.Duration // serve's CPU during the side's turns
		client  time.Duration // the SDK clients' (this process's) CPU then
		lat     []time.Duration
	}
	sides := []*side{
		{name: "file", call: func() error { _, err := fc.GetProperties(ctx, nil); return err }},
		{name: "blob", call: func() error { _, err := bc.GetProperties(ctx, nil); return err }},
	}
	run := func(s *side, n int) time.Duration {
		work := make(chan struct{}, n)
		for range n {
			work <- struct{}{}
		}
		close(work)
		var mu sync.Mutex
		var wg sync.WaitGroup
		cpu0, err := processCPU(srv.Cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		own0, err := processCPU(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
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
		d := time.Since(t0)
		cpu1, err := processCPU(srv.Cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		own1, err := processCPU(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		s.client += own1 - own0
		s.elapsed += d
		s.cpu += cpu1 - cpu0
		return d
	}
	for _, s := range sides {
		run(s, 200) // warm
		s.elapsed, s.cpu, s.client, s.lat = 0, 0, 0, nil
	}
	per := max(b.N/rounds, clients)
	var ratios []float64
	b.ResetTimer()
	for i := range rounds {
		var spent [2]time.Duration
		for j := range sides {
			k := (i + j) % len(sides)
			spent[k] = run(sides[k], per)
		}
		ratios = append(ratios, spent[1].Seconds()/spent[0].Seconds()) // same calls: time blob ÷ time file
	}
	b.StopTimer()
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	rate := func(s *side) float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }
	p99 := func(s *side) time.Duration {
		slices.Sort(s.lat)
		return s.lat[min(len(s.lat)-1, len(s.lat)*99/100)]
	}
	f, bl := sides[0], sides[1]
	b.ReportMetric(rate(f), "file_ops/s")
	b.ReportMetric(rate(bl), "blob_ops/s")
	b.ReportMetric(median, "ratio")
	b.ReportMetric(float64(p99(f).Microseconds()), "file_p99_µs")
	b.ReportMetric(float64(p99(bl).Microseconds()), "blob_p99_µs")
	perCall := func(d time.Duration, s *side) float64 { return float64(d.Microseconds()) / float64(len(s.lat)) }
	b.ReportMetric(perCall(f.cpu, f), "file_serve_cpu_µs/op")
	b.ReportMetric(perCall(bl.cpu, bl), "blob_serve_cpu_µs/op")
	b.ReportMetric(perCall(f.client, f), "file_client_cpu_µs/op")
	b.ReportMetric(perCall(bl.client, bl), "blob_client_cpu_µs/op")
	b.Logf("%d clients, %d calls a side in %d alternating rounds: Get File Properties %.0f ops/s (p99 %v), Get Blob Properties %.0f ops/s (p99 %v): ratio per round %.2f, median %s; CPU per call: serve %.0f µs (file) and %.0f µs (blob), the SDK clients %.0f µs (file) and %.0f µs (blob)",
		clients, len(f.lat), rounds, rate(f), p99(f), rate(bl), p99(bl), ratios, fmt.Sprintf("%.2f (aim ≥ 1)", median),
		perCall(f.cpu, f), perCall(bl.cpu, bl), perCall(f.client, f), perCall(bl.client, bl))
}

// processCPU is the user and system CPU time process pid has used
// (/proc/PID/stat, in the kernel's USER_HZ ticks of 10 ms): less noisy on
// a shared machine than rates, as the other work there does not count.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ... : comm may hold spaces, so split after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15 of the line
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	const userHZ = 100 // USER_HZ, 100 on every Linux architecture Go runs on
	return time.Duration(ticks) * time.Second / userHZ, nil
}
