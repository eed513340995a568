package fusefs

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// BenchmarkFlatness measures whether the small-files loop costs the
// same per file in a loaded share as in an empty one: two blobshare mounts,
// each over its own database, one with an empty share, the other with
// benchFlatFiles files already in its share (in a directory of their own)
// and benchFlatHandles handles open on them (through the core, as REST or
// SMB clients would hold them). The loop (smallFiles, its client in a
// child process) runs in a fresh directory of each share, the two mounts
// taking turns every smallFileChunk files. Each phase reports
// empty/loaded (1 is flat; below 1 the loaded share is slower).
//
// Full sizes (BLOBSHARE_BENCH_FULL=1): 100,000 files, 10,000 handles and
// 10,000 files in the loop; otherwise a tenth of each.
func BenchmarkFlatness(b *testing.B) {
	files, handles, n := benchFlatFiles, benchFlatHandles, benchSmallFiles()
	if !benchFull() {
		files, handles = files/10, handles/10
	}
	_, empty := mountShare(b)
	loadedFS, loaded := mountShare(b)
	populateShare(b, loadedFS.fsys, files, handles)

	dirs := [2]string{filepath.Join(empty, "work"), filepath.Join(loaded, "work")}
	for _, d := range dirs {
		run(b, "mkdir", d)
	}
	b.ResetTimer()
	var phases [2][len(smallFilePhases)]time.Duration
	for range b.N {
		spent, err := smallFilesChild(dirs, n)
		if err != nil {
			b.Fatal(err)
		}
		for k := range spent {
			for ph, d := range spent[k] {
				phases[k][ph] += d
			}
		}
	}
	b.StopTimer()
	for ph, phase := range smallFilePhases {
		per := func(k int) float64 { return float64(phases[k][ph].Microseconds()) / float64(n*b.N) }
		b.Logf("%s: empty share %.1f µs/file, %d files and %d open handles %.1f µs/file, empty/loaded %.2f",
			phase.name, per(0), files, handles, per(1), per(0)/per(1))
		b.ReportMetric(per(0)/per(1), "flat-"+strings.ReplaceAll(phase.name, "+", "-"))
	}
}

const (
	benchFlatFiles   = 100000
	benchFlatHandles = 10000
)

// populateShare creates files empty files in share/bulk/dNNN (1,000 per
// directory) through the core and leaves handles of them open (read, all
// sharing) until the benchmark ends.
func populateShare(b *testing.B, fsys *fs.FileSystem, files, handles int) {
	b.Helper()
	ctx := context.Background()
	share, err := fsys.Lookup(ctx, fs.RootID, "share")
	if err != nil {
		b.Fatal(err)
	}
	bulk, err := fsys.Mkdir(ctx, share.ID, "bulk")
	if err != nil {
		b.Fatal(err)
	}
	opts := fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareRead | locks.ShareWrite | locks.ShareDelete}
	var dir fs.Attr
	var open []*fs.Handle
	for i := range files {
		if i%1000 == 0 {
			if dir, err = fsys.Mkdir(ctx, bulk.ID, fmt.Sprintf("d%03d", i/1000)); err != nil {
				b.Fatal(err)
			}
		}
		h, _, err := fsys.Create(ctx, fs.CreateRequest{Parent: dir.ID, Name: fmt.Sprintf("f%06d", i), Exclusive: true, Open: opts})
		if err != nil {
			b.Fatal(err)
		}
		if len(open) < handles {
			open = append(open, h)
		} else if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for _, h := range open {
			_ = h.Close(ctx)
		}
	})
}
