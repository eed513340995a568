package fs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// tableHandles counts the lock-table handles on file, read straight from
// the table (a reader connection: no release is settled first).
func tableHandles(t *testing.T, e *env, file FileID) int {
	t.Helper()
	var n int
	mustNil(t, e.table.View(ctxBG, func(tx *locks.Tx) error {
		hs, err := tx.Handles(file)
		n = len(hs)
		return err
	}), "handles")
	return n
}

// releaseOutcome is a done func for Handle.Release and the channel that
// receives its outcome.
func releaseOutcome() (func(error), chan error) {
	ch := make(chan error, 1)
	return func(err error) { ch <- err }, ch
}

func awaitRelease(t *testing.T, ch chan error) {
	t.Helper()
	select {
	case err := <-ch:
		mustNil(t, err, "release close")
	case <-time.After(10 * time.Second):
		t.Fatal("the released handle was never closed in the lock table")
	}
}

// TestReleaseRidesAlongNextWrite: a released handle is closed by the next
// write transaction of the process, before that transaction decides
// anything: an open that its share mode would refuse goes through.
func TestReleaseRidesAlongNextWrite(t *testing.T) {
	e := newEnv(t)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	if _, err := h.WriteAt(ctxBG, []byte("held"), 0); err != nil {
		t.Fatal(err)
	}
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	if _, err := h.WriteAt(ctxBG, []byte("x"), 0); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("write through a released handle: %v, want ErrHandleClosed", err)
	}
	// Within the release delay: the open is the next write transaction.
	h2 := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionOpen)
	awaitRelease(t, ch)
	if n := tableHandles(t, e, h2.File()); n != 1 {
		t.Fatalf("%d handles in the table, want the new one only", n)
	}
	if got := string(readAll(t, h2)); got != "held" {
		t.Fatalf("content %q: the release must commit the staged write", got)
	}
	mustNil(t, h2.Close(ctxBG), "close")
}

// TestReleaseClosesOnItsOwn: with no write to ride along with, a released
// handle leaves the lock table by itself (after releaseDelay), and another
// process then sees it gone.
func TestReleaseClosesOnItsOwn(t *testing.T) {
	dir := t.TempDir()
	e := openEnv(t, dir)
	other := openEnv(t, dir)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	awaitRelease(t, ch)
	if n := tableHandles(t, other, h.File()); n != 0 {
		t.Fatalf("another process sees %d handles after the release, want 0", n)
	}
	h2, err := other.open("rel/f", rw, locks.ShareNone, DispositionOpen)
	mustNil(t, err, "open from the other process")
	mustNil(t, h2.Close(ctxBG), "close")
}

// TestReleaseSettledBeforeView: checks made in a View (REST's, List
// Handles) see this process's released handles closed at once.
func TestReleaseSettledBeforeView(t *testing.T) {
	e := newEnv(t)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	mustNil(t, h.Release(ctxBG, nil), "release")
	hs, err := e.fs.ListHandles(ctxBG, "rel/f", false)
	mustNil(t, err, "list handles")
	if len(hs) != 0 {
		t.Fatalf("List Handles right after a release: %d handles, want 0", len(hs))
	}
	if _, err := e.get("rel/f"); err != nil {
		t.Fatalf("REST read right after a release: %v", err)
	}
}

// TestReleaseOfLockedHandleIsImmediate: a handle that took byte-range
// locks is closed before Release returns, so that no check ever meets the
// locks of a released handle.
func TestReleaseOfLockedHandleIsImmediate(t *testing.T) {
	e := newEnv(t)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, allShare, DispositionCreate)
	mustNil(t, h.Lock(ctxBG, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive), "lock")
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	select {
	case err := <-ch:
		mustNil(t, err, "release close")
	default:
		t.Fatal("Release of a handle with locks returned before its close")
	}
	if n := tableHandles(t, e, h.File()); n != 0 {
		t.Fatalf("%d handles left, want 0", n)
	}
}

// TestReleaseSurvivesFailedWrite: the write transaction a release rides
// along with fails and rolls back; the handle is still closed (apart).
func TestReleaseSurvivesFailedWrite(t *testing.T) {
	e := newEnv(t)
	sh := e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	_, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: "f", Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
	wantErr(t, err, ErrExist, "exclusive create over an existing file")
	awaitRelease(t, ch)
	if n := tableHandles(t, e, h.File()); n != 0 {
		t.Fatalf("%d handles left after the failed write, want 0", n)
	}
}

// TestReleaseCompletesPendingDelete: the last handle of a file unlinked
// while open is released; the file goes with the close.
func TestReleaseCompletesPendingDelete(t *testing.T) {
	e := newEnv(t)
	sh := e.share("rel")
	h, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: "f", Open: OpenOptions{Access: rw, Share: allShare}})
	mustNil(t, err, "create")
	mustNil(t, e.fs.Unlink(ctxBG, sh, "f"), "unlink while open")
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	awaitRelease(t, ch)
	if _, err := e.fs.GetAttr(ctxBG, h.File()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("getattr of the released unlinked file: %v, want ErrNotFound", err)
	}
}

// TestReleaseAtClose: releases still queued when the FileSystem closes are
// closed by Close.
func TestReleaseAtClose(t *testing.T) {
	e := newEnv(t)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	mustNil(t, e.fs.Close(context.Background()), "close the file system")
	awaitRelease(t, ch)
}

// TestCloseStopsReleaseTimer: Close settles a pending release itself and
// stops the release timer, waiting for it, so nothing runs on the lock
// table after Close returns (the table is closed right after).
func TestCloseStopsReleaseTimer(t *testing.T) {
	for i := range 50 {
		e := newEnv(t)
		e.share("rel")
		h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
		done, ch := releaseOutcome()
		mustNil(t, h.Release(ctxBG, done), "release")
		fsys := e.fs
		mustNil(t, fsys.Close(ctxBG), "close")
		select {
		case err := <-ch:
			mustNil(t, err, "release close")
		default:
			t.Fatalf("round %d: Close returned before closing the released handle", i)
		}
		fsys.rel.mu.Lock()
		armed, stopped := fsys.rel.armed, fsys.rel.stopped
		fsys.rel.mu.Unlock()
		if armed || !stopped {
			t.Fatalf("round %d: after Close the timer is armed=%v stopped=%v", i, armed, stopped)
		}
		e.fs = nil
		mustNil(t, e.table.Close(ctxBG), "table close")
	}
}

// TestReleaseAfterTimerStopped: once Close has stopped the timer, a
// release is settled on the releasing goroutine, not left queued.
func TestReleaseAfterTimerStopped(t *testing.T) {
	e := newEnv(t)
	e.share("rel")
	h := e.mustOpen("rel/f", rw, locks.ShareNone, DispositionCreate)
	e.fs.stopReleaseTimer()
	done, ch := releaseOutcome()
	mustNil(t, h.Release(ctxBG, done), "release")
	select {
	case err := <-ch:
		mustNil(t, err, "release close")
	default:
		t.Fatal("a release after the timer stopped was left queued")
	}
	if n := tableHandles(t, e, h.File()); n != 0 {
		t.Fatalf("%d handles left in the table", n)
	}
}
