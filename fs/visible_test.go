package fs

import (
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// openVisible opens path for reading and writing with VisibleWrites (as the
// SMB server opens), or without.
func (e *env) openVisible(path string, visible bool) *Handle {
	e.t.Helper()
	h, _, err := e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: path, Disposition: DispositionOpen,
		Open: OpenOptions{Access: rw, Share: allShare, VisibleWrites: visible}})
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	e.t.Cleanup(func() { h.Close(ctxBG) })
	return h
}

// TestVisibleWritesSameProcess: a write through a VisibleWrites handle is
// seen by every reader of the FileSystem once WriteAt returns — REST Get
// File, Stat, List, the mount's GetAttr, LookupStat and ReadDir, another
// handle's read and size — with no Flush. A handle without VisibleWrites
// keeps its writes to itself until it flushes.
func TestVisibleWritesSameProcess(t *testing.T) {
	e := newEnv(t)
	sh := e.share("shr")
	readers := []struct {
		name string
		size func(t *testing.T, h *Handle) int64
	}{
		{"Get File", func(t *testing.T, h *Handle) int64 { return int64(len(e.content("shr/f"))) }},
		{"Stat", func(t *testing.T, h *Handle) int64 {
			a, _, err := e.fs.Stat(ctxBG, "shr/f", "")
			mustNil(t, err, "stat")
			return a.Size
		}},
		{"ListDirectory", func(t *testing.T, h *Handle) int64 {
			l, err := e.fs.ListDirectory(ctxBG, "shr", ListRequest{})
			mustNil(t, err, "list")
			return l.Entries[0].Size
		}},
		{"GetAttr", func(t *testing.T, h *Handle) int64 {
			a, err := e.fs.GetAttr(ctxBG, h.File())
			mustNil(t, err, "getattr")
			return a.Size
		}},
		{"LookupStat", func(t *testing.T, h *Handle) int64 {
			a, err := e.fs.LookupStat(ctxBG, sh, "f")
			mustNil(t, err, "lookup")
			return a.Size
		}},
		{"ReadDir", func(t *testing.T, h *Handle) int64 {
			l, err := e.fs.ReadDir(ctxBG, sh)
			mustNil(t, err, "readdir")
			return l[0].Size
		}},
		{"other handle's read", func(t *testing.T, h *Handle) int64 {
			o := e.mustOpen("shr/f", locks.AccessRead, allShare, DispositionOpen)
			defer o.Close(ctxBG)
			p := make([]byte, 100)
			n, _ := o.ReadAt(ctxBG, p, 0)
			return int64(n)
		}},
		{"other handle's size", func(t *testing.T, h *Handle) int64 {
			o := e.mustOpen("shr/f", locks.AccessRead, allShare, DispositionOpen)
			defer o.Close(ctxBG)
			n, err := o.Size(ctxBG)
			mustNil(t, err, "size")
			return n
		}},
	}
	e.putFile("shr/f", []byte("old!"))
	for _, r := range readers {
		for _, visible := range []bool{true, false} {
			a, _, err := e.fs.Stat(ctxBG, "shr/f", "")
			mustNil(t, err, "stat")
			size := a.Size
			h := e.openVisible("shr/f", visible)
			if _, err := h.WriteAt(ctxBG, []byte("+"), size); err != nil {
				t.Fatal(err)
			}
			want := size + 1
			if !visible {
				want = size
			}
			if got := r.size(t, h); got != want {
				t.Errorf("%s after a write through a handle with VisibleWrites %v: size %d, want %d", r.name, visible, got, want)
			}
			mustNil(t, h.Close(ctxBG), "close")
		}
	}
}

// TestVisibleWritesOtherProcess: a FileSystem over the same data (another
// process: a mount or a session) sees a VisibleWrites handle's answered
// write within VisibleWithin, with no Flush.
func TestVisibleWritesOtherProcess(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	a.share("shr")
	a.putFile("shr/f", []byte("old!"))
	b := openEnv(t, dir)
	h := a.openVisible("shr/f", true)
	if _, err := h.WriteAt(ctxBG, []byte("new!+more"), 0); err != nil {
		t.Fatal(err)
	}
	wrote := time.Now()
	for {
		got, err := b.get("shr/f")
		mustNil(t, err, "read in the other process")
		if string(got) == "new!+more" {
			break
		}
		if string(got) != "old!" {
			t.Fatalf("the other process reads %q: neither before nor after the write", got)
		}
		if time.Since(wrote) > VisibleWithin+2*time.Second { // slack for a loaded machine
			t.Fatalf("the other process still reads %q %v after the write, bound %v", got, time.Since(wrote), VisibleWithin)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("seen by the other process after %v", time.Since(wrote))
}
