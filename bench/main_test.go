package main

import (
	"os"
	"path/filepath"
	"regexp"
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

func TestSelectSuites(t *testing.T) {
	for _, tc := range []struct {
		re   string
		want int
	}{
		{"", len(suites)},
		{"Rclone", 2},
		{`^\./queue$`, 1},
		{"no such suite", 0},
	} {
		if got := selectSuites(regexp.MustCompile(tc.re)); len(got) != tc.want {
			t.Errorf("-suites %q selected %d suites, want %d", tc.re, len(got), tc.want)
		}
	}
}
