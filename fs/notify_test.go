package fs

import (
	"slices"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// noticeRows counts the rows of the change journal, every watch's.
func (e *env) noticeRows() int {
	e.t.Helper()
	var n int
	err := e.table.View(ctxBG, func(tx *locks.Tx) error {
		return tx.SQL().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_notices`).Scan(&n)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) mkdirs(paths ...string) {
	e.t.Helper()
	for _, p := range paths {
		if _, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: p}); err != nil {
			e.t.Fatalf("create directory %s: %v", p, err)
		}
	}
}

func (e *env) id(path string) FileID {
	e.t.Helper()
	a, _, err := e.fs.Stat(ctxBG, path, "")
	if err != nil {
		e.t.Fatalf("stat %s: %v", path, err)
	}
	return a.ID
}

// take returns the notices of watch w (and fails on notices of others).
func (e *env) take(w WatchID) []Notice {
	e.t.Helper()
	m, err := e.fs.TakeNotices(ctxBG)
	if err != nil {
		e.t.Fatal(err)
	}
	for id := range m {
		if id != w {
			e.t.Fatalf("notices for watch %d, want only %d's: %v", id, w, m)
		}
	}
	return m[w]
}

// TestNoticesRecorded: each front end's namespace change is recorded for
// a watch of its directory, in the changing transaction, with MS-FSCC's
// action and filter and the name relative to the watched directory; a
// WATCH_TREE watch sees its descendants' changes as paths, a plain watch
// only its own directory's.
func TestNoticesRecorded(t *testing.T) {
	type tc struct {
		name  string
		tree  bool
		watch string // watched directory
		do    func(e *env)
		want  []Notice
	}
	cases := []tc{
		{"REST create file", false, "shr/d", func(e *env) { e.putFile("shr/d/f.txt", nil) },
			[]Notice{{ActionAdded, NotifyFileName, "f.txt"}}},
		{"REST create directory", false, "shr/d", func(e *env) { e.mkdirs("shr/d/sub") },
			[]Notice{{ActionAdded, NotifyDirName, "sub"}}},
		{"REST delete file", false, "shr/d", func(e *env) {
			mustNil(t, e.fs.DeleteFile(ctxBG, "shr/d/old.txt", ""), "delete")
		}, []Notice{{ActionRemoved, NotifyFileName, "old.txt"}}},
		{"REST delete directory", false, "shr/d", func(e *env) {
			mustNil(t, e.fs.DeleteDirectory(ctxBG, "shr/d/olddir"), "delete directory")
		}, []Notice{{ActionRemoved, NotifyDirName, "olddir"}}},
		{"mount rename in place", false, "shr/d", func(e *env) {
			d := e.id("shr/d")
			mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: d, OldName: "old.txt", NewParent: d, NewName: "new.txt"}), "rename")
		}, []Notice{{ActionRenamedOld, NotifyFileName, "old.txt"}, {ActionRenamedNew, NotifyFileName, "new.txt"},
			{ActionModified, NotifyAttributes | NotifyCreation, "new.txt"}}},
		{"mount rename directory", false, "shr/d", func(e *env) {
			d := e.id("shr/d")
			mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: d, OldName: "olddir", NewParent: d, NewName: "newdir"}), "rename")
		}, []Notice{{ActionRenamedOld, NotifyDirName, "olddir"}, {ActionRenamedNew, NotifyDirName, "newdir"}}},
		{"tree: move within", true, "shr", func(e *env) {
			mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: e.id("shr/d"), OldName: "old.txt", NewParent: e.id("shr"), NewName: "up.txt"}), "rename")
		}, []Notice{{ActionRemoved, NotifyFileName, `d\old.txt`}, {ActionAdded, NotifyFileName, "up.txt"},
			{ActionModified, NotifyAttributes | NotifyCreation, "up.txt"}}},
		{"mount move out", false, "shr/d", func(e *env) {
			mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: e.id("shr/d"), OldName: "old.txt", NewParent: e.id("shr"), NewName: "moved.txt"}), "rename")
		}, []Notice{{ActionRemoved, NotifyFileName, "old.txt"}}},
		{"mount unlink", false, "shr/d", func(e *env) {
			mustNil(t, e.fs.Unlink(ctxBG, e.id("shr/d"), "old.txt"), "unlink")
		}, []Notice{{ActionRemoved, NotifyFileName, "old.txt"}}},
		{"mount mkdir", false, "shr/d", func(e *env) {
			_, err := e.fs.Mkdir(ctxBG, e.id("shr/d"), "m")
			mustNil(t, err, "mkdir")
		}, []Notice{{ActionAdded, NotifyDirName, "m"}}},
		{"SMB delete on close", false, "shr/d", func(e *env) {
			h := e.mustOpen("shr/d/old.txt", locks.AccessRead|locks.AccessDelete, allShare, DispositionOpen)
			mustNil(t, h.Dispose(ctxBG, true), "dispose")
			mustNil(t, h.Close(ctxBG), "close")
		}, []Notice{{ActionRemoved, NotifyFileName, "old.txt"}}},
		{"setattr attributes", false, "shr/d", func(e *env) {
			a, _, err := e.fs.Stat(ctxBG, "shr/d/old.txt", "")
			mustNil(t, err, "stat")
			attrs := AttrHidden
			_, err = e.fs.Setattr(ctxBG, a.ID, SetattrRequest{Attributes: &attrs})
			mustNil(t, err, "setattr")
		}, []Notice{{ActionModified, NotifyAttributes, "old.txt"}}},
		{"REST set properties", false, "shr/d", func(e *env) {
			attrs := AttrReadOnly
			key := DefaultPermissionKey
			_, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "shr/d/old.txt", Props: SMBProperties{Attributes: &attrs, PermissionKey: &key}})
			mustNil(t, err, "set properties")
		}, []Notice{{ActionModified, NotifyAttributes | NotifySecurity, "old.txt"}}},
		{"REST set metadata", false, "shr/d", func(e *env) {
			_, err := e.fs.SetMetadata(ctxBG, "shr/d/old.txt", map[string]string{"a": "b"}, "")
			mustNil(t, err, "set metadata")
		}, nil},
		{"REST resize", false, "shr/d", func(e *env) {
			n := int64(100)
			_, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "shr/d/old.txt", Size: &n})
			mustNil(t, err, "resize")
		}, []Notice{{ActionModified, NotifySize | NotifyLastWrite, "old.txt"}}},
		{"setattr change time alone", false, "shr/d", func(e *env) {
			now := time.Now()
			_, err := e.fs.Setattr(ctxBG, e.id("shr/d/old.txt"), SetattrRequest{Change: &now})
			mustNil(t, err, "setattr")
		}, nil},
		{"tree: create below", true, "shr", func(e *env) { e.putFile("shr/d/olddir/deep.txt", nil) },
			[]Notice{{ActionAdded, NotifyFileName, `d\olddir\deep.txt`}}},
		{"no tree: create below", false, "shr", func(e *env) { e.putFile("shr/d/olddir/deep.txt", nil) }, nil},
		{"other directory", false, "shr/d/olddir", func(e *env) { e.putFile("shr/d/f.txt", nil) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("shr")
			e.mkdirs("shr/d", "shr/d/olddir")
			e.putFile("shr/d/old.txt", []byte("x"))
			w, err := e.fs.WatchDir(ctxBG, e.id(c.watch), c.tree)
			mustNil(t, err, "watch")
			c.do(e)
			if got := e.take(w); !slices.Equal(got, c.want) {
				t.Fatalf("notices %+v, want %+v", got, c.want)
			}
			if n := e.noticeRows(); n != 0 {
				t.Fatalf("%d notices left after taking them", n)
			}
		})
	}
}

// TestNoNoticesUnwatched: changes of directories nobody watches record
// nothing, and an ended watch records nothing more.
func TestNoNoticesUnwatched(t *testing.T) {
	e := newEnv(t)
	e.share("shr")
	e.mkdirs("shr/d")
	e.putFile("shr/d/a.txt", []byte("a"))
	mustNil(t, e.fs.DeleteFile(ctxBG, "shr/d/a.txt", ""), "delete")
	if n := e.noticeRows(); n != 0 {
		t.Fatalf("%d notices with no watch", n)
	}
	w, err := e.fs.WatchDir(ctxBG, e.id("shr/d"), true)
	mustNil(t, err, "watch")
	e.putFile("shr/d/b.txt", nil)
	if n := e.noticeRows(); n != 1 {
		t.Fatalf("%d notices while watched, want 1", n)
	}
	mustNil(t, e.fs.Unwatch(ctxBG, w), "unwatch")
	if n := e.noticeRows(); n != 0 {
		t.Fatalf("%d notices left after unwatch", n)
	}
	e.putFile("shr/d/c.txt", nil)
	if n := e.noticeRows(); n != 0 {
		t.Fatalf("%d notices after unwatch", n)
	}
}

// TestNoticesAcrossProcesses: a change made through a second FileSystem
// on the same data directory (another process: the mount, `session`) is
// recorded for the first one's watch and found by its poll
// (HasNotices); only the first one's in-process signal is its own.
func TestNoticesAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	a := openEnv(t, dir)
	b := openEnv(t, dir)
	a.share("shr")
	w, err := a.fs.WatchDir(ctxBG, a.id("shr"), false)
	mustNil(t, err, "watch")
	if has, err := a.fs.HasNotices(ctxBG); err != nil || has {
		t.Fatalf("notices before any change: %v %v", has, err)
	}
	b.putFile("shr/from-b.txt", nil)
	if has, err := b.fs.HasNotices(ctxBG); err != nil || has {
		t.Fatalf("the other process has notices of a watch it does not hold: %v %v", has, err)
	}
	if has, err := a.fs.HasNotices(ctxBG); err != nil || !has {
		t.Fatalf("the watching process finds no notice: %v %v", has, err)
	}
	want := []Notice{{ActionAdded, NotifyFileName, "from-b.txt"}}
	if got := a.take(w); !slices.Equal(got, want) {
		t.Fatalf("notices %+v, want %+v", got, want)
	}
	// A watch whose owner died is dropped, with its notices, by the next
	// watch registered.
	wb, err := b.fs.WatchDir(ctxBG, b.id("shr"), false)
	mustNil(t, err, "watch b")
	a.putFile("shr/from-a.txt", nil)
	killOwner(t, b)
	if _, err := a.fs.WatchDir(ctxBG, a.id("shr"), false); err != nil {
		t.Fatal(err)
	}
	var watches, notices int
	err = a.table.View(ctxBG, func(tx *locks.Tx) error {
		if err := tx.SQL().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_watches WHERE id = ?`, int64(wb)).Scan(&watches); err != nil {
			return err
		}
		return tx.SQL().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_notices WHERE watch = ?`, int64(wb)).Scan(&notices)
	})
	mustNil(t, err, "count")
	if watches != 0 || notices != 0 {
		t.Fatalf("dead owner's watch: %d rows, %d notices left", watches, notices)
	}
}

// TestWatchOfDeletePendingDir: a watch registered on a directory that is
// already delete pending gets NoticeDeletePending at once, as one
// registered before the delete gets it when it happens. A client may
// send CHANGE_NOTIFY and remove the directory on another connection
// without waiting for the interim response (smbtorture
// smb2.notify.rmdir4); whichever commits first, the request must end
// with STATUS_DELETE_PENDING instead of waiting for ever.
func TestWatchOfDeletePendingDir(t *testing.T) {
	for _, before := range []bool{true, false} {
		e := newEnv(t)
		e.share("shr")
		e.mkdirs("shr/d")
		openDir := func(access locks.Access) *Handle {
			h, _, _, err := e.fs.OpenEntry(ctxBG, OpenEntryRequest{OpenPathRequest: OpenPathRequest{Path: "shr/d",
				Open: OpenOptions{Access: access, Share: allShare}}})
			mustNil(t, err, "open shr/d")
			return h
		}
		keep := openDir(locks.AccessRead) // the watcher's open: d stays
		var w WatchID
		var err error
		if before {
			w, err = e.fs.WatchDir(ctxBG, e.id("shr/d"), false)
			mustNil(t, err, "watch")
		}
		h := openDir(locks.AccessRead | locks.AccessDelete)
		mustNil(t, h.Dispose(ctxBG, true), "dispose")
		mustNil(t, h.Close(ctxBG), "close")
		if !before {
			w, err = e.fs.WatchDir(ctxBG, keep.File(), false)
			mustNil(t, err, "watch")
		}
		// The delete-on-close and the close each record it when the watch
		// came first; the SMB side ends its requests on the first.
		got := e.take(w)
		if len(got) == 0 || slices.ContainsFunc(got, func(n Notice) bool { return n.Action != NoticeDeletePending }) {
			t.Errorf("watch registered before the delete %v: notices %v, want NoticeDeletePending only", before, got)
		}
		mustNil(t, keep.Close(ctxBG), "close the watcher's open")
	}
}
