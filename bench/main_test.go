package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseBenchOutput(t *testing.T) {
	out := `goos: linux
BenchmarkOpenClose/others=100-2         	   21690	     54321 ns/op	     18412 pairs/s
BenchmarkSeqWrite-2   	       1	2000000000 ns/op	       612.5 loopback-MB/s	       488.0 blobshare-MB/s	         0.7967 ratio
PASS
ok  	x	3.2s
`
	got := parse("./p", strings.NewReader(out))
	if len(got) != 2 {
		t.Fatalf("parsed %d results, want 2: %+v", len(got), got)
	}
	if got[0].name != "OpenClose/others=100" || len(got[0].metrics) != 1 || got[0].metrics[0].unit != "pairs/s" {
		t.Fatalf("first result %+v", got[0])
	}
	if r := got[1]; r.name != "SeqWrite" || len(r.metrics) != 3 || r.metrics[2].value != 0.7967 {
		t.Fatalf("second result %+v", r)
	}
	table := render(got, false, 0)
	if !strings.Contains(table, "**ratio 0.80**") {
		t.Fatalf("ratio not highlighted:\n%s", table)
	}
}

func TestRewriteReadme(t *testing.T) {
	p := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(p, []byte("a\n"+beginMark+"\nold\n"+endMark+"\nb\n"), 0o644)
	if err := rewriteReadme(p, "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := "a\n" + beginMark + "\nnew\n" + endMark + "\nb\n"; string(b) != want {
		t.Fatalf("README became %q, want %q", b, want)
	}
	os.WriteFile(p, []byte("no markers"), 0o644)
	if err := rewriteReadme(p, "x"); err == nil {
		t.Fatal("rewrite without markers succeeded")
	}
}

// readmeBenchmarks is the README's Benchmarks section.
func readmeBenchmarks(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Benchmarks\n")
	if !ok {
		t.Fatal("the README has no Benchmarks section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// tableRows are the cells of the rows of the first Markdown table in s
// whose header starts with header (separator row excluded).
func tableRows(s, header string) [][]string {
	var rows [][]string
	in := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	return rows
}

// TestAimsMatchREADME: the aims the bench checks are the README's table of
// aims, row for row (rows without an aim, "—", excepted), with the same
// measure and aim text.
func TestAimsMatchREADME(t *testing.T) {
	rows := tableRows(readmeBenchmarks(t), "| measure | aim | now |")
	if len(rows) == 0 {
		t.Fatal("no table of aims in the README")
	}
	byMeasure := map[string]aim{}
	for _, a := range aims {
		byMeasure[a.readme] = a
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if len(r) < 3 || r[1] == "—" {
			continue
		}
		a, ok := byMeasure[r[0]]
		switch {
		case !ok:
			t.Errorf("the README's aim %q has no entry in bench/aims.go", r[0])
		case a.aim != r[1]:
			t.Errorf("aim of %q: bench says %q, the README %q", r[0], a.aim, r[1])
		}
		seen[r[0]] = true
	}
	for _, a := range aims {
		if !seen[a.readme] {
			t.Errorf("bench/aims.go checks %q, which is not a row of the README's table of aims", a.readme)
		}
	}
}

// TestAimsNameMeasuredFigures: every figure an aim checks is one the
// benchmarks report, as the README's figures block (the output of a full
// run) shows them.
func TestAimsNameMeasuredFigures(t *testing.T) {
	sec := readmeBenchmarks(t)
	_, block, _ := strings.Cut(sec, beginMark)
	block, _, _ = strings.Cut(block, endMark)
	have := map[[3]string]bool{}
	for _, r := range tableRows(block, "| package | benchmark | figures |") {
		if len(r) < 3 {
			continue
		}
		pkg := "./" + strings.Trim(r[0], "`")
		for _, fig := range strings.Split(r[2], ", ") {
			f := strings.Fields(strings.Trim(fig, "*"))
			if len(f) != 2 {
				continue
			}
			unit := f[1]
			if _, err := strconv.ParseFloat(f[0], 64); err != nil {
				unit = f[0] // "**ratio 1.37**": unit first
			}
			have[[3]string{pkg, r[1], unit}] = true
		}
	}
	if len(have) == 0 {
		t.Fatal("no figures in the README's bench block")
	}
	for _, a := range aims {
		for _, c := range a.checks {
			refs := [][3]string{{c.pkg, c.name, c.unit}}
			if c.than != nil {
				refs = append(refs, [3]string{c.than.pkg, c.than.name, c.than.unit})
			}
			for _, ref := range refs {
				if !have[ref] {
					t.Errorf("aim %q checks %v, which no benchmark reported in the README's figures", a.readme, ref)
				}
			}
		}
	}
}

func TestAimVerdicts(t *testing.T) {
	fusefs := func(name, unit string, v float64) result {
		return result{pkg: "./fs/fusefs", name: name, metrics: []metric{{v, unit}}}
	}
	pair := []check{
		atLeast("write", "./fs/fusefs", "SeqWrite", "ratio", 1.0),
		atLeast("read", "./fs/fusefs", "SeqRead", "ratio", 1.0),
	}
	rss := []check{below("MiB", "./fs/fusefs", "PeakRSS", "peak-RSS-MiB", 200)}
	p99 := []check{{label: "p99 µs", pkg: "./q", name: "Q", unit: "mine", than: &figureRef{"./q", "Q", "theirs"}, factor: 1}}
	q := func(mine, theirs float64) result {
		return result{pkg: "./q", name: "Q", metrics: []metric{{mine, "mine"}, {theirs, "theirs"}}}
	}
	for _, tt := range []struct {
		name   string
		checks []check
		got    []result
		want   string
	}{
		{"both met", pair, []result{fusefs("SeqWrite", "ratio", 1.37), fusefs("SeqRead", "ratio", 1.0)}, "met"},
		{"one missed", pair, []result{fusefs("SeqWrite", "ratio", 1.37), fusefs("SeqRead", "ratio", 0.913)}, "**read 0.913**"},
		{"not run", pair, []result{fusefs("SeqWrite", "ratio", 1.37)}, "not measured (fs/fusefs SeqRead ratio)"},
		{"below met", rss, []result{fusefs("PeakRSS", "peak-RSS-MiB", 44)}, "met"},
		{"below missed at the bound", rss, []result{fusefs("PeakRSS", "peak-RSS-MiB", 200)}, "**MiB 200**"},
		{"against another figure, met", p99, []result{q(4297, 21701)}, "met"},
		{"against another figure, missed", p99, []result{q(30000, 21701)}, "**p99 µs 30000 against 21701**"},
	} {
		a := aim{readme: tt.name, aim: "-", checks: tt.checks}
		if got := a.verdict(indexFigures(tt.got)); got != tt.want {
			t.Errorf("%s: verdict %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestHeadingsNameTheSizesRun: a quick run's headings name the quick sizes,
// a full run's the full ones.
func TestHeadingsNameTheSizesRun(t *testing.T) {
	quick, full := sizes{transfer: "64 MiB"}, sizes{full: true, transfer: "1 GiB"}
	heading := func(z sizes, pkg, bench string) string {
		for _, s := range suites {
			if s.pkg == pkg && s.bench == bench {
				return s.what(z)
			}
		}
		t.Fatalf("no suite %s %s", pkg, bench)
		return ""
	}
	for _, tt := range []struct {
		pkg, bench  string
		quick, full string
	}{
		{"./fs/fusefs", "^BenchmarkSeq", "sequential 64 MiB,", "sequential 1 GiB,"},
		{"./fs/fusefs", "PeakRSS", "writing 256 MiB", "writing 2 GiB"},
		{"./fs/fusefs", "^BenchmarkSmallFiles$", "1,000 small files", "10,000 small files"},
		{"./fs/fusefs", "^BenchmarkTools$", "500-file tree", "5,000-file tree"},
		{"./fs/fusefs", "^BenchmarkRcloneTools$", "500-file tree", "5,000-file tree"},
		{"./fs/fusefs", "^BenchmarkFlatness$", "holding 10,000 files", "holding 100,000 files"},
		{"./filerest", "^BenchmarkTransfer$", "download of 64 MiB", "download of 1 GiB"},
		{"./smb", "SmbclientVsSmbd|ServeRSS", "put/get of 128 MiB and mput of 300", "put/get of 1 GiB and mput of 5,000"},
	} {
		if h := heading(quick, tt.pkg, tt.bench); !strings.Contains(h, tt.quick) {
			t.Errorf("quick heading of %s %s: %q lacks %q", tt.pkg, tt.bench, h, tt.quick)
		}
		if h := heading(full, tt.pkg, tt.bench); !strings.Contains(h, tt.full) {
			t.Errorf("full heading of %s %s: %q lacks %q", tt.pkg, tt.bench, h, tt.full)
		}
	}
	for _, tt := range []struct {
		n    int64
		want string
	}{{64 << 20, "64 MiB"}, {1 << 30, "1 GiB"}, {3 << 29, "1536 MiB"}, {1000, "1000 bytes"}} {
		if got := formatBytes(tt.n); got != tt.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestSelectSuites(t *testing.T) {
	for _, tc := range []struct {
		re   string
		want int
	}{
		{"", len(suites)},
		{"Rclone", 3},
		{`^\./queue$`, 1},
		{"no such suite", 0},
	} {
		if got := selectSuites(regexp.MustCompile(tc.re)); len(got) != tc.want {
			t.Errorf("-suites %q selected %d suites, want %d", tc.re, len(got), tc.want)
		}
	}
}
