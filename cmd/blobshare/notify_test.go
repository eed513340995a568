package main

import (
	"context"
	"slices"
	"testing"

	"github.com/blobshare/blobshare/fs"
)

// TestSessionChangesReachWatch: a `blobshare session` process's changes
// — a create, an attribute change, a delete on close — are recorded for a
// watch this process holds on their directory (CHANGE_NOTIFY's journal,
// fs/notify.go), in the transaction of each change: once the session
// answered, this process finds them.
func TestSessionChangesReachWatch(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	dd := seed(t, data)
	dir, _, err := dd.FS.Stat(ctx, "share/dir", "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := dd.FS.WatchDir(ctx, dir.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	s := startSession(t, data)
	s.expect("open a share/dir/made access=read,write,delete share=read disposition=create", "ok ")
	s.expect("close a", "ok")
	s.expect("attrs share/dir/made Hidden", "ok")
	s.expect("open b share/dir/made access=read,delete share=read,write,delete delete_on_close", "ok ")
	s.expect("close b", "ok")
	s.expect("quit", "ok")
	if err := s.wait(); err != nil {
		t.Fatalf("exit: %v (stderr %s)", err, s.errb.String())
	}
	if has, err := dd.FS.HasNotices(ctx); err != nil || !has {
		t.Fatalf("HasNotices after the session's changes: %v %v", has, err)
	}
	m, err := dd.FS.TakeNotices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []fs.Notice{
		{Action: fs.ActionAdded, Filter: fs.NotifyFileName, Name: "made"},
		{Action: fs.ActionModified, Filter: fs.NotifyAttributes, Name: "made"},
		{Action: fs.ActionRemoved, Filter: fs.NotifyFileName, Name: "made"},
	}
	if got := m[w]; !slices.Equal(got, want) || len(m) != 1 {
		t.Fatalf("notices %+v, want %+v for watch %d", m, want, w)
	}
}
