package fs

import (
	"context"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// leaseDir opens directory path as an SMB client would with a v2 lease
// (client, key) asking RWH, counted in the directory lease hint first as
// the SMB server does, and returns the lease's identity; the grant is RH
// (a directory never gets Write caching).
func (e *env) leaseDir(path string, client, key byte) locks.LeaseIdentity {
	e.t.Helper()
	h, _, _, err := e.fs.OpenEntry(ctxBG, OpenEntryRequest{OpenPathRequest: OpenPathRequest{Path: path, Disposition: DispositionOpen,
		Open: OpenOptions{Access: locks.AccessRead, Share: allShare}}, Kind: OpenDirectoryKind})
	if err != nil {
		e.t.Fatalf("open directory %s: %v", path, err)
	}
	e.t.Cleanup(func() { _ = h.Close(ctxBG); e.fs.ReleaseDirLease(h) })
	e.fs.HoldDirLease(h) // as the SMB server does, before the grant
	id := locks.LeaseIdentity{Client: [16]byte{client}, Key: locks.LeaseKey{key}}
	r, err := e.table.DecideCacheUpdate(ctxBG, locks.CacheCall{File: h.File(), LeaseVersion: 2, Req: locks.CacheRequest{
		Who: locks.RequesterSMB, Kind: locks.CacheOpOpen, Access: locks.AccessRead, Share: allShare, Directory: true,
		Handle: h.ID(), Lease: &id, RequestLease: locks.CacheRWH}})
	if err != nil || r.Grant != locks.CacheRH {
		e.t.Fatalf("directory lease on %s: %+v %v, want RH", path, r, err)
	}
	return id
}

// breaks takes this process's outbox.
func (e *env) breaks() []locks.BreakNote {
	e.t.Helper()
	var out []locks.BreakNote
	mustNil(e.t, e.table.Update(ctxBG, func(tx *locks.Tx) error {
		var err error
		out, err = tx.TakeBreaks()
		return err
	}), "take breaks")
	return out
}

// TestDirLeaseBreaks: every front end's change of a directory's entries
// breaks the directory's lease (RH → none, ack required) in the changing
// transaction — REST, the mount, `session`-style opens, an SMB delete on
// close — as MS-SMB2 3.3.1.4 lists them: an entry added, deleted, renamed
// in, out or within, its attributes, times or size changed. A change
// that reports nothing (the change time alone, metadata) or happens
// elsewhere (a subdirectory, another directory) breaks nothing, and
// neither does a change made with the lease as its parent lease key.
func TestDirLeaseBreaks(t *testing.T) {
	type tc struct {
		name   string
		do     func(e *env, ctx context.Context)
		broken bool
	}
	cases := []tc{
		{"REST create file", func(e *env, ctx context.Context) {
			_, err := e.fs.CreateFile(ctx, CreateFileRequest{Path: "shr/d/f.txt"})
			mustNil(t, err, "create")
		}, true},
		{"REST create directory", func(e *env, ctx context.Context) {
			_, err := e.fs.CreateDirectory(ctx, CreateDirectoryRequest{Path: "shr/d/sub"})
			mustNil(t, err, "create directory")
		}, true},
		{"REST delete file", func(e *env, ctx context.Context) {
			mustNil(t, e.fs.DeleteFile(ctx, "shr/d/old.txt", ""), "delete")
		}, true},
		{"REST delete directory", func(e *env, ctx context.Context) {
			mustNil(t, e.fs.DeleteDirectory(ctx, "shr/d/olddir"), "delete directory")
		}, true},
		{"REST set properties", func(e *env, ctx context.Context) {
			attrs := AttrReadOnly
			_, err := e.fs.SetProperties(ctx, SetPropertiesRequest{Path: "shr/d/old.txt", Props: SMBProperties{Attributes: &attrs}})
			mustNil(t, err, "set properties")
		}, true},
		{"REST resize", func(e *env, ctx context.Context) {
			n := int64(100)
			_, err := e.fs.SetProperties(ctx, SetPropertiesRequest{Path: "shr/d/old.txt", Size: &n})
			mustNil(t, err, "resize")
		}, true},
		{"REST set metadata", func(e *env, ctx context.Context) {
			_, err := e.fs.SetMetadata(ctx, "shr/d/old.txt", map[string]string{"a": "b"}, "")
			mustNil(t, err, "set metadata")
		}, false},
		{"mount rename within", func(e *env, ctx context.Context) {
			d := e.id("shr/d")
			mustNil(t, e.fs.Rename(ctx, RenameRequest{OldParent: d, OldName: "old.txt", NewParent: d, NewName: "new.txt"}), "rename")
		}, true},
		{"mount move out", func(e *env, ctx context.Context) {
			mustNil(t, e.fs.Rename(ctx, RenameRequest{OldParent: e.id("shr/d"), OldName: "old.txt", NewParent: e.id("shr"), NewName: "out.txt"}), "rename")
		}, true},
		{"mount move in", func(e *env, ctx context.Context) {
			mustNil(t, e.fs.Rename(ctx, RenameRequest{OldParent: e.id("shr"), OldName: "top.txt", NewParent: e.id("shr/d"), NewName: "in.txt"}), "rename")
		}, true},
		{"mount unlink", func(e *env, ctx context.Context) {
			mustNil(t, e.fs.Unlink(ctx, e.id("shr/d"), "old.txt"), "unlink")
		}, true},
		{"mount mkdir", func(e *env, ctx context.Context) {
			_, err := e.fs.Mkdir(ctx, e.id("shr/d"), "m")
			mustNil(t, err, "mkdir")
		}, true},
		{"setattr attributes", func(e *env, ctx context.Context) {
			attrs := AttrHidden
			_, err := e.fs.Setattr(ctx, e.id("shr/d/old.txt"), SetattrRequest{Attributes: &attrs})
			mustNil(t, err, "setattr")
		}, true},
		{"setattr change time alone", func(e *env, ctx context.Context) {
			now := time.Now()
			_, err := e.fs.Setattr(ctx, e.id("shr/d/old.txt"), SetattrRequest{Change: &now})
			mustNil(t, err, "setattr")
		}, false},
		{"delete on close", func(e *env, ctx context.Context) {
			h := e.mustOpen("shr/d/old.txt", locks.AccessRead|locks.AccessDelete, allShare, DispositionOpen)
			mustNil(t, h.Dispose(ctx, true), "dispose")
			mustNil(t, h.Close(ctx), "close")
		}, true},
		{"create in a subdirectory", func(e *env, ctx context.Context) {
			_, err := e.fs.CreateFile(ctx, CreateFileRequest{Path: "shr/d/olddir/deep.txt"})
			mustNil(t, err, "create")
		}, false},
		{"create in another directory", func(e *env, ctx context.Context) {
			_, err := e.fs.CreateFile(ctx, CreateFileRequest{Path: "shr/other.txt"})
			mustNil(t, err, "create")
		}, false},
	}
	for _, c := range cases {
		for _, withParent := range []bool{false, true} {
			name := c.name
			if withParent {
				name += " with the lease as parent key"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				e.share("shr")
				e.mkdirs("shr/d", "shr/d/olddir")
				e.putFile("shr/d/old.txt", []byte("x"))
				e.putFile("shr/top.txt", nil)
				id := e.leaseDir("shr/d", 1, 0xd)
				ctx := ctxBG
				if withParent {
					ctx = locks.WithParentLease(ctx, id)
				}
				c.do(e, ctx)
				got := e.breaks()
				want := c.broken && !withParent
				if !want {
					if len(got) != 0 {
						t.Fatalf("breaks %+v, want none", got)
					}
					return
				}
				if len(got) != 1 || got[0].Lease == nil || *got[0].Lease != id || got[0].File != e.id("shr/d") ||
					got[0].From != locks.CacheRH || got[0].To != locks.CacheNone || !got[0].AckRequired {
					t.Fatalf("breaks %+v, want d's lease RH → none, ack required", got)
				}
			})
		}
	}
}

// TestDirLeaseBreaksAcrossProcesses: a change made by another process on
// the same data directory (the mount, `session`) breaks the lease held
// by this one (the other process sees the shared hint): the break is in
// this process's outbox.
func TestDirLeaseBreaksAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	a, b := openEnv(t, dir), openEnv(t, dir)
	a.share("shr")
	a.mkdirs("shr/d")
	id := a.leaseDir("shr/d", 1, 0xd)
	_, err := b.fs.Mkdir(ctxBG, b.id("shr/d"), "from-b")
	mustNil(t, err, "mkdir in b")
	if got := b.breaks(); len(got) != 0 {
		t.Fatalf("the changing process has breaks %+v of a lease it does not hold", got)
	}
	got := a.breaks()
	if len(got) != 1 || *got[0].Lease != id || got[0].To != locks.CacheNone {
		t.Fatalf("holder's outbox %+v, want its lease RH → none", got)
	}
}
