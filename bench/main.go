// Command bench runs every benchmark of blobshare in one go and prints the
// figures that matter: ratios measured within one run against a baseline on
// the same machine (the mount against go-fuse's loopback, the local blob
// store against a plain file copy, REST against Azurite's Blob API), and the
// lock table's rates.
//
//	go run ./bench            # quick sizes (tens of MiB)
//	go run ./bench -full      # the sizes the issues name (1 GiB, 10,000 files, 2 GiB RSS run)
//	go run ./bench -readme    # also rewrite the figures block of README.md
//	go run ./bench -v         # also show go test's output as it runs
//	go run ./bench -suites Rclone   # only the suites whose package or pattern matches
//
// It shells out to `go test -bench` for each package, so each benchmark is
// the same code `go test -bench` runs; this program only selects, collects
// and summarises. While it runs it prints one heading per suite naming the
// sizes it runs; at the end the figures table and the table of aims (aims.go),
// each "met" or the figures that miss it.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/internal/diskbench"
)

// suite is one `go test -bench` invocation.
type suite struct {
	pkg   string
	bench string // -bench pattern
	time  string // -benchtime
	// what is its heading, naming the sizes this run uses: the quick ones
	// or, with -full, those the aims name.
	what func(z sizes) string
}

// sizes are the sizes of one run as the headings name them. They follow
// the benchmarks' own choices (benchSeqBytes, benchSmallFiles,
// benchRSSBytes, benchToolsFiles and the Flatness constants in
// fs/fusefs, benchSizes in smb, benchSize in blobstore/local,
// diskbench.TransferBytes for the REST and Blob transfers).
type sizes struct {
	full     bool
	transfer string // BLOBSHARE_BENCH_BYTES, or 64 MiB
}

// pick is quick or full as this run goes.
func (z sizes) pick(quick, full string) string {
	if z.full {
		return full
	}
	return quick
}

var suites = []suite{
	{"./locks", ".", "1s", func(sizes) string {
		return "lock table: open+close pairs/s and REST checks/s (aim ≥ 10,000 pairs/s, flat in handles elsewhere)"
	}},
	{"./blobstore/local", "Sequential", "1x", func(sizes) string {
		return "local blob store vs plain file copy, sequential MB/s, 256 MiB (aim ≥ 0.8)"
	}},
	{"./fs/fusefs", "^BenchmarkSeq", "2x", func(z sizes) string {
		return "mount vs go-fuse loopback over the same disk, sequential " + z.pick("64 MiB", "1 GiB") + ", 2 rounds taking turns to go first (aim ≥ 1.0 at 1 GiB)"
	}},
	{"./fs/fusefs", "PeakRSS", "1x", func(z sizes) string {
		return "mount's peak RSS writing " + z.pick("256 MiB", "2 GiB") + " (aim < 200 MiB writing 2 GiB)"
	}},
	// Small files alternate loopback and blobshare three times (after a
	// first round go test runs to size the benchmark): the loopback's
	// metadata speed follows the shared disk's mood, and rounds side by
	// side see the same moods.
	{"./fs/fusefs", "^BenchmarkSmallFiles$", "3x", func(z sizes) string {
		return "mount vs go-fuse loopback, " + z.pick("1,000", "10,000") + " small files from a child process, 3 alternating rounds: create, stat, readdir, rename, unlink (aim ≥ 0.8 each)"
	}},
	{"./fs/fusefs", "SmallFilesInProcess", "1x", func(z sizes) string {
		return "the same with the client in the benchmark's process, " + z.pick("1,000", "10,000") + " files (aim ≥ 0.8 each)"
	}},
	{"./fs/fusefs", "SmallFilesFloor", "3x", func(z sizes) string {
		return "the ceiling of the two above, " + z.pick("1,000", "10,000") + " files: loopback vs loopback plus the least SQLite work of a namespace in blobshare's database (a row read per LOOKUP and GETATTR, a one-statement commit per CREATE, RENAME and UNLINK, writing one page or an unlink's five)"
	}},
	{"./fs/fusefs", "^BenchmarkTools$", "3x", func(z sizes) string {
		return "tar -x, ls -lR, rm -rf of a " + z.pick("500", "5,000") + "-file tree on plain disk, go-fuse loopback and blobshare, 3 alternating rounds: blobshare's speed vs each"
	}},
	// rclone's mount (v1.68.2, --vfs-cache-mode writes), built from
	// integration/rclone's module on first use and cached, over a local
	// directory and over Azurite's Blob service: the peer a user would
	// mount instead. Each round's ratio is blobshare ÷ rclone; the median
	// of the rounds is reported.
	{"./fs/fusefs", "^BenchmarkRcloneSmallFiles$", "3x", func(z sizes) string {
		return "mount vs rclone mount (v1.68.2, VFS cache writes) over a local directory and over Azurite, " + z.pick("1,000", "10,000") + " small files from a child process, 3 alternating rounds, median ratio blobshare ÷ rclone (aim ≥ 2 each)"
	}},
	{"./fs/fusefs", "^BenchmarkRcloneTools$", "3x", func(z sizes) string {
		return "mount vs rclone mount, tar -x, ls -lR, rm -rf of a " + z.pick("500", "5,000") + "-file tree, 3 alternating rounds, median ratio blobshare ÷ rclone (aim ≥ 2 each)"
	}},
	{"./fs/fusefs", "^BenchmarkRcloneSeq", "5x", func(z sizes) string {
		return "mount vs rclone mount, sequential write (fsync as asked, and then syncfs: rclone's fsync is a no-op) and read of " + z.pick("64 MiB", "1 GiB") + ", 5 alternating rounds, median ratio (aim ≥ 1)"
	}},
	{"./fs/fusefs", "^BenchmarkFlatness$", "1x", func(z sizes) string {
		return "small-files loop of " + z.pick("1,000", "10,000") + " files in a share holding " + z.pick("10,000 files with 1,000", "100,000 files with 10,000") + " open handles vs an empty share (1 = flat)"
	}},
	{"./filerest", "^BenchmarkTransfer$", "3x", func(z sizes) string {
		return "REST upload/download of " + z.transfer + " with the Go SDK vs Azurite's Blob API with azblob, 3 rounds, the sides (4-writer fsynced disk, 1-writer disk, a no-op server, blobshare, Azurite) taking turns after a page-cache warm-up (aim up ≥ 0.8 of the 4-writer durable disk and ≥ 0.5 of the no-op server, down ≥ 5× Azurite; at 1 GiB: BLOBSHARE_BENCH_BYTES=1073741824)"
	}},
	{"./filerest", "^BenchmarkGetFileProperties$", "2000x", func(sizes) string {
		return "Get File Properties latency under 16 concurrent clients (aim p99 < 5 ms)"
	}},
	{"./integration", "^BenchmarkGetPropertiesFileVsBlob$", "9000x", func(sizes) string {
		return "Get File Properties vs Get Blob Properties from 16 clients each on one serve, 9 alternating rounds, median ratio (aim FileREST ≥ Blob ops/s, p99 < 5 ms)"
	}},
	{"./queue", "^BenchmarkQueueCycles$", "3000x", func(sizes) string {
		return "Queue put+get+delete cycles/s from 16 workers vs Azurite's Queue service, 3 alternating rounds (aim ≥ 5×, p99 below Azurite's)"
	}},
	{"./table", "^BenchmarkTableCycles$", "3000x", func(sizes) string {
		return "Table insert+point query+merge cycles from 16 clients vs Azurite's Table service, 3 alternating rounds (aim ≥ 10× ops/s, p99 below Azurite's)"
	}},
	{"./table", "^BenchmarkTableRangeQuery$", "1x", func(z sizes) string {
		return "Table PartitionKey-range query (a tenth of " + z.pick("10,000", "100,000") + " entities) walked to its end vs Azurite, alternating rounds (aim ≥ 10×)"
	}},
	{"./table", "^BenchmarkTableServeMemory$", "1x", func(z sizes) string {
		return "serve's peak RSS answering a full scan, a range query and 1,000 point reads over 10,000 and then " + z.pick("100,000", "1,000,000") + " entities (aim flat)"
	}},
	{"./integration/multinode", "^Benchmark(Queue|Table)Nodes$", "1500x", func(sizes) string {
		return "Queue put+get+delete and Table upsert+get ops/s from 8 clients on 1, 2 and 3 serve nodes on one PostgreSQL, requests alternating between the nodes, and the ratio to one node (x1node; the nodes share this machine's cores: no aim)"
	}},
	{"./blob", "^BenchmarkBlobTransfer$", "3x", func(z sizes) string {
		return "Blob service upload/download of " + z.transfer + " with azblob vs Azurite, 4 MiB blocks, 4 in flight, 3 rounds, the sides (4-writer fsynced disk, a server that stores nothing, blobshare, Azurite) taking turns after a page-cache warm-up (aim up ≥ 0.8 of the 4-writer durable disk and ≥ 0.5 of the no-op server, down ≥ 5× Azurite)"
	}},
	{"./blob", "^BenchmarkBlobGetProperties$", "4000x", func(sizes) string {
		return "Get Blob Properties from 16 clients vs Azurite (aim ≥ 5× ops/s, p99 below Azurite's)"
	}},
	{"./smb", "SmbclientVsSmbd|ServeRSS", "1x", func(z sizes) string {
		return "smbclient put/get of " + z.pick("128 MiB", "1 GiB") + " and mput of " + z.pick("300", "5,000") + " small files, blobshare vs Samba's smbd on the same disk (aim ≥ 1.0 read, ≥ 0.8 write and small files); serve's peak RSS through " + z.pick("256 MiB", "2 GiB") + " (aim < 200 MiB)"
	}},
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
	verbose := flag.Bool("v", false, "show go test's output as it runs (otherwise only when a suite fails)")
	only := flag.String("suites", "", "run only the suites whose package or -bench pattern matches this regular expression")
	flag.Parse()
	if *readme && *only != "" {
		// The README's table is one run of every suite.
		fmt.Fprintln(os.Stderr, "bench: -readme rewrites the whole table: it runs every suite, not -suites")
		os.Exit(2)
	}
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -suites:", err)
		os.Exit(2)
	}
	if err := run(selectSuites(re), *full, *readme, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// selectSuites returns the suites whose package or -bench pattern re
// matches (all of them for an empty re).
func selectSuites(re *regexp.Regexp) []suite {
	var sel []suite
	for _, s := range suites {
		if re.MatchString(s.pkg) || re.MatchString(s.bench) {
			sel = append(sel, s)
		}
	}
	return sel
}

func run(suites []suite, full, readme, verbose bool) error {
	n, err := diskbench.TransferBytes()
	if err != nil {
		return err
	}
	z := sizes{full: full, transfer: formatBytes(n)}
	var all []result
	start := time.Now()
	for i, s := range suites {
		fmt.Fprintf(os.Stderr, "== %d/%d %s: %s\n", i+1, len(suites), s.pkg, s.what(z))
		began := time.Now()
		res, err := runSuite(s, full, verbose)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "   %d results in %s\n", len(res), time.Since(began).Round(time.Second))
		all = append(all, res...)
	}
	table := render(all, full, time.Since(start))
	fmt.Print(table)
	fmt.Println()
	fmt.Print(renderAims(all, full))
	if readme {
		return rewriteReadme("README.md", table)
	}
	return nil
}

// formatBytes names a byte count in the largest binary unit that divides
// it: 64 MiB, 1 GiB, else bytes.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

func runSuite(s suite, full, verbose bool) ([]result, error) {
	args := []string{"test", "-run", "^$", "-bench", s.bench, "-benchtime", s.time, "-count", "1", "-timeout", "60m", s.pkg}
	cmd := exec.Command("go", args...)
	cmd.Env = os.Environ()
	if full {
		cmd.Env = append(cmd.Env, "BLOBSHARE_BENCH_FULL=1")
	}
	// go test's own lines (about 200 for a run) go to stderr only with
	// -v, or when the suite fails, so that they explain the failure.
	var out, all bytes.Buffer
	if verbose {
		cmd.Stdout = io.MultiWriter(&out, os.Stderr)
		cmd.Stderr = os.Stderr
	} else {
		cmd.Stdout = io.MultiWriter(&out, &all)
		cmd.Stderr = &all
	}
	if err := cmd.Run(); err != nil {
		os.Stderr.Write(all.Bytes())
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
	if strings.Contains(m.unit, "ratio") {
		return fmt.Sprintf("**%s %.2f**", m.unit, m.value)
	}
	return formatValue(m.value) + " " + m.unit
}

// formatValue is a figure as the tables show it: whole above 100, three
// significant digits below.
func formatValue(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
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
