// Command bench runs every benchmark of blobshare in one go and prints the
// figures that matter: ratios measured within one run against a baseline on
// the same machine (the mount against go-fuse's loopback, the local blob
// store against a plain file copy, REST against Azurite's Blob API), and the
// lock table's rates.
//
//	go run ./bench            # quick sizes (tens of MiB)
//	go run ./bench -full      # the sizes the issues name (1 GiB, 10,000 files, 2 GiB RSS run)
//	go run ./bench -readme    # also rewrite the figures block of README.md
//
// It shells out to `go test -bench` for each package, so each benchmark is
// the same code `go test -bench` runs; this program only selects, collects
// and summarises.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// suite is one `go test -bench` invocation.
type suite struct {
	pkg   string
	bench string // -bench pattern
	time  string // -benchtime
	what  string // one line for the summary
}

var suites = []suite{
	{"./locks", ".", "1s", "lock table: open+close pairs/s and REST checks/s (aim ≥ 10,000 pairs/s, flat in handles elsewhere)"},
	{"./blobstore/local", "Sequential", "1x", "local blob store vs plain file copy, sequential MB/s (aim ≥ 0.8)"},
	{"./fs/fusefs", "^BenchmarkSeq", "2x", "mount vs go-fuse loopback over the same disk, sequential 1 GiB, 2 rounds taking turns to go first (aim ≥ 1.0)"},
	{"./fs/fusefs", "PeakRSS", "1x", "mount's peak RSS writing 2 GiB (aim < 200 MiB)"},
	// Small files alternate loopback and blobshare three times (after a
	// first round go test runs to size the benchmark): the loopback's
	// metadata speed follows the shared disk's mood, and rounds side by
	// side see the same moods.
	{"./fs/fusefs", "SmallFiles$", "3x", "mount vs go-fuse loopback, 10,000 small files from a child process, 3 alternating rounds: create, stat, readdir, rename, unlink (aim ≥ 0.8 each)"},
	{"./fs/fusefs", "SmallFilesInProcess", "1x", "the same with the client in the benchmark's process (aim ≥ 0.8 each)"},
	{"./fs/fusefs", "SmallFilesFloor", "3x", "the ceiling of the two above: loopback vs loopback plus the least SQLite work of a namespace in blobshare's database (a row read per LOOKUP and GETATTR, a one-statement commit per CREATE, RENAME and UNLINK, writing one page or an unlink's five)"},
	{"./fs/fusefs", "^BenchmarkTools$", "3x", "tar -x, ls -lR, rm -rf of a 5,000-file tree on plain disk, go-fuse loopback and blobshare, 3 alternating rounds: blobshare's speed vs each"},
	{"./fs/fusefs", "^BenchmarkFlatness$", "1x", "small-files loop in a share holding 100,000 files with 10,000 open handles vs an empty share (1 = flat)"},
	{"./rest", "^BenchmarkTransfer$", "3x", "REST upload/download with the Go SDK vs Azurite's Blob API with azblob, 3 rounds taking turns to go first, each side after the same page-cache warm-up (aim ≥ 10× up, ≥ 5× down; up_vs_disk4 ≥ 0.8: the upload vs 4 writers each fsyncing every 4 MiB; up_vs_sink ≥ 0.5: vs a FileREST server that stores nothing; medians of the rounds' ratios)"},
	{"./rest", "^BenchmarkGetFileProperties$", "2000x", "Get File Properties latency under 16 concurrent clients"},
	{"./queue", "^BenchmarkQueueCycles$", "3000x", "Queue put+get+delete cycles/s from 16 workers vs Azurite's Queue service, 3 alternating rounds (aim ≥ 5×, p99 below Azurite's)"},
	{"./blob", "^BenchmarkBlobTransfer$", "3x", "Blob service upload/download with azblob vs Azurite, 4 MiB blocks, 4 in flight, 3 rounds taking turns to go first, each side after the same page-cache warm-up (aim ≥ 10× up, ≥ 5× down; up_vs_disk4 ≥ 0.8: the upload vs 4 writers each fsyncing every 4 MiB; up_vs_sink ≥ 0.5: vs a server that stores nothing; medians of the rounds' ratios)"},
	{"./blob", "^BenchmarkBlobGetProperties$", "4000x", "Get Blob Properties from 16 clients vs Azurite (aim ≥ 5× ops/s, p99 below Azurite's)"},
	{"./smb", "SmbclientVsSmbd|ServeRSS", "1x", "smbclient put/get and small-file mput, blobshare vs Samba's smbd on the same disk (aim ≥ 1.0 read, ≥ 0.8 write and small files); serve peak RSS (aim < 200 MiB)"},
}

// result is one benchmark line.
type result struct {
	pkg, name string
	metrics   []metric
}

type metric struct {
	value float64
	unit  string
}

func main() {
	full := flag.Bool("full", false, "run the full sizes the issues name (slow)")
	readme := flag.Bool("readme", false, "rewrite the figures block of README.md")
	flag.Parse()
	if err := run(*full, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(full, readme bool) error {
	var all []result
	start := time.Now()
	for _, s := range suites {
		fmt.Fprintf(os.Stderr, "== %s: %s\n", s.pkg, s.what)
		res, err := runSuite(s, full)
		if err != nil {
			return err
		}
		all = append(all, res...)
	}
	table := render(all, full, time.Since(start))
	fmt.Print(table)
	if readme {
		return rewriteReadme("README.md", table)
	}
	return nil
}

func runSuite(s suite, full bool) ([]result, error) {
	args := []string{"test", "-run", "^$", "-bench", s.bench, "-benchtime", s.time, "-count", "1", "-timeout", "60m", s.pkg}
	cmd := exec.Command("go", args...)
	cmd.Env = os.Environ()
	if full {
		cmd.Env = append(cmd.Env, "BLOBSHARE_BENCH_FULL=1")
	}
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return parse(s.pkg, &out), nil
}

// parse reads `go test -bench` output: "BenchmarkX-2  N  v unit  v unit ...".
func parse(pkg string, r io.Reader) []result {
	var res []result
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		r := result{pkg: pkg, name: trimProcs(strings.TrimPrefix(f[0], "Benchmark"))}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if f[i+1] == "ns/op" || f[i+1] == "B/op" || f[i+1] == "allocs/op" {
				continue
			}
			r.metrics = append(r.metrics, metric{v, f[i+1]})
		}
		res = append(res, r)
	}
	return res
}

// trimProcs drops the "-GOMAXPROCS" suffix go test appends.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

func render(all []result, full bool, took time.Duration) string {
	var b strings.Builder
	mode := "quick sizes"
	if full {
		mode = "full sizes"
	}
	fmt.Fprintf(&b, "Measured %s on %s/%s, %d CPUs, %s (%s, %s).\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), mode, took.Round(time.Second))
	b.WriteString("| package | benchmark | figures |\n|---|---|---|\n")
	for _, r := range all {
		var parts []string
		for _, m := range r.metrics {
			parts = append(parts, formatMetric(m))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.TrimPrefix(r.pkg, "./"), r.name, strings.Join(parts, ", "))
	}
	return b.String()
}

func formatMetric(m metric) string {
	switch {
	case strings.Contains(m.unit, "ratio"):
		return fmt.Sprintf("**%s %.2f**", m.unit, m.value)
	case m.value >= 100:
		return fmt.Sprintf("%.0f %s", m.value, m.unit)
	default:
		return fmt.Sprintf("%.3g %s", m.value, m.unit)
	}
}

const (
	beginMark = "<!-- bench:begin -->"
	endMark   = "<!-- bench:end -->"
)

// rewriteReadme replaces the text between the bench markers.
func rewriteReadme(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s block", path, beginMark, endMark)
	}
	s = s[:i+len(beginMark)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
