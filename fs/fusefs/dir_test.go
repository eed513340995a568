package fusefs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
)

// TestReaddirPlusAttributes: a listing gives the kernel every entry's
// attributes (READDIRPLUS, answered from the one listing query), and they
// are the attributes a lookup reports: files the kernel has never seen,
// made behind its back, show their sizes, times and kinds; a file open for
// writing on the mount shows the size its handle sees.
func TestReaddirPlusAttributes(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for name, size := range map[string]int64{"a": 3, "b": 100000, "empty": 0} {
		if _, err := tfs.fsys.CreateFile(ctx, fs.CreateFileRequest{Path: "share/" + name, Size: size,
			Props: fs.SMBProperties{LastWrite: &mtime}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(share, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(filepath.Join(share, "growing"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(make([]byte, 5000)); err != nil { // staged, not committed
		t.Fatal(err)
	}

	ents, err := os.ReadDir(share)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		size int64
		dir  bool
	}{"a": {3, false}, "b": {100000, false}, "empty": {0, false}, "growing": {5000, false}, "sub": {0, true}}
	if len(ents) != len(want) {
		t.Fatalf("listing %v, want %d entries", ents, len(want))
	}
	for _, e := range ents {
		w, ok := want[e.Name()]
		if !ok {
			t.Errorf("unexpected entry %q", e.Name())
			continue
		}
		info, err := e.Info() // lstat: answered from what the listing gave the kernel
		if err != nil {
			t.Fatal(err)
		}
		if info.IsDir() != w.dir || (!w.dir && info.Size() != w.size) {
			t.Errorf("%s: dir %v size %d, want dir %v size %d", e.Name(), info.IsDir(), info.Size(), w.dir, w.size)
		}
		if e.Name() == "a" && !info.ModTime().Equal(mtime) {
			t.Errorf("a: mtime %v, want %v", info.ModTime(), mtime)
		}
	}
}
