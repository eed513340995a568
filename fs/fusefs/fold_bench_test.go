package fusefs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// mountFoldedShare is mountShare over a file system whose mount changes
// are folded (fs.Config.FoldMount): it returns the share's directory.
func mountFoldedShare(tb testing.TB) string {
	tb.Helper()
	needFUSE(tb)
	ctx := context.Background()
	data := tb.TempDir()
	table, err := locks.Open(ctx, filepath.Join(data, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		tb.Fatalf("locks.Open: %v", err)
	}
	store, err := local.New(filepath.Join(data, "blobs"))
	if err != nil {
		tb.Fatalf("local.New: %v", err)
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: testLogger(tb),
		SpillDir: filepath.Join(data, "spill"), FoldMount: true})
	if err != nil {
		tb.Fatalf("fs.New: %v", err)
	}
	tb.Cleanup(func() {
		if err := fsys.Close(ctx); err != nil {
			tb.Errorf("fs.Close: %v", err)
		}
		if err := table.Close(ctx); err != nil {
			tb.Errorf("locks.Close: %v", err)
		}
	})
	m := mountTestFS(tb, &testFS{data: data, table: table, fsys: fsys}, Options{ShareMode: DefaultShareMode})
	share := filepath.Join(m.Dir(), "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		tb.Fatalf("mkdir share: %v", err)
	}
	return share
}

// BenchmarkSmallFilesFolded is BenchmarkSmallFiles with blobshare's mount
// changes folded (fs.Config.FoldMount): loopback against folded, and, in
// the same run, plain (one transaction per request) against folded.
//
//	go test ./fs/fusefs -run '^$' -bench 'SmallFilesFolded' -benchtime 1x -count 5
func BenchmarkSmallFilesFolded(b *testing.B) {
	b.Run("loopback", func(b *testing.B) {
		benchSmallFilesWith(b, [2]benchTarget{{"loopback", mountLoopback(b).Dir()}, {"folded", mountFoldedShare(b)}}, smallFilesChild)
	})
	b.Run("plain", func(b *testing.B) {
		_, plain := mountShare(b)
		benchSmallFilesWith(b, [2]benchTarget{{"plain", plain}, {"folded", mountFoldedShare(b)}}, smallFilesChild)
	})
}

// BenchmarkToolsFolded is BenchmarkTools (tar -x, ls -lR, rm -rf) on
// go-fuse's loopback, blobshare and blobshare with folded mount changes,
// taking turns as there.
//
//	go test ./fs/fusefs -run '^$' -bench 'ToolsFolded' -benchtime 5x
func BenchmarkToolsFolded(b *testing.B) {
	n := benchToolsFiles()
	tools := userTools(b, n)
	_, plain := mountShare(b)
	sides := [...]benchTarget{{"loopback", mountLoopback(b).Dir()}, {"plain", plain}, {"folded", mountFoldedShare(b)}}
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
		lb, pl, fo := per(0), per(1), per(2)
		b.Logf("%s of %d files: loopback %.3f s, plain %.3f s, folded %.3f s; plain/loopback %.2f, folded/loopback %.2f",
			tool.name, n, lb, pl, fo, lb/pl, lb/fo)
		b.ReportMetric(lb/pl, "plain-vs-loopback-"+tool.name)
		b.ReportMetric(lb/fo, "folded-vs-loopback-"+tool.name)
	}
}
