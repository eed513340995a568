package smb_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/smb"
)

// BenchmarkCachingOnOff: the same work against blobshare with oplocks and
// leases on (Config.Caching, as `blobshare serve` runs) and off (every
// CREATE answers oplock level none), alternating the sides round by round
// in one run: smbclient put and get of a large file and an mput of small
// files, and go-smb2 writing, then reading back, small files one open at
// a time. It reports the ratios time off / time on (1 or more: caching on
// costs nothing). Neither smbclient nor go-smb2 asks for an oplock or a
// lease: what caching on costs them is the lock table's one-statement
// "anything cached anywhere?" test before a CREATE's break check and
// grant and before a WRITE's. On a shared machine the ratios of one run
// scatter widely; take the median of several. Run once:
//
//	go test -run '^$' -bench CachingOnOff -benchtime 1x ./smb
func BenchmarkCachingOnOff(b *testing.B) {
	large, smallFiles, _ := benchSizes()
	large /= 2
	on := newEnv(b)
	off := newEnv(b, func(c *smb.Config) { c.Caching = nil })
	envs := map[string]*env{"on": on, "off": off}
	for _, e := range envs {
		e.mustShare("data")
	}
	up, _ := randomFile(b, large)
	smallDir := b.TempDir()
	small := make([][]byte, smallFiles)
	for i := range smallFiles {
		small[i] = make([]byte, 1024+i%4096)
		copy(small[i], fmt.Sprintf("file %d", i))
		if err := os.WriteFile(filepath.Join(smallDir, fmt.Sprintf("f%05d.bin", i)), small[i], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	down := filepath.Join(b.TempDir(), "down.bin")
	const rounds = 4
	type totals struct{ put, get, mput, goWrite, goRead time.Duration }
	sum := map[string]*totals{"on": {}, "off": {}}
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			order := []string{"on", "off"}
			if r%2 == 1 {
				order = []string{"off", "on"}
			}
			for _, side := range order {
				e, s := envs[side], sum[side]
				p := smbPeer{side, e.smbAddr, "data", filerest.DevAccount, filerest.DevKey}
				syscall.Sync()
				s.put += smbclientRun(b, p, "put "+up+" big.bin")
				s.get += smbclientRun(b, p, "get big.bin "+down)
				dir := fmt.Sprintf("small%d", r)
				s.mput += smbclientRun(b, p, "mkdir "+dir, "cd "+dir, "lcd "+smallDir, "prompt off", "mput *")
				sh := e.dial("data")
				gdir := fmt.Sprintf("go%d", r)
				if err := sh.Mkdir(gdir, 0o755); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for i, data := range small {
					if err := sh.WriteFile(fmt.Sprintf(`%s\f%05d.bin`, gdir, i), data, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				s.goWrite += time.Since(start)
				start = time.Now()
				for i := range small {
					if _, err := sh.ReadFile(fmt.Sprintf(`%s\f%05d.bin`, gdir, i)); err != nil {
						b.Fatal(err)
					}
				}
				s.goRead += time.Since(start)
			}
		}
	}
	b.StopTimer()
	o, f := sum["on"], sum["off"]
	ratio := func(off, on time.Duration) float64 { return off.Seconds() / on.Seconds() }
	b.ReportMetric(ratio(f.put, o.put), "put-off/on")
	b.ReportMetric(ratio(f.get, o.get), "get-off/on")
	b.ReportMetric(ratio(f.mput, o.mput), "mput-off/on")
	b.ReportMetric(ratio(f.goWrite, o.goWrite), "gosmb2-write-off/on")
	b.ReportMetric(ratio(f.goRead, o.goRead), "gosmb2-read-off/on")
	b.Logf("%d rounds, %d MiB file, %d small files, time off / time on: smbclient put %.2f get %.2f mput %.2f, go-smb2 write %.2f read %.2f",
		rounds, large>>20, smallFiles, ratio(f.put, o.put), ratio(f.get, o.get), ratio(f.mput, o.mput), ratio(f.goWrite, o.goWrite), ratio(f.goRead, o.goRead))
}
