package fs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/locks"
)

// openFoldEnv is openEnv with the mount's changes folded (Config.FoldMount)
// into transactions that stay open for delay.
func openFoldEnv(t *testing.T, dir string, delay time.Duration) *env {
	t.Helper()
	table, err := locks.Open(ctxBG, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: RemoveFile, FoldDelay: delay})
	mustNil(t, err, "locks.Open")
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
	mustNil(t, err, "local.New")
	fsys, err := New(ctxBG, Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: dir, FoldMount: true})
	mustNil(t, err, "fs.New")
	e := &env{t: t, dir: dir, table: table, fs: fsys, store: store}
	t.Cleanup(func() { e.close() })
	return e
}

// sees reports whether e finds name in parent (a lookup: a Peek, which
// reads only what is committed when e folds nothing).
func sees(t *testing.T, e *env, parent FileID, name string) bool {
	t.Helper()
	_, err := e.fs.Lookup(ctxBG, parent, name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup %s: %v", name, err)
	}
	return err == nil
}

// TestFoldMount: the mount's folded changes (the fold's deadline an hour
// away) are seen at once by this process — its mount lookups and a REST
// Get Properties — and by another process only once something commits
// them: a REST write of this process, an fsync (CommitFolded), or a
// change another process's read-only check must see (a handle denying
// sharing, a delete-pending file), which commits before it is answered.
func TestFoldMount(t *testing.T) {
	dir := t.TempDir()
	e := openFoldEnv(t, dir, time.Hour)
	other := openEnv(t, dir)
	share := e.share("fold") // REST: committed

	h, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: share, Name: "a", Exclusive: true,
		Open: OpenOptions{Access: rw, Share: allShare, POSIX: true}})
	mustNil(t, err, "create a")
	if !sees(t, e, share, "a") {
		t.Fatal("this process's lookup misses its own folded create")
	}
	if _, _, err := e.fs.Stat(ctxBG, "fold/a", ""); err != nil {
		t.Fatalf("REST Get Properties in this process after the folded create: %v", err)
	}
	if sees(t, other, share, "a") {
		t.Fatal("another process sees a folded create before any commit")
	}
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: share, OldName: "a", NewParent: share, NewName: "b"}), "rename")
	mustNil(t, e.fs.CommitFolded(), "commit folded (fsync)")
	if sees(t, other, share, "a") || !sees(t, other, share, "b") {
		t.Fatal("another process after CommitFolded: not the renamed file")
	}

	// A REST write of this process commits the fold before it decides.
	// The mount's close (a release, carried by the next change) and an
	// unlink of the then unopened file fold.
	mustNil(t, h.Release(ctxBG, nil), "release")
	mustNil(t, e.fs.Unlink(ctxBG, share, "b"), "unlink b")
	if !sees(t, other, share, "b") {
		t.Fatal("the folded unlink reached another process without a commit")
	}
	e.putFile("fold/c", []byte("rest"))
	if sees(t, other, share, "b") || !sees(t, other, share, "c") {
		t.Fatal("another process after this process's REST write: the folded unlink or the write missing")
	}

	// A handle that denies sharing commits before the create answers.
	h2, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: share, Name: "d", Exclusive: true,
		Open: OpenOptions{Access: rw, Share: locks.ShareNone, POSIX: true}})
	mustNil(t, err, "create d")
	if _, err := other.open("fold/d", locks.AccessRead, allShare, DispositionOpen); !errors.Is(err, locks.ErrSharingViolation) {
		t.Fatalf("another process opens a file held without sharing: %v, want a sharing violation", err)
	}
	// So does a file left delete-pending by an unlink.
	h3, _, err := e.fs.Create(ctxBG, CreateRequest{Parent: share, Name: "p", Exclusive: true,
		Open: OpenOptions{Access: rw, Share: allShare, POSIX: true}})
	mustNil(t, err, "create p")
	// Another process's write waits for the fold's commit (SQLite's busy
	// handler): an hour here, so commit it as an fsync would.
	mustNil(t, e.fs.CommitFolded(), "commit folded")
	hp := other.mustOpen("fold/p", locks.AccessRead, allShare, DispositionOpen)
	mustNil(t, e.fs.Unlink(ctxBG, share, "p"), "unlink p")
	if _, _, err := other.fs.Stat(ctxBG, "fold/p", ""); !errors.Is(err, locks.ErrDeletePending) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("another process's Get Properties of a file unlinked on the mount: %v, want delete pending or not found", err)
	}
	for _, c := range []*Handle{h2, h3, hp} {
		mustNil(t, c.Close(ctxBG), "close")
	}
}

// TestFoldMountFailedRequestAlone: a mount request refused inside a fold
// (a create of a name taken) leaves the requests folded before and after
// it, which commit together.
func TestFoldMountFailedRequestAlone(t *testing.T) {
	dir := t.TempDir()
	e := openFoldEnv(t, dir, time.Hour)
	other := openEnv(t, dir)
	share := e.share("fold")
	_, err := e.fs.Mkdir(ctxBG, share, "x")
	mustNil(t, err, "mkdir x")
	if _, err := e.fs.Mkdir(ctxBG, share, "x"); !errors.Is(err, ErrExist) {
		t.Fatalf("mkdir x again: %v, want ErrExist", err)
	}
	_, err = e.fs.Mkdir(ctxBG, share, "y")
	mustNil(t, err, "mkdir y")
	mustNil(t, e.fs.CommitFolded(), "commit folded")
	if !sees(t, other, share, "x") || !sees(t, other, share, "y") {
		t.Fatal("the requests folded around a failed one did not both commit")
	}
}

// TestFoldMountDeadline: with the default delay, another process sees a
// folded mkdir without anything else committing it.
func TestFoldMountDeadline(t *testing.T) {
	dir := t.TempDir()
	e := openFoldEnv(t, dir, 0)
	other := openEnv(t, dir)
	share := e.share("fold")
	_, err := e.fs.Mkdir(ctxBG, share, "late")
	mustNil(t, err, "mkdir")
	ctx, cancel := context.WithTimeout(ctxBG, 10*time.Second)
	defer cancel()
	for !sees(t, other, share, "late") {
		if ctx.Err() != nil {
			t.Fatal("another process never sees the folded mkdir")
		}
		time.Sleep(time.Millisecond) // polling: no event crosses processes
	}
}
