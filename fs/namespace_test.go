package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// TestLookupOutcomes: a hit, a miss in a directory, a name under a file,
// under a missing parent and under the root (shares).
func TestLookupOutcomes(t *testing.T) {
	e := newEnv(t)
	sh := e.share("docs")
	e.putFile("docs/f", []byte("x"))
	f, err := e.fs.Lookup(ctxBG, sh, "F")
	mustNil(t, err, "lookup of docs/F")
	for _, tc := range []struct {
		name   string
		parent FileID
		child  string
		want   error
		wantID FileID
	}{
		{"file in a share", sh, "f", nil, f.ID},
		{"share under the root", RootID, "DOCS", nil, sh},
		{"missing name", sh, "nope", ErrNotFound, 0},
		{"missing share", RootID, "nope", ErrNotFound, 0},
		{"name under a file", f.ID, "x", ErrNotDir, 0},
		{"missing parent", FileID(1 << 40), "x", ErrNotFound, 0},
	} {
		for _, lookup := range []struct {
			name string
			fn   func(ctx context.Context, parent FileID, name string) (Attr, error)
		}{{"Lookup", e.fs.Lookup}, {"LookupStat", e.fs.LookupStat}} {
			t.Run(tc.name+"/"+lookup.name, func(t *testing.T) {
				a, err := lookup.fn(ctxBG, tc.parent, tc.child)
				if tc.want != nil {
					wantErr(t, err, tc.want, "lookup")
					return
				}
				if err != nil || a.ID != tc.wantID {
					t.Fatalf("lookup: id %d, %v; want id %d", a.ID, err, tc.wantID)
				}
			})
		}
	}
}

// TestStatAttributes: LookupStat, GetAttr and ReadDir report the stat
// attributes exactly as Lookup does, and leave the others zero.
func TestStatAttributes(t *testing.T) {
	e := newEnv(t)
	sh := e.share("docs")
	e.putFile("docs/f", []byte("hello"))
	_, err := e.fs.SetMetadata(ctxBG, "docs/f", map[string]string{"a": "b"}, "")
	mustNil(t, err, "set metadata")
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "docs/d"})
	mustNil(t, err, "mkdir")
	stat := func(a Attr) Attr {
		return Attr{ID: a.ID, Parent: a.Parent, Kind: a.Kind, Name: a.Name, Size: a.Size, Attributes: a.Attributes,
			LastWrite: a.LastWrite, Change: a.Change, Version: a.Version, Unlinked: a.Unlinked}
	}
	ents, err := e.fs.ReadDir(ctxBG, sh)
	mustNil(t, err, "readdir")
	if len(ents) != 2 {
		t.Fatalf("readdir: %d entries, want 2", len(ents))
	}
	for i, name := range []string{"d", "f"} {
		full, err := e.fs.Lookup(ctxBG, sh, name)
		mustNil(t, err, "lookup")
		if full.Metadata == nil && name == "f" || full.ETag == "" || full.Created.IsZero() {
			t.Fatalf("Lookup of %s lacks the REST attributes: %+v", name, full)
		}
		want := stat(full)
		got, err := e.fs.LookupStat(ctxBG, sh, name)
		mustNil(t, err, "lookup stat")
		getattr, err := e.fs.GetAttr(ctxBG, full.ID)
		mustNil(t, err, "getattr")
		for _, c := range []struct {
			call string
			a    Attr
		}{{"LookupStat", got}, {"GetAttr", getattr}, {"ReadDir", ents[i]}} {
			if !reflect.DeepEqual(c.a, want) {
				t.Errorf("%s of %s = %+v, want the stat attributes of Lookup %+v", c.call, name, c.a, want)
			}
		}
	}
}

func TestCaseInsensitiveCasePreserving(t *testing.T) {
	e := newEnv(t)
	sh := e.share("docs")
	h, a, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: "ReadMe.TXT", Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
	mustNil(t, err, "create")
	mustNil(t, h.Close(ctxBG), "close")

	for _, n := range []string{"readme.txt", "README.TXT", "ReadMe.TXT", "rEaDmE.tXt"} {
		got, err := e.fs.Lookup(ctxBG, sh, n)
		if err != nil || got.ID != a.ID || got.Name != "ReadMe.TXT" {
			t.Errorf("Lookup(%q) = %+v, %v; want id %d with the created case", n, got.ID, err, a.ID)
		}
		st, _, err := e.fs.Stat(ctxBG, "docs/"+n, "")
		if err != nil || st.ID != a.ID {
			t.Errorf("Stat(docs/%s) = %d, %v", n, st.ID, err)
		}
	}
	// A second name differing only in case collides, for files and directories.
	_, _, err = e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: "README.txt", Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
	wantErr(t, err, ErrExist, "create README.txt")
	_, err = e.fs.Mkdir(ctxBG, sh, "readme.TXT")
	wantErr(t, err, ErrExist, "mkdir readme.TXT")
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "docs/README.TXT"})
	wantErr(t, err, ErrExist, "REST create directory over a file")

	ents, err := e.fs.ReadDir(ctxBG, sh)
	mustNil(t, err, "readdir")
	if len(ents) != 1 || ents[0].Name != "ReadMe.TXT" {
		t.Fatalf("readdir = %+v", ents)
	}
}

func TestIDsStableAcrossRename(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	d1, err := e.fs.Mkdir(ctxBG, sh, "d1")
	mustNil(t, err, "mkdir d1")
	d2, err := e.fs.Mkdir(ctxBG, sh, "d2")
	mustNil(t, err, "mkdir d2")
	e.putFile("data/d1/f", []byte("hello"))
	f, err := e.fs.Lookup(ctxBG, d1.ID, "f")
	mustNil(t, err, "lookup")

	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: d1.ID, OldName: "f", NewParent: d2.ID, NewName: "g"}), "rename")
	g, err := e.fs.Lookup(ctxBG, d2.ID, "g")
	mustNil(t, err, "lookup g")
	if st, _, err := e.fs.Stat(ctxBG, "data/d2/g", ""); err != nil || st.Path != "data/d2/g" || st.ID != f.ID {
		t.Fatalf("stat after rename: %+v %v", st, err)
	}
	if g.ID != f.ID || g.Parent != d2.ID {
		t.Fatalf("after rename: %+v, want id %d in d2", g, f.ID)
	}
	if _, err := e.fs.Lookup(ctxBG, d1.ID, "f"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old name still there: %v", err)
	}
	if got := string(e.content("data/d2/g")); got != "hello" {
		t.Fatalf("content after rename %q", got)
	}
	// Ids are never reused: a new file gets a bigger id.
	mustNil(t, e.fs.Unlink(ctxBG, d2.ID, "g"), "unlink")
	e.putFile("data/d2/g", nil)
	g2, _ := e.fs.Lookup(ctxBG, d2.ID, "g")
	if g2.ID <= g.ID {
		t.Fatalf("id reused or smaller: %d after %d", g2.ID, g.ID)
	}
	// Directory rename keeps the subtree.
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "d2", NewParent: d1.ID, NewName: "inner"}), "rename dir")
	st, _, err := e.fs.Stat(ctxBG, "data/d1/inner/g", "")
	mustNil(t, err, "stat moved subtree")
	if st.ID != g2.ID {
		t.Fatalf("moved subtree has id %d, want %d", st.ID, g2.ID)
	}
	// Into its own subtree: refused.
	err = e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "d1", NewParent: d2.ID, NewName: "x"})
	wantErr(t, err, ErrInvalidArg, "rename into own subtree")
}

func TestRenameReplaceAtomic(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/a", []byte("AAA"))
	e.putFile("data/b", []byte("BBBB"))
	a, _ := e.fs.Lookup(ctxBG, sh, "a")

	err := e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "a", NewParent: sh, NewName: "b", NoReplace: true})
	wantErr(t, err, ErrExist, "RENAME_NOREPLACE")
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "a", NewParent: sh, NewName: "B"}), "rename over")
	b, err := e.fs.Lookup(ctxBG, sh, "b")
	mustNil(t, err, "lookup")
	if b.ID != a.ID || b.Name != "B" || string(e.content("data/b")) != "AAA" {
		t.Fatalf("after replace: %+v %q", b, e.content("data/b"))
	}
	ents, _ := e.fs.ReadDir(ctxBG, sh)
	if len(ents) != 1 {
		t.Fatalf("entries after replace: %+v", ents)
	}
	// Only the case changes.
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "b", NewParent: sh, NewName: "bb"}), "rename")
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "bb", NewParent: sh, NewName: "BB"}), "case-only rename")
	got, _ := e.fs.Lookup(ctxBG, sh, "bb")
	if got.Name != "BB" {
		t.Fatalf("case-only rename kept %q", got.Name)
	}
	// Cross-share rename refused.
	sh2 := e.share("other")
	err = e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "BB", NewParent: sh2, NewName: "x"})
	wantErr(t, err, ErrCrossShare, "cross-share")
}

func TestSharesAndDirectories(t *testing.T) {
	e := newEnv(t)
	_, err := e.fs.CreateShare(ctxBG, ShareRequest{Name: "Bad_Name"})
	wantErr(t, err, ErrInvalidName, "bad share name")
	a, err := e.fs.CreateShare(ctxBG, ShareRequest{Name: "s1", Metadata: map[string]string{"k": "v"}})
	wantErr(t, err, ErrInvalidName, "short share name")
	_ = a
	s, err := e.fs.CreateShare(ctxBG, ShareRequest{Name: "share1", Metadata: map[string]string{"k": "v"}})
	mustNil(t, err, "create share")
	if s.QuotaGiB != DefaultQuotaGiB || s.Metadata["k"] != "v" || s.Kind != KindShare {
		t.Fatalf("share attrs %+v", s)
	}
	_, err = e.fs.CreateShare(ctxBG, ShareRequest{Name: "share1"})
	wantErr(t, err, ErrShareExist, "duplicate share")
	for _, n := range []string{"share2", "other", "share3"} {
		e.share(n)
	}
	res, err := e.fs.ListShares(ctxBG, ListRequest{Prefix: "share", MaxResults: 2})
	mustNil(t, err, "list shares")
	if len(res.Shares) != 2 || res.Shares[0].Name != "share1" || res.Shares[1].Name != "share2" || res.NextMarker != "share3" {
		t.Fatalf("page 1: %+v next %q", res.Shares, res.NextMarker)
	}
	res, err = e.fs.ListShares(ctxBG, ListRequest{Prefix: "share", Marker: res.NextMarker, MaxResults: 2})
	mustNil(t, err, "list shares 2")
	if len(res.Shares) != 1 || res.Shares[0].Name != "share3" || res.NextMarker != "" {
		t.Fatalf("page 2: %+v next %q", res.Shares, res.NextMarker)
	}
	s2, err := e.fs.SetShareQuota(ctxBG, "share1", 10)
	mustNil(t, err, "quota")
	if s2.QuotaGiB != 10 || s2.ETag == s.ETag {
		t.Fatalf("quota change: %+v", s2)
	}
	_, err = e.fs.SetShareQuota(ctxBG, "share1", 0)
	wantErr(t, err, ErrInvalidArg, "zero quota")

	// Directories.
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "nosuch/d"})
	wantErr(t, err, ErrShareNotFound, "dir in missing share")
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "share1/a/b"})
	wantErr(t, err, ErrParentNotFound, "dir in missing parent")
	d, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "share1/a", Metadata: map[string]string{"x": "1"}})
	mustNil(t, err, "create dir")
	if d.Attributes != AttrDirectory || d.Metadata["x"] != "1" {
		t.Fatalf("dir attrs %+v", d)
	}
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "share1/A"})
	wantErr(t, err, ErrExist, "dir exists (case-insensitive)")
	for _, n := range []string{"c", "b", "B2", "a/inner"} {
		_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "share1/" + n})
		mustNil(t, err, "create "+n)
	}
	e.putFile("share1/b1.txt", []byte("x"))
	l, err := e.fs.ListDirectory(ctxBG, "share1", ListRequest{MaxResults: 3})
	mustNil(t, err, "list")
	names := func(as []Attr) []string {
		var s []string
		for _, a := range as {
			s = append(s, a.Name)
		}
		return s
	}
	if got := strings.Join(names(l.Entries), ","); got != "a,b,b1.txt" || l.NextMarker == "" {
		t.Fatalf("list page 1 = %s next %q", got, l.NextMarker)
	}
	l, err = e.fs.ListDirectory(ctxBG, "share1", ListRequest{MaxResults: 3, Marker: l.NextMarker})
	mustNil(t, err, "list 2")
	if got := strings.Join(names(l.Entries), ","); got != "B2,c" || l.NextMarker != "" {
		t.Fatalf("list page 2 = %s next %q", got, l.NextMarker)
	}
	l, err = e.fs.ListDirectory(ctxBG, "share1", ListRequest{Prefix: "B"})
	mustNil(t, err, "list prefix")
	if got := strings.Join(names(l.Entries), ","); got != "b,b1.txt,B2" {
		t.Fatalf("list prefix = %s", got)
	}
	err = e.fs.DeleteDirectory(ctxBG, "share1/a")
	wantErr(t, err, ErrNotEmpty, "delete non-empty dir")
	mustNil(t, e.fs.DeleteDirectory(ctxBG, "share1/a/inner"), "delete inner")
	mustNil(t, e.fs.DeleteDirectory(ctxBG, "share1/a"), "delete a")
	_, _, err = e.fs.Stat(ctxBG, "share1/a", "")
	wantErr(t, err, ErrNotFound, "deleted dir")
	err = e.fs.DeleteDirectory(ctxBG, "share1/b1.txt")
	wantErr(t, err, ErrNotDir, "delete dir on a file")

	// Metadata and properties on a directory.
	md := map[string]string{"a": "b"}
	d3, err := e.fs.SetMetadata(ctxBG, "share1/c", md, "")
	mustNil(t, err, "dir metadata")
	if d3.Metadata["a"] != "b" {
		t.Fatalf("metadata %+v", d3.Metadata)
	}
	hidden := AttrHidden
	d4, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "share1/c", Props: SMBProperties{Attributes: &hidden}})
	mustNil(t, err, "dir props")
	if d4.Attributes != AttrHidden|AttrDirectory {
		t.Fatalf("dir attributes %v", d4.Attributes)
	}
	// Delete share removes everything.
	mustNil(t, e.fs.DeleteShare(ctxBG, "share1"), "delete share")
	_, err = e.fs.GetShare(ctxBG, "share1")
	wantErr(t, err, ErrShareNotFound, "deleted share")
	_, _, err = e.fs.Stat(ctxBG, "share1/b1.txt", "")
	wantErr(t, err, ErrShareNotFound, "file in deleted share")
}

func TestMountRootHoldsShares(t *testing.T) {
	e := newEnv(t)
	a, err := e.fs.Mkdir(ctxBG, RootID, "viamount")
	mustNil(t, err, "mkdir at root")
	if a.Kind != KindShare {
		t.Fatalf("mkdir at root made %v", a.Kind)
	}
	_, err = e.fs.Mkdir(ctxBG, RootID, "Not_A_Share")
	wantErr(t, err, ErrInvalidName, "bad share via mkdir")
	_, _, err = e.fs.Create(ctxBG, CreateRequest{Parent: RootID, Name: "file", Open: OpenOptions{Access: rw, Share: allShare}})
	wantErr(t, err, ErrInvalidArg, "file at root")
	ents, err := e.fs.ReadDir(ctxBG, RootID)
	mustNil(t, err, "readdir root")
	if len(ents) != 1 || ents[0].Name != "viamount" {
		t.Fatalf("root entries %+v", ents)
	}
	mustNil(t, e.fs.Rmdir(ctxBG, RootID, "viamount"), "rmdir share")
	if _, err := e.fs.GetShare(ctxBG, "viamount"); !errors.Is(err, ErrShareNotFound) {
		t.Fatalf("share still there: %v", err)
	}
}

func TestUnlinkWhileOpen(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	old := append([]byte("old content"), pattern(InlineMax, 1)...) // blob-backed
	e.putFile("data/f", old)
	f, _ := e.fs.Lookup(ctxBG, sh, "f")
	h, err := e.fs.Open(ctxBG, f.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
	mustNil(t, err, "open")

	mustNil(t, e.fs.Unlink(ctxBG, sh, "f"), "unlink")
	// The name left the mount at once...
	_, err = e.fs.Lookup(ctxBG, sh, "f")
	wantErr(t, err, ErrNotFound, "lookup after unlink")
	if ents, _ := e.fs.ReadDir(ctxBG, sh); len(ents) != 0 {
		t.Fatalf("readdir after unlink: %+v", ents)
	}
	// ...REST sees it delete-pending, in list it is left out...
	_, _, err = e.fs.Stat(ctxBG, "data/f", "")
	wantErr(t, err, locks.ErrDeletePending, "REST stat of pending file")
	_, err = e.get("data/f")
	wantErr(t, err, locks.ErrDeletePending, "REST get of pending file")
	if l, _ := e.fs.ListDirectory(ctxBG, "data", ListRequest{}); len(l.Entries) != 0 {
		t.Fatalf("list shows pending file: %+v", l.Entries)
	}
	// ...the handle still reads it, fstat works...
	buf := make([]byte, 11)
	n, _ := h.ReadAt(ctxBG, buf, 0)
	if string(buf[:n]) != "old content" {
		t.Fatalf("read through open handle: %q", buf[:n])
	}
	ga, err := e.fs.GetAttr(ctxBG, f.ID)
	if err != nil || !ga.Unlinked || ga.Size != int64(len(old)) {
		t.Fatalf("getattr of unlinked: %+v %v", ga, err)
	}
	// ...and the same name can be created again on the mount.
	h2, a2, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: "f", Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
	mustNil(t, err, "recreate name")
	if a2.ID == f.ID {
		t.Fatal("recreated file has the old id")
	}
	mustNil(t, h2.Close(ctxBG), "close new")
	// REST now sees the live file, not the pending one.
	st, _, err := e.fs.Stat(ctxBG, "data/f", "")
	if err != nil || st.ID != a2.ID {
		t.Fatalf("REST stat with a live name: %d %v", st.ID, err)
	}
	// Last close removes the old file and its blob.
	mustNil(t, h.Close(ctxBG), "close old")
	if _, err := e.fs.GetAttr(ctxBG, f.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old file after last close: %v", err)
	}
	e.fs.collect(ctxBG) // what the background collector does
	if _, err := e.store.Stat(ctxBG, blobKey(f.ID)); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("blob of removed file: %v", err)
	}
}

func TestUnlinkPendingNameGoesAfterLastClose(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/f", []byte("x"))
	f, _ := e.fs.Lookup(ctxBG, sh, "f")
	h, err := e.fs.Open(ctxBG, f.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
	mustNil(t, err, "open")
	mustNil(t, e.fs.Unlink(ctxBG, sh, "f"), "unlink")
	_, _, err = e.fs.Stat(ctxBG, "data/f", "")
	wantErr(t, err, locks.ErrDeletePending, "pending")
	mustNil(t, h.Close(ctxBG), "close")
	_, _, err = e.fs.Stat(ctxBG, "data/f", "")
	wantErr(t, err, ErrNotFound, "after last close")
}

func TestRenameOverOpenFile(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/target", []byte("target data"))
	e.putFile("data/src", []byte("new"))
	tgt, _ := e.fs.Lookup(ctxBG, sh, "target")
	h, err := e.fs.Open(ctxBG, tgt.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
	mustNil(t, err, "open target")
	mustNil(t, e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "src", NewParent: sh, NewName: "target"}), "rename over open")
	if got := string(e.content("data/target")); got != "new" {
		t.Fatalf("target now %q", got)
	}
	buf := make([]byte, 64)
	n, _ := h.ReadAt(ctxBG, buf, 0)
	if string(buf[:n]) != "target data" {
		t.Fatalf("open handle of replaced file reads %q", buf[:n])
	}
	mustNil(t, h.Close(ctxBG), "close")
	if _, err := e.fs.GetAttr(ctxBG, tgt.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replaced file after last close: %v", err)
	}
	// A handle that does not share delete blocks the rename of its file.
	src, _ := e.fs.Lookup(ctxBG, sh, "target")
	h2, err := e.fs.Open(ctxBG, src.ID, OpenOptions{Access: locks.AccessRead, Share: locks.ShareRead})
	mustNil(t, err, "open no-delete-share")
	err = e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "target", NewParent: sh, NewName: "moved"})
	wantErr(t, err, locks.ErrSharingViolation, "rename of a file held without share-delete")
	mustNil(t, h2.Close(ctxBG), "close")
}

func TestRmdirWithUnlinkedOpenFile(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	d, err := e.fs.Mkdir(ctxBG, sh, "d")
	mustNil(t, err, "mkdir")
	e.putFile("data/d/f", []byte("keep me"))
	f, _ := e.fs.Lookup(ctxBG, d.ID, "f")
	h, err := e.fs.Open(ctxBG, f.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
	mustNil(t, err, "open")
	mustNil(t, e.fs.Unlink(ctxBG, d.ID, "f"), "unlink")
	mustNil(t, e.fs.Rmdir(ctxBG, sh, "d"), "rmdir with only an unlinked file inside")
	if _, err := e.fs.Lookup(ctxBG, sh, "d"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("directory still visible: %v", err)
	}
	// A removed directory takes no new entries (a process whose working
	// directory it was gets ENOENT), and looks empty.
	_, _, err = e.fs.Create(ctxBG, CreateRequest{Parent: d.ID, Name: "new", Open: OpenOptions{Access: rw, Share: allShare}})
	wantErr(t, err, ErrNotFound, "create in a removed directory")
	_, err = e.fs.Mkdir(ctxBG, d.ID, "sub")
	wantErr(t, err, ErrNotFound, "mkdir in a removed directory")
	e.putFile("data/other", nil)
	err = e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: "other", NewParent: d.ID, NewName: "other"})
	wantErr(t, err, ErrNotFound, "rename into a removed directory")
	_, err = e.fs.Lookup(ctxBG, d.ID, "f")
	wantErr(t, err, ErrNotFound, "lookup in a removed directory")
	// The name is free again.
	_, err = e.fs.Mkdir(ctxBG, sh, "d")
	mustNil(t, err, "mkdir again")
	buf := make([]byte, 16)
	n, _ := h.ReadAt(ctxBG, buf, 0)
	if string(buf[:n]) != "keep me" {
		t.Fatalf("open file reads %q", buf[:n])
	}
	mustNil(t, h.Close(ctxBG), "close")
	for _, id := range []FileID{f.ID, d.ID} {
		if _, err := e.fs.GetAttr(ctxBG, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("entry %d after last close: %v", id, err)
		}
	}
	// A live child still blocks rmdir.
	e.putFile("data/d/g", nil)
	d2, _ := e.fs.Lookup(ctxBG, sh, "d")
	wantErr(t, e.fs.Rmdir(ctxBG, sh, "d"), ErrNotEmpty, "rmdir non-empty")
	_ = d2
}

// TestRemoveFileBeforeNamespaceExists: the lock table may reap a dead
// owner's handles (and call RemoveFile) before any FileSystem created the
// namespace tables.
func TestRemoveFileBeforeNamespaceExists(t *testing.T) {
	dir := t.TempDir()
	table, err := locks.Open(ctxBG, dir+"/blobshare.db", locks.Options{Remove: RemoveFile})
	mustNil(t, err, "open")
	defer table.Close(ctxBG)
	err = table.Update(ctxBG, func(tx *locks.Tx) error { return RemoveFile(tx.Context(), tx.SQL(), 42) })
	mustNil(t, err, "RemoveFile without ns tables")
}

func TestChangeHookAndVersions(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	var got []Change
	cancel := e.fs.Subscribe(func(c Change) { got = append(got, c) })
	defer cancel()
	e.putFile("data/f", []byte("abc"))
	f, _ := e.fs.Lookup(ctxBG, sh, "f")
	v1 := f.Version
	steps := []struct {
		name string
		do   func() error
		kind ChangeKind
	}{
		{"put range", func() error {
			_, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 1, Body: bytes.NewReader([]byte("X"))})
			return err
		}, ChangeData},
		{"metadata", func() error { _, err := e.fs.SetMetadata(ctxBG, "data/f", map[string]string{"a": "b"}, ""); return err }, ChangeAttr},
		{"rename", func() error {
			_, err := e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/f", Dest: "data/g"})
			return err
		}, ChangeRename},
		{"delete", func() error { return e.fs.DeleteFile(ctxBG, "data/g", "") }, ChangeRemove},
	}
	last := v1
	for _, st := range steps {
		got = nil
		mustNil(t, st.do(), st.name)
		var seen bool
		for _, c := range got {
			if c.File == f.ID && c.Kind == st.kind {
				seen = true
				if c.Kind != ChangeRemove {
					if c.Version <= last {
						t.Fatalf("%s: version %d not after %d", st.name, c.Version, last)
					}
					last = c.Version
				}
			}
		}
		if !seen {
			t.Fatalf("%s: no change of kind %d for file %d in %+v", st.name, st.kind, f.ID, got)
		}
	}
	// Leasing does not change the file (ETag stays).
	e.putFile("data/h", []byte("x"))
	a, _, _ := e.fs.Stat(ctxBG, "data/h", "")
	_, _, err := e.fs.LeaseFile(ctxBG, "data/h", locks.LeaseRequest{Action: locks.LeaseAcquire})
	mustNil(t, err, "lease")
	b, _, _ := e.fs.Stat(ctxBG, "data/h", "")
	if a.ETag != b.ETag {
		t.Fatalf("lease changed the ETag %s → %s", a.ETag, b.ETag)
	}
}

func TestTimesHave100nsPrecision(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	e.putFile("data/f", nil)
	tm := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	a, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Props: SMBProperties{Created: &tm, LastWrite: &tm, Change: &tm}})
	mustNil(t, err, "set times")
	want := time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.UTC)
	for _, got := range []time.Time{a.Created, a.LastWrite, a.Change} {
		if !got.Equal(want) {
			t.Fatalf("time %v, want %v", got, want)
		}
	}
	st, _, _ := e.fs.Stat(ctxBG, "data/f", "")
	if !st.LastWrite.Equal(want) {
		t.Fatalf("stored time %v", st.LastWrite)
	}
}

// ETags: every change of a file gives it a new one (a write, a resize, new
// headers), and a file created again under a deleted file's name never
// repeats an ETag the deleted one had, although versions count per entry.
func TestETagsNeverRepeat(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	seen := map[string]string{}
	note := func(what string, a Attr) {
		t.Helper()
		if prev, ok := seen[a.ETag]; ok {
			t.Fatalf("%s: ETag %s repeats the one after %s", what, a.ETag, prev)
		}
		seen[a.ETag] = what
	}
	for round := range 3 {
		a, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		note(fmt.Sprintf("create %d", round), a)
		a, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 3, Body: strings.NewReader("abc")})
		if err != nil {
			t.Fatal(err)
		}
		note(fmt.Sprintf("write %d", round), a)
		size := int64(5)
		a, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Size: &size})
		if err != nil {
			t.Fatal(err)
		}
		note(fmt.Sprintf("resize %d", round), a)
		a, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Content: &ContentHeaders{Type: "text/plain"}})
		if err != nil {
			t.Fatal(err)
		}
		note(fmt.Sprintf("headers %d", round), a)
		if err := e.fs.DeleteFile(ctxBG, "data/f", ""); err != nil {
			t.Fatal(err)
		}
	}
}

// The REST-only properties share one column: what goes in comes back, and
// an entry with none stores nothing (the mount's files).
func TestStoredProps(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    entry
	}{
		{"none", entry{}},
		{"content headers", entry{content: ContentHeaders{Type: "text/plain; charset=utf-8", Encoding: "gzip", Language: "de-CH",
			Disposition: `attachment; filename="ä.txt"`, CacheControl: "no-cache", MD5: bytes.Repeat([]byte{0xfe}, 16)}}},
		{"metadata", entry{metadata: map[string]string{"author": "Zoë", "empty": "", "quote": `"x"`}}},
		{"permission key", entry{permKey: "123*456"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.e.props()
			mustNil(t, err, "props")
			if tc.name == "none" && s != "" {
				t.Fatalf("an entry without properties stores %q", s)
			}
			var back entry
			mustNil(t, back.setProps(s), "setProps")
			if back.content.Type != tc.e.content.Type || back.content.Encoding != tc.e.content.Encoding ||
				back.content.Language != tc.e.content.Language || back.content.Disposition != tc.e.content.Disposition ||
				back.content.CacheControl != tc.e.content.CacheControl || !bytes.Equal(back.content.MD5, tc.e.content.MD5) ||
				back.permKey != tc.e.permKey || !maps.Equal(back.metadata, tc.e.metadata) {
				t.Fatalf("round trip through %q: got %+v, want %+v", s, back, tc.e)
			}
		})
	}
}

// Entry ids are never reused: two processes take them from blocks they
// reserve in the database, a rolled-back create gives its id back to the
// next one in the process, and a restart or a removal frees none.
func TestFileIDsNeverReused(t *testing.T) {
	dir := t.TempDir()
	a, b := openEnv(t, dir), openEnv(t, dir)
	sh := a.share("data")
	seen := map[FileID]string{sh: "share"}
	var maxID FileID
	create := func(e *env, name string) FileID {
		t.Helper()
		h, attr, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: name, Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
		mustNil(t, err, "create "+name)
		mustNil(t, h.Close(ctxBG), "close "+name)
		if prev, ok := seen[attr.ID]; ok {
			t.Fatalf("%s got id %d, already %s's", name, attr.ID, prev)
		}
		seen[attr.ID] = name
		maxID = max(maxID, attr.ID)
		return attr.ID
	}
	// More than a block each, interleaved; a failing create in between
	// (its parent is a file: the insert is rolled back) costs nothing.
	var file, failedAfter FileID
	for i := range fileIDBlock + 10 {
		file = create(a, fmt.Sprintf("a%04d", i))
		if i == 4 && file != failedAfter+1 {
			t.Errorf("the create after a rolled-back one got id %d, want %d", file, failedAfter+1)
		}
		create(b, fmt.Sprintf("b%04d", i))
		if i == 3 {
			_, _, err := a.fs.Create(ctxBG, CreateRequest{Parent: file, Name: "x", Open: OpenOptions{Access: rw, Share: allShare}})
			wantErr(t, err, ErrNotDir, "create under a file")
			failedAfter = file
		}
	}
	for _, name := range seen {
		if name != "share" {
			mustNil(t, a.fs.Unlink(ctxBG, sh, name), "unlink "+name)
		}
	}
	a.close()
	b.close()
	c := openEnv(t, dir)
	before := maxID
	if id := create(c, "after"); id <= before {
		t.Fatalf("after a restart: id %d, ids up to %d were handed out before", id, before)
	}
}

// TestSetattrTimesThroughHandle: a write time set through an open handle
// (futimens after write, as tar -x and cp -p do) commits that handle's
// staged writes first and outlives them: the content is visible to others
// at once, the time stays after close, and with a second handle of this
// process on the file, that one's writes are committed before the time too.
func TestSetattrTimesThroughHandle(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	want := time.Date(2001, 2, 3, 4, 5, 6, 700_000_000, time.UTC)
	for _, second := range []bool{false, true} {
		name := fmt.Sprintf("f%v", second)
		h, a, err := e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: name, Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.WriteAt(ctxBG, []byte("hello"), 0); err != nil {
			t.Fatal(err)
		}
		var other *Handle
		if second {
			if other, err = e.fs.Open(ctxBG, a.ID, OpenOptions{Access: rw, Share: allShare}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.WriteAt(ctxBG, []byte(" world"), 5); err != nil {
				t.Fatal(err)
			}
		}
		got, err := e.fs.Setattr(ctxBG, a.ID, SetattrRequest{LastWrite: &want, Handle: h})
		if err != nil {
			t.Fatal(err)
		}
		wantData := "hello"
		if second {
			wantData = "hello world"
		}
		if !got.LastWrite.Equal(want) || got.Size != int64(len(wantData)) {
			t.Errorf("%s: setattr answered write time %v size %d, want %v and %d", name, got.LastWrite, got.Size, want, len(wantData))
		}
		if got.Version <= a.Version {
			t.Errorf("%s: version %d after setattr, created at %d", name, got.Version, a.Version)
		}
		// Another client reads the committed content before any close.
		r, err := e.fs.Open(ctxBG, a.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32)
		n, err := r.ReadAt(ctxBG, buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if string(buf[:n]) != wantData {
			t.Errorf("%s: another handle reads %q, want %q", name, buf[:n], wantData)
		}
		for _, c := range []*Handle{r, other, h} {
			if c != nil {
				if err := c.Close(ctxBG); err != nil {
					t.Fatal(err)
				}
			}
		}
		after, err := e.fs.GetAttr(ctxBG, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !after.LastWrite.Equal(want) || after.Size != int64(len(wantData)) {
			t.Errorf("%s: after close write time %v size %d, want %v and %d", name, after.LastWrite, after.Size, want, len(wantData))
		}
	}
}

// TestUpdateEntry: updateEntry counts the row's version up by one and
// gives the entry that version, whether the entry was read in the same
// transaction (the guarded UPDATE) or earlier, after others changed the
// row (the RETURNING fallback); a row that is gone is left alone, and a
// name taken by a sibling is ErrExist.
func TestUpdateEntry(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/f", []byte("abc"))
	e.putFile("data/g", []byte("abc"))
	f, err := e.fs.Lookup(ctxBG, sh, "f")
	mustNil(t, err, "lookup f")
	// rowVersion reads the version the row holds now.
	rowVersion := func(id FileID) uint64 {
		t.Helper()
		var v uint64
		mustNil(t, e.fs.view(ctxBG, func(tx *locks.Tx, q *q) error {
			got, err := q.get(id)
			v = got.version
			return err
		}), "get")
		return v
	}
	// touch counts the row's version up behind an entry read before.
	touch := func(id FileID) {
		t.Helper()
		mustNil(t, e.fs.update(ctxBG, func(tx *locks.Tx, q *q) ([]Change, error) {
			if _, err := q.lock("touch", id); err != nil {
				return nil, err
			}
			return nil, q.touchDir(id) // any UPDATE that counts the version up
		}), "touch")
	}
	for _, tc := range []struct {
		name    string
		read    func(q *q) (entry, error) // the entry to update
		stale   bool                      // read before the updating transaction, and the row changed since
		set     string
		args    []any
		wantErr error
		bumps   bool // the row's version moves by one and the entry gets it
	}{
		{"read in the transaction", func(q *q) (entry, error) { return q.get(f.ID) }, false, `attrs=?`, []any{AttrArchive}, nil, true},
		{"read before a change", func(q *q) (entry, error) { return q.get(f.ID) }, true, `attrs=?`, []any{AttrArchive}, nil, true},
		{"partial, read in the transaction", func(q *q) (entry, error) { return q.childRef(sh, "f") }, false, `t_change=?`, []any{int64(5)}, nil, true},
		{"row gone", func(q *q) (entry, error) { return entry{id: 999999, version: 3}, nil }, false, `attrs=?`, []any{AttrArchive}, nil, false},
		{"name taken", func(q *q) (entry, error) { return q.get(f.ID) }, false, `name=?, key=?`, []any{"G", FoldName("G")}, ErrExist, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stale entry
			if tc.stale {
				mustNil(t, e.fs.view(ctxBG, func(tx *locks.Tx, q *q) (err error) { stale, err = tc.read(q); return err }), "read")
				touch(f.ID)
			}
			before := rowVersion(f.ID)
			var got entry
			err := e.fs.update(ctxBG, func(tx *locks.Tx, q *q) ([]Change, error) {
				got = stale
				if !tc.stale {
					var err error
					if got, err = tc.read(q); err != nil {
						return nil, err
					}
				}
				if _, err := q.lock("update entry", got.id); err != nil {
					return nil, err
				}
				return nil, q.updateEntry(&got, tc.set, tc.args...)
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("updateEntry: %v, want %v", err, tc.wantErr)
			}
			after := rowVersion(f.ID)
			switch {
			case tc.bumps && (after != before+1 || got.version != after):
				t.Errorf("row version %d → %d, entry got %d; want %d → %d and the entry the same", before, after, got.version, before, before+1)
			case !tc.bumps && after != before:
				t.Errorf("row version %d → %d, want it unchanged", before, after)
			case tc.name == "row gone" && got.version != 3:
				t.Errorf("entry of a gone row got version %d, want its own 3", got.version)
			}
		})
	}
}

// TestSavePartialEntry: an entry childRef read (refCols only) can be
// changed column by column but not saved whole, which would blank its
// size, times and properties.
func TestSavePartialEntry(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	e.putFile("data/f", []byte("abc"))
	before, err := e.fs.Lookup(ctxBG, sh, "f")
	mustNil(t, err, "lookup")
	err = e.fs.update(ctxBG, func(tx *locks.Tx, q *q) ([]Change, error) {
		ref, err := q.childRef(sh, "f")
		if err != nil {
			return nil, err
		}
		return nil, q.save(&ref)
	})
	wantErr(t, err, errPartialEntry, "save of a childRef entry")
	after, err := e.fs.Lookup(ctxBG, sh, "f")
	mustNil(t, err, "lookup")
	if after.Size != before.Size || after.Version != before.Version || !after.LastWrite.Equal(before.LastWrite) {
		t.Errorf("after the refused save: size %d version %d mtime %v, want %d %d %v",
			after.Size, after.Version, after.LastWrite, before.Size, before.Version, before.LastWrite)
	}
}
