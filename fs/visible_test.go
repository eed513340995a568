package fs

import (
	"sync/atomic"
	"testing"

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
// write at once, with no Flush: its reads ask the holder to commit
// (ns_unflushed) and wait for it — Get File, Stat, the mount's GetAttr,
// LookupStat and ReadDir, and a handle's read.
func TestVisibleWritesOtherProcess(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	sh := a.share("shr")
	a.putFile("shr/f", []byte("old!"))
	b := openEnv(t, dir)
	h := a.openVisible("shr/f", true)
	readers := []struct {
		name string
		size func(t *testing.T) int64
	}{
		{"Get File", func(t *testing.T) int64 {
			got, err := b.get("shr/f")
			mustNil(t, err, "get")
			return int64(len(got))
		}},
		{"Stat", func(t *testing.T) int64 {
			a, _, err := b.fs.Stat(ctxBG, "shr/f", "")
			mustNil(t, err, "stat")
			return a.Size
		}},
		{"GetAttr", func(t *testing.T) int64 {
			a, err := b.fs.GetAttr(ctxBG, h.File())
			mustNil(t, err, "getattr")
			return a.Size
		}},
		{"LookupStat", func(t *testing.T) int64 {
			a, err := b.fs.LookupStat(ctxBG, sh, "f")
			mustNil(t, err, "lookup")
			return a.Size
		}},
		{"ReadDir", func(t *testing.T) int64 {
			l, err := b.fs.ReadDir(ctxBG, sh)
			mustNil(t, err, "readdir")
			return l[0].Size
		}},
		{"ListDirectory", func(t *testing.T) int64 {
			l, err := b.fs.ListDirectory(ctxBG, "shr", ListRequest{})
			mustNil(t, err, "list")
			return l.Entries[0].Size
		}},
		{"a handle's read", func(t *testing.T) int64 {
			o := b.mustOpen("shr/f", locks.AccessRead, allShare, DispositionOpen)
			defer o.Close(ctxBG)
			p := make([]byte, 100)
			n, _ := o.ReadAt(ctxBG, p, 0)
			return int64(n)
		}},
	}
	size := int64(4)
	for _, r := range readers {
		if _, err := h.WriteAt(ctxBG, []byte("+"), size); err != nil {
			t.Fatal(err)
		}
		size++
		if got := r.size(t); got != size {
			t.Errorf("%s in the other process right after a write: size %d, want %d", r.name, got, size)
		}
	}
	if got := string(b.content("shr/f")); got != "old!+++++++" {
		t.Errorf("the other process reads %q, want %q", got, "old!+++++++")
	}
	if _, err := h.WriteAt(ctxBG, []byte("!"), 0); err != nil {
		t.Fatal(err)
	}
	if n := atomic.LoadInt64(b.fs.hint.n); n != 1 {
		t.Errorf("the shared hint counts %d rows with one handle's writes staged, want 1", n)
	}
	mustNil(t, h.Close(ctxBG), "close")
	if n := atomic.LoadInt64(b.fs.hint.n); n != 0 {
		t.Errorf("the shared hint counts %d rows after the writer closed, want 0", n)
	}
}

// TestVisibleWritesDeadHolder: the row of a process that died with staged
// writes (their owner session is gone) does not hold a
// reader up: the reader removes it and reads what is committed, and New
// removes such rows at start.
func TestVisibleWritesDeadHolder(t *testing.T) {
	dir := t.TempDir()
	e := openEnv(t, dir)
	e.share("shr")
	e.putFile("shr/f", []byte("old!"))
	a, _, err := e.fs.Stat(ctxBG, "shr/f", "")
	mustNil(t, err, "stat")
	insertDead := func() {
		err := e.table.Update(ctxBG, func(tx *locks.Tx) error {
			_, err := tx.SQL().ExecContext(tx.Context(), `INSERT INTO ns_unflushed(file, handle, owner, session) VALUES(?, 1, 'gone', 'no-such-session')`,
				int64(a.ID))
			return err
		})
		mustNil(t, err, "insert a dead holder's row")
		e.fs.hint.add(1) // as the dead process did before its row
	}
	rows := func(e *env) int {
		var n int
		err := e.table.View(ctxBG, func(tx *locks.Tx) error {
			return tx.SQL().QueryRowContext(tx.Context(), `SELECT count(*) FROM ns_unflushed`).Scan(&n)
		})
		mustNil(t, err, "count rows")
		return n
	}
	insertDead()
	if got := string(e.content("shr/f")); got != "old!" {
		t.Fatalf("read with a dead holder's row: %q, want %q", got, "old!")
	}
	if n := rows(e); n != 0 {
		t.Fatalf("%d rows left after a reader met a dead holder's row, want 0", n)
	}
	if n := atomic.LoadInt64(e.fs.hint.n); n != 0 {
		t.Fatalf("the shared hint counts %d rows after the reader removed the dead holder's, want 0", n)
	}
	insertDead()
	e.close()
	if n := rows(openEnv(t, dir)); n != 0 {
		t.Fatalf("%d rows left after New, want 0", n)
	}
}
