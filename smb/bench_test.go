package smb_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/internal/procstat"
)

// Benchmark sizes: quick by default, the full sizes behind
// BLOBSHARE_BENCH_FULL=1 (1 GiB, 5,000 small files, a 2 GiB copy for
// the peak RSS).
func benchSizes() (large int64, smallFiles int, rssFile int64) {
	if os.Getenv("BLOBSHARE_BENCH_FULL") == "1" {
		return 1 << 30, 5000, 2 << 30
	}
	return 128 << 20, 300, 256 << 20
}

// smbPeer is one side of the comparison: an SMB server and how smbclient
// logs on to it.
type smbPeer struct {
	name, addr, share, user, password string
}

// smbclientRun runs smbclient commands against peer, bounded by a timeout,
// and returns how long the process took.
func smbclientRun(tb testing.TB, p smbPeer, commands ...string) time.Duration {
	tb.Helper()
	bin, err := exec.LookPath("smbclient")
	requireTool(tb, "smbclient", err)
	host, port, _ := strings.Cut(p.addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// Signing required on both sides: blobshare always requires it, and
	// smbd is measured doing the same work.
	cmd := exec.CommandContext(ctx, bin, "//"+host+"/"+p.share, "-p", port, "-U", p.user+"%"+p.password,
		"--option=client signing=required", "-c", strings.Join(commands, "; "))
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil || strings.Contains(string(out), "NT_STATUS_") {
		tb.Fatalf("smbclient %s %v: %v\n%s", p.name, commands, err, out)
	}
	return d
}

// BenchmarkSmbclientVsSmbd: smbclient put and get of a large file and a
// copy (mput) of many small files, against blobshare (in-process, over a
// data directory in a temp dir) and against Samba's smbd serving a temp
// directory on the same disk, alternating the sides round by round in
// one run. It reports each side's throughput and the ratios smbd time /
// blobshare time (above 1: blobshare faster). Run once:
//
//	go test -run '^$' -bench SmbclientVsSmbd -benchtime 1x ./smb
func BenchmarkSmbclientVsSmbd(b *testing.B) {
	large, smallFiles, _ := benchSizes()
	e := newEnv(b)
	e.mustShare("data")
	smbdDir := b.TempDir()
	d := startSmbd(b, smbdDir)
	peers := []smbPeer{
		{"blobshare", e.smbAddr, "data", filerest.DevAccount, filerest.DevKey},
		{"smbd", d.addr, d.share, d.user, d.password},
	}
	up, _ := randomFile(b, large)
	smallDir := b.TempDir()
	for i := range smallFiles {
		buf := make([]byte, 1024+i%4096)
		if _, err := rand.Read(buf); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(smallDir, fmt.Sprintf("f%05d.bin", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	down := filepath.Join(b.TempDir(), "down.bin")
	const rounds = 3
	type totals struct{ put, get, small time.Duration }
	sum := map[string]*totals{}
	for _, p := range peers {
		sum[p.name] = &totals{}
	}
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			// Alternate which side goes first, so that neither always
			// meets a warm or a cold page cache.
			order := peers
			if r%2 == 1 {
				order = []smbPeer{peers[1], peers[0]}
			}
			for _, p := range order {
				s := sum[p.name]
				// Each step starts after sync(2), so that neither side
				// writes back what the other left dirty.
				syscall.Sync()
				s.put += smbclientRun(b, p, "put "+up+" big.bin")
				syscall.Sync()
				s.get += smbclientRun(b, p, "get big.bin "+down)
				dir := fmt.Sprintf("small%d", r)
				syscall.Sync()
				s.small += smbclientRun(b, p, "mkdir "+dir, "cd "+dir, "lcd "+smallDir, "prompt off", "mput *")
			}
		}
	}
	b.StopTimer()
	n := float64(rounds * b.N)
	mbps := func(d time.Duration) float64 { return float64(large) * n / d.Seconds() / (1 << 20) }
	bs, sd := sum["blobshare"], sum["smbd"]
	b.ReportMetric(mbps(bs.put), "blobshare-put-MiB/s")
	b.ReportMetric(mbps(sd.put), "smbd-put-MiB/s")
	b.ReportMetric(mbps(bs.get), "blobshare-get-MiB/s")
	b.ReportMetric(mbps(sd.get), "smbd-get-MiB/s")
	b.ReportMetric(float64(smallFiles)*n/bs.small.Seconds(), "blobshare-small-files/s")
	b.ReportMetric(float64(smallFiles)*n/sd.small.Seconds(), "smbd-small-files/s")
	b.ReportMetric(sd.put.Seconds()/bs.put.Seconds(), "put-ratio")
	b.ReportMetric(sd.get.Seconds()/bs.get.Seconds(), "get-ratio")
	b.ReportMetric(sd.small.Seconds()/bs.small.Seconds(), "small-ratio")
	b.Logf("%d rounds, %d MiB file, %d small files: put %.2fx smbd, get %.2fx smbd, small files %.2fx smbd (smbd time / blobshare time)",
		rounds, large>>20, smallFiles, sd.put.Seconds()/bs.put.Seconds(), sd.get.Seconds()/bs.get.Seconds(), sd.small.Seconds()/bs.small.Seconds())
}

// BenchmarkServeRSS: the peak resident memory (VmHWM) of a `blobshare
// serve` process while smbclient puts and gets one large file (2 GiB with
// BLOBSHARE_BENCH_FULL=1): streaming keeps it far below the file's
// size (the aim: under 200 MiB).
//
//	go test -run '^$' -bench ServeRSS -benchtime 1x ./smb
func BenchmarkServeRSS(b *testing.B) {
	_, _, size := benchSizes()
	bin := filepath.Join(b.TempDir(), "blobshare")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/blobshare").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := servetest.Start(bin, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Stop() })
	cred, err := service.NewSharedKeyCredential(filerest.DevAccount, filerest.DevKey)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential(srv.RESTURL+"/", cred, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.NewShareClient("data").Create(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	up, _ := randomFile(b, size)
	down := filepath.Join(b.TempDir(), "down.bin")
	p := smbPeer{"blobshare", srv.SMBAddr, "data", filerest.DevAccount, filerest.DevKey}
	before := peakRSS(b, srv.Pid())
	b.ResetTimer()
	for range b.N {
		smbclientRun(b, p, "put "+up+" big.bin", "get big.bin "+down)
	}
	b.StopTimer()
	peak := peakRSS(b, srv.Pid())
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.Logf("serve peak RSS %d MiB (%d MiB before the copy) over a %d MiB put and get", peak>>20, before>>20, size>>20)
}

func peakRSS(tb testing.TB, pid int) int64 {
	tb.Helper()
	v, err := procstat.PeakRSS(pid)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
