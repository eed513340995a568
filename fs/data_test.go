package fs

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// readAll reads a whole file through a handle.
func readAll(t testing.TB, h *Handle) []byte {
	t.Helper()
	size, err := h.Size(ctxBG)
	mustNil(t, err, "size")
	buf := make([]byte, size)
	n, err := h.ReadAt(ctxBG, buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v", err)
	}
	return buf[:n]
}

func TestHandleWriteReadRanges(t *testing.T) {
	const B = BlockSize
	tests := []struct {
		name   string
		writes []struct{ off, n int }
	}{
		{"small at start", []struct{ off, n int }{{0, 10}}},
		{"one whole block", []struct{ off, n int }{{0, B}}},
		{"across a block boundary", []struct{ off, n int }{{B - 5, 10}}},
		{"three blocks and a bit", []struct{ off, n int }{{0, 3*B + 17}}},
		{"hole before data", []struct{ off, n int }{{2*B + 3, 100}}},
		{"overlapping writes", []struct{ off, n int }{{100, 1000}, {50, 100}, {900, 300}}},
		{"backwards", []struct{ off, n int }{{2 * B, 10}, {B, 10}, {0, 10}}},
		{"rewrite a staged whole block", []struct{ off, n int }{{0, B}, {10, 20}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			h := e.mustOpen("data/f", rw, allShare, DispositionCreate)
			var model []byte
			for i, w := range tt.writes {
				p := pattern(w.n, byte(i+1))
				_, err := h.WriteAt(ctxBG, p, int64(w.off))
				mustNil(t, err, "write")
				if end := w.off + w.n; end > len(model) {
					model = append(model, make([]byte, end-len(model))...)
				}
				copy(model[w.off:], p)
			}
			// Read-your-writes before any flush.
			if got := readAll(t, h); !bytes.Equal(got, model) {
				t.Fatalf("handle read before flush differs (len %d vs %d)", len(got), len(model))
			}
			mustNil(t, h.Close(ctxBG), "close")
			if got := e.content("data/f"); !bytes.Equal(got, model) {
				t.Fatalf("REST read after close differs (len %d vs %d)", len(got), len(model))
			}
			// Ranged REST reads at the edges.
			for _, r := range []struct{ off, n int64 }{{0, 1}, {int64(len(model)) - 1, 1}, {B - 1, 2}, {3, 5}} {
				if r.off < 0 || r.off+r.n > int64(len(model)) {
					continue
				}
				fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: r.off, Length: r.n, Ranged: true})
				mustNil(t, err, "ranged get")
				got, _ := io.ReadAll(fr)
				fr.Close()
				if !bytes.Equal(got, model[r.off:r.off+r.n]) {
					t.Fatalf("range %d+%d = %v want %v", r.off, r.n, got, model[r.off:r.off+r.n])
				}
			}
		})
	}
}

func TestUnflushedWritesInvisibleToOthers(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	e.putFile("data/f", []byte("0123456789"))
	w := e.mustOpen("data/f", rw, allShare, DispositionOpen)
	r := e.mustOpen("data/f", locks.AccessRead, allShare, DispositionOpen)
	_, err := w.WriteAt(ctxBG, []byte("AB"), 2)
	mustNil(t, err, "write")
	if got := readAll(t, r); string(got) != "0123456789" {
		t.Fatalf("other handle sees unflushed write: %q", got)
	}
	if got := string(e.content("data/f")); got != "0123456789" {
		t.Fatalf("REST sees unflushed write: %q", got)
	}
	mustNil(t, w.Flush(ctxBG), "flush")
	if got := readAll(t, r); string(got) != "01AB456789" {
		t.Fatalf("after flush other handle reads %q", got)
	}
	mustNil(t, w.Close(ctxBG), "close w")
	mustNil(t, r.Close(ctxBG), "close r")
	// Closing twice is an error, not a panic.
	wantErr(t, w.Close(ctxBG), locks.ErrHandleClosed, "double close")
	_, err = w.WriteAt(ctxBG, []byte("x"), 0)
	wantErr(t, err, locks.ErrHandleClosed, "write after close")
}

func TestTruncateExtendSparse(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/f", pattern(BlockSize+100, 1))
	f, _ := e.fs.Lookup(ctxBG, sh, "f")

	// Shrink into the first block: the blob is cut.
	n := int64(1000)
	a, err := e.fs.Setattr(ctxBG, f.ID, SetattrRequest{Size: &n})
	mustNil(t, err, "shrink")
	if a.Size != 1000 {
		t.Fatalf("size %d", a.Size)
	}
	info, err := e.store.Stat(ctxBG, blobKey(f.ID))
	mustNil(t, err, "stat blob")
	if info.Size != 1000 {
		t.Fatalf("blob size after shrink %d", info.Size)
	}
	// Grow to 1 TiB: nothing is written.
	tib := int64(1) << 40
	_, err = e.fs.Setattr(ctxBG, f.ID, SetattrRequest{Size: &tib})
	mustNil(t, err, "grow")
	info, _ = e.store.Stat(ctxBG, blobKey(f.ID))
	if info.Size != 1000 {
		t.Fatalf("blob grew to %d on a sparse extend", info.Size)
	}
	// Old bytes past the shrink point read as zeros, not old data.
	fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: 990, Length: 30, Ranged: true})
	mustNil(t, err, "get")
	got, _ := io.ReadAll(fr)
	fr.Close()
	want := append(pattern(1000, 1)[990:], make([]byte, 20)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("read across the old end: %v want %v", got, want)
	}
	// The far end reads as zeros.
	fr, err = e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: tib - 10, Length: 10, Ranged: true})
	mustNil(t, err, "get far")
	got, _ = io.ReadAll(fr)
	fr.Close()
	if !bytes.Equal(got, make([]byte, 10)) {
		t.Fatalf("far end %v", got)
	}
	// A write past several blocks of hole inside a 1 TiB file: holes are
	// zero-block references, the blob holds 4 blocks only.
	h := e.mustOpen("data/f", rw, allShare, DispositionOpen)
	_, err = h.WriteAt(ctxBG, []byte("far"), 3*BlockSize+5)
	mustNil(t, err, "write in hole")
	mustNil(t, h.Close(ctxBG), "close")
	blocks, info, err := e.store.Blocks(ctxBG, blobKey(f.ID))
	mustNil(t, err, "blocks")
	if len(blocks) != 4 || blocks[1].ID != zeroBlockID || blocks[2].ID != zeroBlockID || info.Size != 3*BlockSize+8 {
		t.Fatalf("blocks after hole write: %+v size %d", blocks, info.Size)
	}
	a, _ = e.fs.GetAttr(ctxBG, f.ID)
	if a.Size != tib {
		t.Fatalf("size changed by an inner write: %d", a.Size)
	}
	rs, _, err := e.fs.ListRanges(ctxBG, "data/f", locks.Range{}, "")
	mustNil(t, err, "list ranges")
	wantRanges := []Range{{0, 999}, {3*BlockSize + 5, 3*BlockSize + 7}}
	if fmt.Sprint(rs) != fmt.Sprint(wantRanges) {
		t.Fatalf("ranges %v want %v", rs, wantRanges)
	}
	// Truncate to zero and the blob is empty.
	zero := int64(0)
	_, err = e.fs.Setattr(ctxBG, f.ID, SetattrRequest{Size: &zero})
	mustNil(t, err, "truncate 0")
	if got := e.content("data/f"); len(got) != 0 {
		t.Fatalf("content after truncate: %d bytes", len(got))
	}
}

// TestConcurrentHandleAndPutRange: a handle's write and a REST Put Range on
// different ranges of one file — same block and different blocks, same
// process and two processes — both survive.
func TestConcurrentHandleAndPutRange(t *testing.T) {
	tests := []struct {
		name         string
		twoProcesses bool
		hOff, rOff   int64
	}{
		{"same block, one process", false, 0, 100},
		{"same block, two processes", true, 100, 0},
		{"different blocks, two processes", true, BlockSize + 1, 5},
		{"handle writes past the REST range", false, 2*BlockSize - 2, BlockSize - 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a := openEnv(t, dir)
			b := a
			if tt.twoProcesses {
				b = openEnv(t, dir)
			}
			a.share("data")
			size := 3 * BlockSize
			a.putFile("data/f", pattern(size, 1))
			model := pattern(size, 1)

			h := a.mustOpen("data/f", rw, allShare, DispositionOpen)
			hp := []byte("HANDLE-WRITE")
			_, err := h.WriteAt(ctxBG, hp, tt.hOff)
			mustNil(t, err, "handle write")
			copy(model[tt.hOff:], hp)

			rp := []byte("rest-put-range")
			_, err = b.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: tt.rOff, Length: int64(len(rp)), Body: bytes.NewReader(rp)})
			mustNil(t, err, "put range")
			copy(model[tt.rOff:], rp)

			mustNil(t, h.Close(ctxBG), "close")
			if got := b.content("data/f"); !bytes.Equal(got, model) {
				t.Fatalf("lost update: got %q.. want %q..", got[:40], model[:40])
			}
		})
	}
}

func TestSpillToDisk(t *testing.T) {
	dir := t.TempDir()
	e := openEnv(t, dir)
	// One block of memory per handle: random partial writes over 6 blocks spill.
	e.fs.memBlks = 1
	e.share("data")
	h := e.mustOpen("data/f", rw, allShare, DispositionCreate)
	rng := rand.New(rand.NewPCG(1, 2))
	model := make([]byte, 6*BlockSize)
	for i := 0; i < 200; i++ {
		off := rng.IntN(len(model) - 5000)
		p := pattern(1+rng.IntN(4000), byte(i))
		_, err := h.WriteAt(ctxBG, p, int64(off))
		mustNil(t, err, "write")
		copy(model[off:], p)
	}
	if h.h.stage.spill == nil {
		t.Fatal("nothing spilled with a one-block budget")
	}
	mustNil(t, h.Close(ctxBG), "close")
	got := e.content("data/f")
	end := len(model)
	for end > 0 && model[end-1] == 0 {
		end--
	}
	if !bytes.Equal(got, model[:len(got)]) || len(got) < end {
		t.Fatal("content differs after spilled writes")
	}
}

func TestFlushErrorsSurface(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	e.putFile("data/f", []byte("abc"))
	h := e.mustOpen("data/f", rw, allShare, DispositionOpen)
	_, err := h.WriteAt(ctxBG, []byte("X"), 0)
	mustNil(t, err, "write")
	n, err := e.fs.ForceCloseHandles(ctxBG, "data/f", 0, true, false)
	mustNil(t, err, "force close")
	if n != 1 {
		t.Fatalf("force closed %d", n)
	}
	wantErr(t, h.Flush(ctxBG), locks.ErrHandleClosed, "flush of a force-closed handle")
	wantErr(t, h.Close(ctxBG), locks.ErrHandleClosed, "close of a force-closed handle")
	if got := string(e.content("data/f")); got != "abc" {
		t.Fatalf("force-closed handle's write landed: %q", got)
	}
}

// TestCloseSkipsForceClosedHandles: a handle force-closed through REST and
// never closed by its owner (a FUSE release still in flight) does not make
// the file system's shutdown fail.
func TestCloseSkipsForceClosedHandles(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	e.putFile("data/f", []byte("abc"))
	e.mustOpen("data/f", rw, allShare, DispositionOpen)
	if n, err := e.fs.ForceCloseHandles(ctxBG, "data/f", 0, true, false); err != nil || n != 1 {
		t.Fatalf("force close: %d, %v", n, err)
	}
	mustNil(t, e.fs.Close(ctxBG), "close of the file system")
}

// TestRandomizedModel is an fsx-style run at the fs level: random writes,
// truncates, reads, re-opens and renames against an in-memory model.
func TestRandomizedModel(t *testing.T) {
	ops := 400
	if testing.Short() {
		ops = 100
	}
	e := newEnv(t)
	e.fs.memBlks = 2
	sh := e.share("data")
	rng := rand.New(rand.NewPCG(42, 7))
	maxSize := 3*BlockSize + 12345
	var model []byte
	name := "f0"
	h := e.mustOpen("data/"+name, rw, allShare, DispositionCreate)
	defer func() { h.Close(ctxBG) }()
	for i := 0; i < ops; i++ {
		switch op := rng.IntN(10); {
		case op < 5: // write
			off := rng.IntN(maxSize)
			n := 1 + rng.IntN(min(maxSize-off, 300000))
			if rng.IntN(8) == 0 {
				off = (off / BlockSize) * BlockSize
				n = min(BlockSize, maxSize-off)
			}
			p := pattern(n, byte(i))
			_, err := h.WriteAt(ctxBG, p, int64(off))
			mustNil(t, err, fmt.Sprintf("op %d write", i))
			if off+n > len(model) {
				model = append(model, make([]byte, off+n-len(model))...)
			}
			copy(model[off:], p)
		case op < 6: // truncate
			size := rng.IntN(maxSize)
			s := int64(size)
			_, err := e.fs.Setattr(ctxBG, h.File(), SetattrRequest{Size: &s, Handle: h})
			mustNil(t, err, fmt.Sprintf("op %d truncate", i))
			if size < len(model) {
				model = model[:size]
			} else {
				model = append(model, make([]byte, size-len(model))...)
			}
		case op < 8: // read
			off := rng.IntN(maxSize)
			n := 1 + rng.IntN(200000)
			buf := make([]byte, n)
			got, err := h.ReadAt(ctxBG, buf, int64(off))
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("op %d read: %v", i, err)
			}
			var want []byte
			if off < len(model) {
				want = model[off:min(off+n, len(model))]
			}
			if !bytes.Equal(buf[:got], want) {
				t.Fatalf("op %d: read %d+%d mismatch (got %d bytes, want %d)", i, off, n, got, len(want))
			}
		case op < 9: // close and re-open
			mustNil(t, h.Close(ctxBG), fmt.Sprintf("op %d close", i))
			h = e.mustOpen("data/"+name, rw, allShare, DispositionOpen)
		default: // rename
			next := fmt.Sprintf("f%d", i)
			mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: name, NewParent: sh, NewName: next}), "rename")
			name = next
		}
	}
	mustNil(t, h.Close(ctxBG), "final close")
	h = e.mustOpen("data/"+name, rw, allShare, DispositionOpen)
	if got := e.content("data/" + name); !bytes.Equal(got, model) {
		t.Fatalf("final content differs: len %d want %d", len(got), len(model))
	}
}

// TestCrashIntentRecovery: a process that died between the blob commit
// and the namespace update leaves an intent; the next process adopts the
// commit (or drops an intent whose commit never happened).
func TestCrashIntentRecovery(t *testing.T) {
	tests := []struct {
		name      string
		commit    bool // the dead process's blob commit happened
		wantSize  int64
		wantBytes string
	}{
		{"commit happened: adopted", true, 8, "new data"},
		{"commit never happened: dropped", false, InlineMax + 1, string(pattern(InlineMax+1, 5))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			e := openEnv(t, dir)
			sh := e.share("data")
			e.putFile("data/f", pattern(InlineMax+1, 5)) // too big to stay inline
			f, _ := e.fs.Lookup(ctxBG, sh, "f")
			key := blobKey(f.ID)
			info, err := e.store.Stat(ctxBG, key)
			mustNil(t, err, "stat")
			// A dead owner: no session row names it.
			_, err = e.table.DB().ExecContext(ctxBG, `INSERT INTO ns_intents(file, owner, token, state, prev_etag, new_size, created) VALUES(?,?,?,?,?,?,0)`,
				int64(f.ID), "crashed-process", "tok", intentCommitting, info.ETag, 8)
			mustNil(t, err, "insert intent")
			if tt.commit {
				_, err := blobstore.Put(ctxBG, e.store, key, bytes.NewReader([]byte("new data")), BlockSize, blobstore.Conditions{IfMatch: info.ETag})
				mustNil(t, err, "blob commit")
			}
			e.close()

			e2 := openEnv(t, dir)
			a, err := e2.fs.GetAttr(ctxBG, f.ID)
			mustNil(t, err, "getattr")
			if a.Size != tt.wantSize {
				t.Fatalf("size %d want %d", a.Size, tt.wantSize)
			}
			if got := string(e2.content("data/f")); got != tt.wantBytes {
				t.Fatalf("content differs (%d bytes, want %d)", len(got), len(tt.wantBytes))
			}
			var n int
			mustNil(t, e2.table.DB().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_intents`).Scan(&n), "count")
			if n != 0 {
				t.Fatalf("%d intents left", n)
			}
			// And the file is writable again (the lock was released).
			_, err = e2.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
			mustNil(t, err, "put range after recovery")
		})
	}
}

// TestIntentOfOwnerOnAnotherHost: an intent of an owner registered from
// another host — no lock file here, a heartbeat deadline ahead — is a
// commit in progress: New's recovery leaves it and commits wait; once its
// deadline has passed by the database's clock it is resolved. (Judged by
// pid and /proc start time, it looked dead on every other host.)
func TestIntentOfOwnerOnAnotherHost(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/f", []byte("abc"))
	f, _ := e.fs.Lookup(ctxBG, sh, "f")
	_, err := e.table.DB().ExecContext(ctxBG, `INSERT INTO lk_owners(owner, pid, started, host, program, expires) VALUES('node-b', ?, 0, 'other-host', 'blobshare serve', ?)`,
		os.Getpid(), time.Now().Add(time.Hour).UnixNano())
	mustNil(t, err, "register the other host's owner")
	_, err = e.table.DB().ExecContext(ctxBG, `INSERT INTO ns_intents(file, owner, token, state, created) VALUES(?,?,?,?,0)`,
		int64(f.ID), "node-b", "remote", intentLocked)
	mustNil(t, err, "insert its intent")
	e2 := openEnv(t, e.dir) // recovery at New
	e2.close()
	ctx, cancel := context.WithTimeout(ctxBG, 150*time.Millisecond)
	defer cancel()
	_, err = e.fs.PutRange(ctx, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
	wantErr(t, err, context.DeadlineExceeded, "put range while the other host's owner commits")
	_, err = e.table.DB().ExecContext(ctxBG, `UPDATE lk_owners SET expires = 1 WHERE owner = 'node-b'`)
	mustNil(t, err, "its heartbeat lapses")
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
	mustNil(t, err, "put range after the other host's owner expired")
}

// TestIntentOfLiveProcessWaits: a commit waits for the commit lock of
// another live owner session instead of stealing it, and New's recovery
// leaves it alone; once that owner is dead — closed, or its heartbeat
// expired though its flock is held (a frozen process) — the next commit
// resolves the intent and goes on.
func TestIntentOfLiveProcessWaits(t *testing.T) {
	for _, death := range []string{"closed", "heartbeat expired"} {
		t.Run(death, func(t *testing.T) {
			e := newEnv(t)
			sh := e.share("data")
			e.putFile("data/f", []byte("abc"))
			f, _ := e.fs.Lookup(ctxBG, sh, "f")
			other, err := locks.Open(ctxBG, e.table.Path(), locks.Options{Remove: RemoveFile, Logger: quietLogger()})
			mustNil(t, err, "open another owner")
			defer other.Close(ctxBG)
			_, err = e.table.DB().ExecContext(ctxBG, `INSERT INTO ns_intents(file, owner, token, state, created) VALUES(?,?,?,?,0)`,
				int64(f.ID), string(other.Owner()), "other", intentLocked)
			mustNil(t, err, "insert live intent")
			ctx, cancel := context.WithTimeout(ctxBG, 150*time.Millisecond)
			defer cancel()
			_, err = e.fs.PutRange(ctx, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
			wantErr(t, err, context.DeadlineExceeded, "put range while another live owner commits")
			// A process starting meanwhile recovers only dead owners' intents.
			e2 := openEnv(t, e.dir)
			e2.close()
			var n int
			mustNil(t, e.table.DB().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_intents WHERE owner = ?`, string(other.Owner())).Scan(&n), "count")
			if n != 1 {
				t.Fatalf("recovery resolved a live owner's intent")
			}
			switch death {
			case "closed":
				mustNil(t, other.Close(ctxBG), "close the other owner")
			default:
				_, err = e.table.DB().ExecContext(ctxBG, `UPDATE lk_owners SET expires = 1 WHERE owner = ?`, string(other.Owner()))
				mustNil(t, err, "expire the other owner's session")
			}
			_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
			mustNil(t, err, "put range after the owner died")
			if got := string(e.content("data/f")); got != "Xbc" {
				t.Fatalf("content %q", got)
			}
		})
	}
}

func TestDeletedBlobCollectedAtStartup(t *testing.T) {
	dir := t.TempDir()
	e := openEnv(t, dir)
	e.share("data")
	e.putFile("data/f", pattern(InlineMax+1, 1))
	a, _, _ := e.fs.Stat(ctxBG, "data/f", "")
	// Simulate a crash after the namespace delete, before the blob delete.
	_, err := e.table.DB().ExecContext(ctxBG, `INSERT INTO ns_gc(key, since) VALUES(?, 0)`, blobKey(a.ID))
	mustNil(t, err, "queue")
	_, err = e.table.DB().ExecContext(ctxBG, `DELETE FROM ns_entries WHERE id = ?`, int64(a.ID))
	mustNil(t, err, "delete row")
	e.close()
	e2 := openEnv(t, dir)
	if _, err := e2.store.Stat(ctxBG, blobKey(a.ID)); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("leftover blob: %v", err)
	}
}

// TestInlineSmallFiles: small files live in the namespace row (no blob);
// growing past InlineMax moves the content to a blob, keeping every byte.
func TestInlineSmallFiles(t *testing.T) {
	dir := t.TempDir()
	e := openEnv(t, dir)
	other := openEnv(t, dir) // a second process writing the same file
	sh := e.share("data")
	h := e.mustOpen("data/f", rw, allShare, DispositionCreate)
	_, err := h.WriteAt(ctxBG, []byte("hello"), 0)
	mustNil(t, err, "write")
	mustNil(t, h.Flush(ctxBG), "flush")
	f, _ := e.fs.Lookup(ctxBG, sh, "f")
	if _, err := e.store.Stat(ctxBG, blobKey(f.ID)); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("a 5-byte file has a blob: %v", err)
	}
	// REST writes into the inline file from another process.
	_, err = other.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 1, Length: 2, Body: bytes.NewReader([]byte("EL"))})
	mustNil(t, err, "put range inline")
	if got := string(readAll(t, h)); got != "hELlo" {
		t.Fatalf("handle reads %q after a REST write", got)
	}
	// Grow past InlineMax through the handle: migrated to a blob.
	_, err = h.WriteAt(ctxBG, []byte("tail"), InlineMax+10)
	mustNil(t, err, "write past inline max")
	mustNil(t, h.Close(ctxBG), "close")
	if _, err := e.store.Stat(ctxBG, blobKey(f.ID)); err != nil {
		t.Fatalf("no blob after growing: %v", err)
	}
	want := make([]byte, InlineMax+14)
	copy(want, "hELlo")
	copy(want[InlineMax+10:], "tail")
	if got := other.content("data/f"); !bytes.Equal(got, want) {
		t.Fatalf("content after migration differs (len %d)", len(got))
	}
	rs, _, err := other.fs.ListRanges(ctxBG, "data/f", locks.Range{}, "")
	mustNil(t, err, "list ranges")
	if want := []Range{{0, 4}, {InlineMax + 10, InlineMax + 13}}; fmt.Sprint(rs) != fmt.Sprint(want) {
		t.Fatalf("ranges %v want %v", rs, want)
	}
	// A sparse small file: size far beyond its inline data.
	e.putFile("data/sparse", []byte("abc"))
	n := int64(1) << 30
	_, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/sparse", Size: &n})
	mustNil(t, err, "grow sparse")
	fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/sparse", Offset: 1, Length: 4, Ranged: true})
	mustNil(t, err, "get")
	got, _ := io.ReadAll(fr)
	fr.Close()
	if !bytes.Equal(got, []byte{'b', 'c', 0, 0}) {
		t.Fatalf("sparse inline read %q", got)
	}
	cp, err := e.fs.CopyFile(ctxBG, CopyFileRequest{Source: "data/sparse", Dest: "data/sparse2"})
	mustNil(t, err, "copy sparse")
	if cp.Size != n {
		t.Fatalf("copy size %d", cp.Size)
	}
	fr, _ = e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/sparse2", Offset: 0, Length: 3, Ranged: true})
	got, _ = io.ReadAll(fr)
	fr.Close()
	if string(got) != "abc" {
		t.Fatalf("copied sparse content %q", got)
	}
}

// flakyCommit wraps a store: CommitBlocks fails, after (lost reply) or
// before (nothing committed) doing the commit.
type flakyCommit struct {
	blobstore.Store
	after bool
	fail  bool
}

func (f *flakyCommit) CommitBlocks(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	if !f.fail {
		return f.Store.CommitBlocks(ctx, key, ids, cond)
	}
	if f.after {
		if _, err := f.Store.CommitBlocks(ctx, key, ids, cond); err != nil {
			return blobstore.Info{}, err
		}
	}
	return blobstore.Info{}, errors.New("connection reset by peer")
}

// TestHandleClearRange: a handle's ClearRange reads back as zeros through
// the handle before any flush, commits at close like a write, keeps the
// bytes around it, extends the file when it runs past the end, and needs
// write access.
func TestHandleClearRange(t *testing.T) {
	const size = BlockSize + 1000
	tests := []struct {
		name     string
		off, n   int64
		wantSize int64
	}{
		{"inside a block", 100, 900, size},
		{"a whole block and more", 0, BlockSize + 10, size},
		{"past the end", size - 5, 20, size + 15},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			path := fmt.Sprintf("data/f%d", i)
			orig := pattern(size, byte(i+1))
			e.putFile(path, orig)
			want := append([]byte(nil), orig...)
			if end := tt.off + tt.n; end > int64(len(want)) {
				want = append(want, make([]byte, end-int64(len(want)))...)
			}
			clear(want[tt.off : tt.off+tt.n])

			h := e.mustOpen(path, rw, allShare, DispositionOpen)
			mustNil(t, h.ClearRange(ctxBG, tt.off, tt.n), "clear range")
			got := make([]byte, len(want))
			n, err := h.ReadAt(ctxBG, got, 0)
			if n != len(want) || (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(got, want) {
				t.Fatalf("read back through the handle: %d bytes, %v, equal %v", n, err, bytes.Equal(got, want))
			}
			mustNil(t, h.Close(ctxBG), "close")
			if got := e.content(path); int64(len(got)) != tt.wantSize || !bytes.Equal(got, want) {
				t.Fatalf("committed content: %d bytes, equal %v", len(got), bytes.Equal(got, want))
			}
		})
	}
	e := newEnv(t)
	e.share("data")
	e.putFile("data/ro", []byte("abc"))
	h := e.mustOpen("data/ro", locks.AccessRead, allShare, DispositionOpen)
	wantErr(t, h.ClearRange(ctxBG, 0, 1), locks.ErrAccessDenied, "clear through a read-only handle")
	mustNil(t, h.Close(ctxBG), "close")
}

// flakyStage is a store whose StageBlock fails while fail is set.
type flakyStage struct {
	blobstore.Store
	fail atomic.Bool
}

func (f *flakyStage) StageBlock(ctx context.Context, key, id string, r io.Reader) (int64, error) {
	if f.fail.Load() {
		return 0, errors.New("disk full")
	}
	return f.Store.StageBlock(ctx, key, id, r)
}

// TestBackgroundStagingErrorSurfaces: a whole block is stored in the
// background while the writer goes on; when storing it fails, the error
// reaches the writer (at its next write or at the latest its flush and
// close), nothing of the stage is committed, and the file stays writable.
func TestBackgroundStagingErrorSurfaces(t *testing.T) {
	dir := t.TempDir()
	base := openEnv(t, dir)
	base.share("data")
	orig := pattern(InlineMax+100, 3) // blob-backed
	base.putFile("data/f", orig)
	flaky := &flakyStage{Store: base.store}
	fsys, err := New(ctxBG, Config{Table: base.table, Store: flaky, Logger: quietLogger(), SpillDir: dir})
	mustNil(t, err, "new")
	defer fsys.Close(ctxBG)
	open := func() *Handle {
		h, _, err := fsys.OpenByPath(ctxBG, OpenPathRequest{Path: "data/f", Disposition: DispositionOpen, Open: OpenOptions{Access: rw, Share: allShare}})
		mustNil(t, err, "open")
		return h
	}

	h := open()
	flaky.fail.Store(true)
	chunk := pattern(1<<20, 7)
	var writeErr error
	for off := int64(0); off < 3*BlockSize && writeErr == nil; off += int64(len(chunk)) {
		_, writeErr = h.WriteAt(ctxBG, chunk, off)
	}
	flushErr := h.Flush(ctxBG)
	if flushErr == nil {
		t.Fatal("flush after a block failed to stage: no error")
	}
	if !strings.Contains(flushErr.Error(), "disk full") {
		t.Fatalf("flush error %q does not name the store's error", flushErr)
	}
	if writeErr != nil && !strings.Contains(writeErr.Error(), "disk full") {
		t.Fatalf("write error %q does not name the store's error", writeErr)
	}
	if err := h.Close(ctxBG); err == nil {
		t.Fatal("close of the failed stage: no error")
	}
	if got := base.content("data/f"); !bytes.Equal(got, orig) {
		t.Fatal("a stage with a failed block was committed (in part)")
	}

	flaky.fail.Store(false)
	h = open()
	want := pattern(2*BlockSize+5, 9)
	for off := 0; off < len(want); off += len(chunk) {
		_, err := h.WriteAt(ctxBG, want[off:min(off+len(chunk), len(want))], int64(off))
		mustNil(t, err, "write after the store recovered")
	}
	mustNil(t, h.Close(ctxBG), "close after the store recovered")
	if got := base.content("data/f"); !bytes.Equal(got, want) {
		t.Fatal("content after the store recovered differs")
	}
}

// TestCommitErrorSettled: a blob commit whose reply is lost is adopted
// (the write succeeded); one that never happened is reported and dropped,
// and the file stays writable.
func TestCommitErrorSettled(t *testing.T) {
	tests := []struct {
		name    string
		after   bool
		wantErr bool
	}{
		{"reply lost after the commit", true, false},
		{"failed before the commit", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			base := openEnv(t, dir)
			base.share("data")
			orig := pattern(InlineMax+100, 3) // blob-backed
			base.putFile("data/f", orig)
			flaky := &flakyCommit{Store: base.store, after: tt.after, fail: true}
			fsys, err := New(ctxBG, Config{Table: base.table, Store: flaky, Logger: quietLogger(), SpillDir: dir})
			mustNil(t, err, "new")
			defer fsys.Close(ctxBG)
			_, err = fsys.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 10, Length: 3, Body: bytes.NewReader([]byte("NEW"))})
			if (err != nil) != tt.wantErr {
				t.Fatalf("put range error %v, want error %v", err, tt.wantErr)
			}
			want := append([]byte(nil), orig...)
			if !tt.wantErr {
				copy(want[10:], "NEW")
			}
			if got := base.content("data/f"); !bytes.Equal(got, want) {
				t.Fatal("content after a failed commit is not the expected version")
			}
			flaky.fail = false
			_, err = fsys.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("Z"))})
			mustNil(t, err, "next put range (intent released)")
		})
	}
}

// TestConcurrentWritersTwoProcesses: two "processes" write disjoint ranges
// of one file at the same time (handle writes with flushes in one, REST Put
// Range in the other); every write survives.
func TestConcurrentWritersTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	b := openEnv(t, dir)
	a.share("data")
	const slot = 3000 // bytes per writer slot; slots straddle block edges
	size := 2*BlockSize + 4*slot
	a.putFile("data/f", make([]byte, size))
	offsets := func(writer int) []int64 {
		// Interleaved slots, some crossing the first block boundary.
		base := []int64{BlockSize - slot, BlockSize + slot, 100, 2*BlockSize + slot}
		var out []int64
		for i, o := range base {
			if i%2 == writer {
				out = append(out, o)
			}
		}
		return out
	}
	rounds := 15
	errc := make(chan error, 2)
	go func() {
		h, err := a.open("data/f", rw, allShare, DispositionOpen)
		if err != nil {
			errc <- err
			return
		}
		defer h.Close(ctxBG)
		for r := 0; r < rounds; r++ {
			for _, o := range offsets(0) {
				if _, err := h.WriteAt(ctxBG, bytes.Repeat([]byte{byte('a' + r)}, slot), o); err != nil {
					errc <- err
					return
				}
			}
			if err := h.Flush(ctxBG); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	go func() {
		for r := 0; r < rounds; r++ {
			for _, o := range offsets(1) {
				_, err := b.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: o, Length: slot, Body: bytes.NewReader(bytes.Repeat([]byte{byte('A' + r)}, slot))})
				if err != nil {
					errc <- err
					return
				}
			}
		}
		errc <- nil
	}()
	for i := 0; i < 2; i++ {
		mustNil(t, <-errc, "writer")
	}
	got := b.content("data/f")
	for w, fill := range []byte{'a' + byte(rounds-1), 'A' + byte(rounds-1)} {
		for _, o := range offsets(w) {
			if !bytes.Equal(got[o:o+slot], bytes.Repeat([]byte{fill}, slot)) {
				t.Fatalf("writer %d's slot at %d lost its last write: %q...", w, o, got[o:o+8])
			}
		}
	}
}

// TestListRangesFollowWritesAndClears: the documented Azure example —
// clearing 768-2304 inside a written 0-65535 leaves 0-1023 and 2048-65535 —
// on an inline and on a blob-backed file, plus copy and truncate.
func TestListRangesFollowWritesAndClears(t *testing.T) {
	for _, size := range []int{65536, InlineMax + BlockSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			_, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: int64(size)})
			mustNil(t, err, "create")
			rs, _, err := e.fs.ListRanges(ctxBG, "data/f", locks.Range{}, "")
			mustNil(t, err, "list empty")
			if len(rs) != 0 {
				t.Fatalf("new file has ranges %v", rs)
			}
			_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 65536, Body: bytes.NewReader(pattern(65536, 1))})
			mustNil(t, err, "write")
			_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 768, Length: 2304 - 768 + 1})
			mustNil(t, err, "clear")
			check := func(path string, want []Range) {
				t.Helper()
				rs, _, err := e.fs.ListRanges(ctxBG, path, locks.Range{}, "")
				mustNil(t, err, "list")
				if fmt.Sprint(rs) != fmt.Sprint(want) {
					t.Fatalf("%s ranges %v want %v", path, rs, want)
				}
			}
			check("data/f", []Range{{0, 1023}, {2048, 65535}})
			got := e.content("data/f")
			if !bytes.Equal(got[768:2305], make([]byte, 2305-768)) || !bytes.Equal(got[:768], pattern(65536, 1)[:768]) {
				t.Fatal("clear did not zero exactly its range")
			}
			_, err = e.fs.CopyFile(ctxBG, CopyFileRequest{Source: "data/f", Dest: "data/g"})
			mustNil(t, err, "copy")
			check("data/g", []Range{{0, 1023}, {2048, 65535}})
			n := int64(3000)
			_, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Size: &n})
			mustNil(t, err, "shrink")
			check("data/f", []Range{{0, 1023}, {2048, 2999}})
			// A ranged request is clipped.
			rs, _, err = e.fs.ListRanges(ctxBG, "data/f", locks.Range{Offset: 1000, Length: 1100}, "")
			mustNil(t, err, "ranged list")
			if want := []Range{{1000, 1023}, {2048, 2099}}; fmt.Sprint(rs) != fmt.Sprint(want) {
				t.Fatalf("ranged list %v want %v", rs, want)
			}
		})
	}
}

func TestRangeSet(t *testing.T) {
	var rs rangeSet
	rs = rs.add(10, 20).add(30, 40).add(20, 30) // adjacent ranges merge
	if fmt.Sprint(rs) != "[{10 40}]" {
		t.Fatalf("add: %v", rs)
	}
	rs = rs.sub(15, 25).sub(0, 11)
	if fmt.Sprint(rs) != "[{11 15} {25 40}]" {
		t.Fatalf("sub: %v", rs)
	}
	if got := rs.clip(30); fmt.Sprint(got) != "[{11 15} {25 30}]" {
		t.Fatalf("clip: %v", got)
	}
	back, err := decodeRanges(rs.encode())
	if err != nil || fmt.Sprint(back) != fmt.Sprint(rs) {
		t.Fatalf("round trip %v %v", back, err)
	}
	var many rangeSet
	for i := int64(0); i < maxRanges+50; i++ {
		many = many.add(i*10, i*10+5)
	}
	if c := many.compact(); len(c) > maxRanges || c[0].lo != 0 || c[len(c)-1].hi != (maxRanges+49)*10+5 {
		t.Fatalf("compact: %d ranges, %v..%v", len(c), c[0], c[len(c)-1])
	}
	if _, err := decodeRanges("[1,2,3]"); err == nil {
		t.Fatal("odd encoding accepted")
	}
}

// TestStagingMemoryBounded: however a handle writes, at most
// Config.MemoryPerHandle of partial blocks stay in memory; whole blocks go
// to the blob store as they complete.
func TestStagingMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxBG
	base := openEnv(t, dir)
	fsys, err := New(ctx, Config{Table: base.table, Store: base.store, Logger: quietLogger(), SpillDir: dir, MemoryPerHandle: 2 * BlockSize})
	mustNil(t, err, "new")
	defer fsys.Close(ctx)
	_, err = fsys.CreateShare(ctx, ShareRequest{Name: "data"})
	mustNil(t, err, "share")
	h, _, err := fsys.OpenByPath(ctx, OpenPathRequest{Path: "data/f", Disposition: DispositionCreate, Open: OpenOptions{Access: rw, Share: allShare}})
	mustNil(t, err, "open")
	rng := rand.New(rand.NewPCG(3, 4))
	const blocks = 12
	chunk := pattern(64<<10, 1)
	maxMem := 0
	// Interleave a sequential stream with scattered small writes.
	for off := int64(0); off < blocks*BlockSize; off += int64(len(chunk)) {
		_, err := h.WriteAt(ctx, chunk, off)
		mustNil(t, err, "sequential write")
		scatter := int64(rng.IntN(blocks)) * BlockSize
		_, err = h.WriteAt(ctx, []byte("x"), blocks*BlockSize+scatter+int64(rng.IntN(1000)))
		mustNil(t, err, "scattered write")
		maxMem = max(maxMem, len(h.h.stage.inMem))
	}
	if maxMem > 2 {
		t.Fatalf("%d blocks in memory, budget 2", maxMem)
	}
	if len(h.h.stage.full) < blocks-1 {
		t.Fatalf("only %d whole blocks staged early", len(h.h.stage.full))
	}
	mustNil(t, h.Close(ctx), "close")
}

// TestInterruptedCreateIsWhollyOneVersion: a Create File over an existing
// file that is cut between its blob commit and its namespace update (the
// commit's reply lost here; a crash in the reliability crash matrix) comes
// back wholly as the new version — size, content, content headers,
// metadata, attributes and times — once its commit is adopted, and wholly
// as the old one when the blob commit never happened.
func TestInterruptedCreateIsWhollyOneVersion(t *testing.T) {
	for _, committed := range []bool{true, false} {
		t.Run(fmt.Sprintf("blob committed %v", committed), func(t *testing.T) {
			dir := t.TempDir()
			base := openEnv(t, dir)
			base.share("data")
			oldData := pattern(InlineMax+100, 3) // blob-backed
			oldWrite := time.Date(1999, 1, 2, 3, 4, 5, 0, time.UTC)
			hidden := AttrHidden
			_, err := base.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: int64(len(oldData)),
				Props: SMBProperties{Attributes: &hidden, LastWrite: &oldWrite}, Content: ContentHeaders{Type: "old/type"}, Metadata: map[string]string{"v": "old"}})
			mustNil(t, err, "create old")
			_, err = base.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Length: int64(len(oldData)), Body: bytes.NewReader(oldData)})
			mustNil(t, err, "write old")
			_, err = base.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Props: SMBProperties{LastWrite: &oldWrite}})
			mustNil(t, err, "old times")
			old, _, err := base.fs.Stat(ctxBG, "data/f", "")
			mustNil(t, err, "stat old")

			flaky := &flakyCommit{Store: base.store, after: committed, fail: true}
			fsys, err := New(ctxBG, Config{Table: base.table, Store: flaky, Logger: quietLogger(), SpillDir: dir})
			mustNil(t, err, "new")
			defer fsys.Close(ctxBG)
			newWrite := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			archive := AttrArchive
			const newSize = InlineMax + 5000
			_, err = fsys.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: newSize,
				Props: SMBProperties{Attributes: &archive, LastWrite: &newWrite}, Content: ContentHeaders{Type: "new/type"}, Metadata: map[string]string{"v": "new"}})
			if (err != nil) == committed {
				t.Fatalf("create over the file: %v, want error %v", err, !committed)
			}

			got, _, err := base.fs.Stat(ctxBG, "data/f", "")
			mustNil(t, err, "stat")
			content := base.content("data/f")
			if committed {
				if got.Size != newSize || !bytes.Equal(content, make([]byte, newSize)) || got.Content.Type != "new/type" ||
					got.Metadata["v"] != "new" || got.Attributes != AttrArchive || !got.LastWrite.Equal(newWrite) {
					t.Fatalf("adopted create: size %d (zeros %v), type %q, metadata %v, attributes %v, last write %v; want the new version whole",
						got.Size, bytes.Equal(content, make([]byte, newSize)), got.Content.Type, got.Metadata, got.Attributes, got.LastWrite)
				}
				return
			}
			if got.Size != old.Size || !bytes.Equal(content, oldData) || got.Content.Type != old.Content.Type || got.Metadata["v"] != "old" ||
				got.Attributes != old.Attributes || !got.LastWrite.Equal(old.LastWrite) || !got.Change.Equal(old.Change) || got.Version != old.Version {
				t.Fatalf("dropped create: %+v; want the old version whole %+v", got, old)
			}
		})
	}
}

// crashImage is a blob store that, at one CommitBlocks, takes a crash
// image of the data directory — the database as committed at that moment
// (VACUUM INTO) and the blob files — just before (before) or just after the
// store commits: what a process killed at that instant leaves behind.
type crashImage struct {
	blobstore.Store
	t        *testing.T
	db       *sql.DB
	from, to string // data directories
	before   bool
	taken    bool
}

func (c *crashImage) CommitBlocks(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	if c.before {
		c.take()
	}
	info, err := c.Store.CommitBlocks(ctx, key, ids, cond)
	if !c.before && err == nil {
		c.take()
	}
	return info, err
}

func (c *crashImage) take() {
	if c.taken {
		return
	}
	c.taken = true
	mustNil(c.t, os.MkdirAll(c.to, 0o755), "image dir")
	_, err := c.db.Exec(`VACUUM INTO ?`, filepath.Join(c.to, "blobshare.db"))
	mustNil(c.t, err, "vacuum into")
	// The process that took the commit lock is dead in the image.
	img, err := sql.Open("sqlite", "file:"+filepath.Join(c.to, "blobshare.db"))
	mustNil(c.t, err, "open image")
	_, err = img.Exec(`UPDATE ns_intents SET owner = 'crashed-process'`)
	mustNil(c.t, err, "kill the intent's process")
	mustNil(c.t, img.Close(), "close image")
	src := filepath.Join(c.from, "blobs")
	err = filepath.WalkDir(src, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(c.to, "blobs", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	mustNil(c.t, err, "copy blobs")
}

// TestCrashDuringCreateIsWhollyOneVersion: a process killed during a
// Create File over an existing file, after its blob commit or before it,
// leaves a file that the next process (recovering the dead commit intent)
// shows wholly as the new version or wholly as the old one.
func TestCrashDuringCreateIsWhollyOneVersion(t *testing.T) {
	for _, before := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed before the blob commit %v", before), func(t *testing.T) {
			dir, image := t.TempDir(), t.TempDir()
			e := openEnv(t, dir)
			e.share("data")
			oldWrite := time.Date(1999, 1, 2, 3, 4, 5, 0, time.UTC)
			hidden := AttrHidden
			_, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: InlineMax + 100,
				Props: SMBProperties{Attributes: &hidden, LastWrite: &oldWrite}, Content: ContentHeaders{Type: "old/type"}, Metadata: map[string]string{"v": "old"}})
			mustNil(t, err, "create old")
			oldBytes := pattern(InlineMax+100, 7) // a blob, not inline
			_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Length: int64(len(oldBytes)), Body: bytes.NewReader(oldBytes), PreserveLastWrite: true})
			mustNil(t, err, "write old")
			old, _, err := e.fs.Stat(ctxBG, "data/f", "")
			mustNil(t, err, "stat old")
			oldData := e.content("data/f")

			crash := &crashImage{Store: e.store, t: t, db: e.table.DB(), from: dir, to: image, before: before}
			fsys, err := New(ctxBG, Config{Table: e.table, Store: crash, Logger: quietLogger(), SpillDir: dir})
			mustNil(t, err, "new")
			newWrite := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			archive := AttrArchive
			const newSize = InlineMax + 5000
			_, err = fsys.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: newSize,
				Props: SMBProperties{Attributes: &archive, LastWrite: &newWrite}, Content: ContentHeaders{Type: "new/type"}, Metadata: map[string]string{"v": "new"}})
			mustNil(t, err, "create over the file")
			mustNil(t, fsys.Close(ctxBG), "close")
			if !crash.taken {
				t.Fatal("no blob commit: no crash image")
			}

			after := openEnv(t, image) // recovers the dead intent
			got, _, err := after.fs.Stat(ctxBG, "data/f", "")
			mustNil(t, err, "stat after the crash")
			content := after.content("data/f")
			if before {
				if got.Size != old.Size || !bytes.Equal(content, oldData) || got.Content.Type != "old/type" || got.Metadata["v"] != "old" ||
					got.Attributes != old.Attributes || !got.LastWrite.Equal(old.LastWrite) || !got.Change.Equal(old.Change) {
					t.Fatalf("after a crash before the blob commit: %+v; want the old version whole %+v", got, old)
				}
				return
			}
			if got.Size != newSize || !bytes.Equal(content, make([]byte, newSize)) || got.Content.Type != "new/type" ||
				got.Metadata["v"] != "new" || got.Attributes != AttrArchive || !got.LastWrite.Equal(newWrite) {
				t.Fatalf("after a crash after the blob commit: size %d (zeros %v), type %q, metadata %v, attributes %v, last write %v; want the new version whole",
					got.Size, bytes.Equal(content, make([]byte, newSize)), got.Content.Type, got.Metadata, got.Attributes, got.LastWrite)
			}
		})
	}
}
