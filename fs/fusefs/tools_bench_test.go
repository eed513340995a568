package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkTools times what users run on a tree of small files — tar -x of
// a tarball, ls -lR of the result, rm -rf of it — each as the real tool in
// a process of its own, on three sides in one run: the plain disk
// directory, go-fuse's loopback over a directory on the same disk, and
// blobshare. For each tool the three sides take turns (the first to go
// rotating from round to round, one round per b.N), so drift of the shared
// machine falls on all of them alike. It reports each side's seconds per
// tool and blobshare's speed relative to the disk and to the loopback
// (time of the other side / time of blobshare: 1 is as fast).
//
// The tree has benchToolsFiles files (5,000 with BLOBSHARE_BENCH_FULL=1, a
// tenth otherwise) of 1–8 KiB in directories of 100, two levels deep.
func BenchmarkTools(b *testing.B) {
	n := benchToolsFiles()
	tools := userTools(b, n)

	disk := filepath.Join(b.TempDir(), "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		b.Fatal(err)
	}
	targets := benchTargets(b)
	sides := [...]benchTarget{{"disk", disk}, targets[0], targets[1]}

	var spent [len(tools)][len(sides)]time.Duration
	b.ResetTimer()
	for round := range b.N {
		for ti, tool := range tools {
			for j := range sides {
				k := (j + round + ti) % len(sides)
				d, err := tool.run(sides[k].dir)
				if err != nil {
					b.Fatalf("%s: %v", sides[k].name, err)
				}
				spent[ti][k] += d
			}
		}
	}
	b.StopTimer()
	for ti, tool := range tools {
		per := func(k int) float64 { return spent[ti][k].Seconds() / float64(b.N) }
		d, lb, bs := per(0), per(1), per(2)
		b.Logf("%s of %d files: disk %.2f s, loopback %.2f s, blobshare %.2f s; blobshare/disk %.2f, blobshare/loopback %.2f",
			tool.name, n, d, lb, bs, d/bs, lb/bs)
		b.ReportMetric(d/bs, "vs-disk-"+tool.name)
		b.ReportMetric(lb/bs, "vs-loopback-"+tool.name)
	}
}

// userTool is one tool of BenchmarkTools, run on a directory.
type userTool struct {
	name string
	run  func(dir string) (time.Duration, error)
}

// userTools are tar -x of a tarball of a tree of n files (makeToolsTarball)
// into a directory, ls -lR of the tree there (which must list n files)
// and rm -rf of it, in that order, each timed as the process it runs.
func userTools(b *testing.B, n int) [3]userTool {
	tarPath := needTool(b, "tar")
	lsPath := needTool(b, "ls")
	rmPath := needTool(b, "rm")
	tarball := makeToolsTarball(b, tarPath, n)
	run := func(name string, check func(out string) error, cmd func(dir string) *exec.Cmd) userTool {
		return userTool{name, func(dir string) (time.Duration, error) {
			c := cmd(dir)
			var stderr strings.Builder
			c.Stderr = &stderr
			start := time.Now()
			out, err := c.Output()
			d := time.Since(start)
			if err != nil {
				return d, fmt.Errorf("%s in %s: %w\n%s", name, dir, err, stderr.String())
			}
			if check != nil {
				if err := check(string(out)); err != nil {
					return d, fmt.Errorf("%s in %s: %w", name, dir, err)
				}
			}
			return d, nil
		}}
	}
	listed := func(out string) error {
		if got := strings.Count(out, "\n-"); got != n {
			return fmt.Errorf("listed %d files, want %d", got, n)
		}
		return nil
	}
	return [...]userTool{
		run("tar-x", nil, func(dir string) *exec.Cmd { return exec.Command(tarPath, "-xf", tarball, "-C", dir) }),
		run("ls-lR", listed, func(dir string) *exec.Cmd { return exec.Command(lsPath, "-lR", filepath.Join(dir, "tree")) }),
		run("rm-rf", nil, func(dir string) *exec.Cmd { return exec.Command(rmPath, "-rf", filepath.Join(dir, "tree")) }),
	}
}

func benchToolsFiles() int {
	if benchFull() {
		return 5000
	}
	return 500
}

// makeToolsTarball writes a tree of n files under tree/dNN/ (100 per
// directory) on the plain disk and returns a tarball of it.
func makeToolsTarball(b *testing.B, tarPath string, n int) string {
	b.Helper()
	src := b.TempDir()
	buf := make([]byte, 8<<10)
	for i := range buf {
		buf[i] = byte(i*31 + 7)
	}
	for i := range n {
		dir := filepath.Join(src, "tree", fmt.Sprintf("d%02d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		size := 1<<10 + (i*977)%(7<<10)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), buf[:size], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tarball := filepath.Join(b.TempDir(), "tree.tar")
	if out, err := exec.Command(tarPath, "-cf", tarball, "-C", src, "tree").CombinedOutput(); err != nil {
		b.Fatalf("tar -c: %v\n%s", err, out)
	}
	return tarball
}
