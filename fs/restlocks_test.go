package fs

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// restOps are the REST file operations, each run against "data/f" (10
// bytes) with an optional lease id, returning the error.
var restOps = []struct {
	name string
	run  func(e *env, lease string) error
}{
	{"GetProperties", func(e *env, lease string) error { _, _, err := e.fs.Stat(ctxBG, "data/f", lease); return err }},
	{"GetFile", func(e *env, lease string) error {
		fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Length: -1, LeaseID: lease})
		if err == nil {
			fr.Close()
		}
		return err
	}},
	{"GetFileRange", func(e *env, lease string) error {
		fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: 8, Length: 2, Ranged: true, LeaseID: lease})
		if err == nil {
			fr.Close()
		}
		return err
	}},
	{"ListRanges", func(e *env, lease string) error {
		_, _, err := e.fs.ListRanges(ctxBG, "data/f", locks.Range{}, lease)
		return err
	}},
	{"PutRange", func(e *env, lease string) error {
		_, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 2, Body: bytes.NewReader([]byte("zz")), LeaseID: lease})
		return err
	}},
	{"PutRangeTail", func(e *env, lease string) error {
		_, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 8, Length: 2, Body: bytes.NewReader([]byte("zz")), LeaseID: lease})
		return err
	}},
	{"SetProperties", func(e *env, lease string) error {
		n := int64(10)
		_, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Size: &n, LeaseID: lease})
		return err
	}},
	{"SetMetadata", func(e *env, lease string) error {
		_, err := e.fs.SetMetadata(ctxBG, "data/f", map[string]string{"a": "b"}, lease)
		return err
	}},
	{"CreateOverwrite", func(e *env, lease string) error {
		_, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: 10, LeaseID: lease})
		return err
	}},
	{"Delete", func(e *env, lease string) error { return e.fs.DeleteFile(ctxBG, "data/f", lease) }},
}

func opResult(t *testing.T, e *env, name, lease string) error {
	t.Helper()
	for _, op := range restOps {
		if op.name == name {
			return op.run(e, lease)
		}
	}
	t.Fatalf("no op %s", name)
	return nil
}

// TestRESTShareModes follows locking.md §1.4: a handle with data access and
// the given share mode, then each REST op.
func TestRESTShareModes(t *testing.T) {
	const X, ok = true, false
	tests := []struct {
		share locks.ShareMode
		// GetFile, ListRanges, PutRange, SetProperties, SetMetadata, CreateOverwrite, Delete
		blocked [7]bool
	}{
		{locks.ShareNone, [7]bool{X, X, X, X, X, X, X}},
		{locks.ShareRead, [7]bool{ok, ok, X, X, X, X, X}},
		{locks.ShareWrite, [7]bool{X, X, ok, ok, ok, X, X}},
		{locks.ShareDelete, [7]bool{X, X, X, X, X, X, X}},
		{locks.ShareRead | locks.ShareWrite, [7]bool{ok, ok, ok, ok, ok, X, X}},
		{locks.ShareWrite | locks.ShareDelete, [7]bool{X, X, ok, ok, ok, ok, X}},
		{allShare, [7]bool{ok, ok, ok, ok, ok, ok, X}},
	}
	ops := []string{"GetFile", "ListRanges", "PutRange", "SetProperties", "SetMetadata", "CreateOverwrite", "Delete"}
	for _, tt := range tests {
		for i, op := range ops {
			t.Run(shareName(tt.share)+"/"+op, func(t *testing.T) {
				e := newEnv(t)
				e.share("data")
				e.putFile("data/f", []byte("0123456789"))
				h := e.mustOpen("data/f", locks.AccessRead, tt.share, DispositionOpen)
				defer h.Close(ctxBG)
				err := opResult(t, e, op, "")
				if tt.blocked[i] {
					wantErr(t, err, locks.ErrSharingViolation, op)
				} else {
					mustNil(t, err, op)
				}
				// Get Properties is never blocked by share modes.
				mustNil(t, opResult(t, e, "GetProperties", ""), "get properties")
			})
		}
	}
}

func shareName(s locks.ShareMode) string {
	if s == 0 {
		return "none"
	}
	var b []byte
	for _, c := range []struct {
		m locks.ShareMode
		c byte
	}{{locks.ShareRead, 'R'}, {locks.ShareWrite, 'W'}, {locks.ShareDelete, 'D'}} {
		if s&c.m != 0 {
			b = append(b, c.c)
		}
	}
	return string(b)
}

// TestRESTDeletePending: every REST op on a delete-pending file answers
// ErrDeletePending (A9), never not-found; after the last close it is gone.
func TestRESTDeletePending(t *testing.T) {
	for _, op := range restOps {
		t.Run(op.name, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			e.putFile("data/f", []byte("0123456789"))
			h := e.mustOpen("data/f", locks.AccessRead|locks.AccessDelete, allShare, DispositionOpen)
			mustNil(t, h.Dispose(ctxBG, true), "dispose")
			wantErr(t, op.run(e, ""), locks.ErrDeletePending, op.name)
			// New SMB opens of the name: delete pending.
			_, err := e.open("data/f", locks.AccessRead, allShare, DispositionOpen)
			wantErr(t, err, locks.ErrDeletePending, "open of pending")
			mustNil(t, h.Close(ctxBG), "close")
			if op.name == "CreateOverwrite" {
				mustNil(t, op.run(e, ""), "create after the file is gone")
				return
			}
			wantErr(t, op.run(e, ""), ErrNotFound, op.name+" after last close")
		})
	}
}

// TestRESTByteRangeLocks: locking.md §3.3.
func TestRESTByteRangeLocks(t *testing.T) {
	tests := []struct {
		kind    locks.LockKind
		op      string
		blocked bool
	}{
		{locks.LockExclusive, "GetFile", true},
		{locks.LockExclusive, "GetFileRange", false}, // range 8-9 misses the lock on 0-4
		{locks.LockExclusive, "PutRange", true},
		{locks.LockExclusive, "PutRangeTail", false},
		{locks.LockShared, "GetFile", false},
		{locks.LockShared, "PutRange", true},
		{locks.LockExclusive, "ListRanges", false},
		{locks.LockExclusive, "SetProperties", false},
	}
	for _, tt := range tests {
		kind := map[locks.LockKind]string{locks.LockShared: "shared", locks.LockExclusive: "exclusive"}[tt.kind]
		t.Run(kind+"/"+tt.op, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			e.putFile("data/f", []byte("0123456789"))
			h := e.mustOpen("data/f", rw, allShare, DispositionOpen)
			defer h.Close(ctxBG)
			mustNil(t, h.Lock(ctxBG, locks.Range{Offset: 0, Length: 5}, tt.kind), "lock")
			err := opResult(t, e, tt.op, "")
			if tt.blocked {
				wantErr(t, err, locks.ErrLockConflict, tt.op)
			} else {
				mustNil(t, err, tt.op)
			}
		})
	}
}

// TestRESTLeases: locking.md §4.3.
func TestRESTLeases(t *testing.T) {
	const L = "11111111-2222-3333-4444-555555555555"
	const W = "99999999-2222-3333-4444-555555555555"
	tests := []struct {
		op    string
		lease string
		want  locks.LeaseCode // "" = ok
	}{
		{"PutRange", "", locks.LeaseIDMissing},
		{"PutRange", W, locks.LeaseIDMismatchWithFileOperation},
		{"PutRange", L, ""},
		{"SetMetadata", "", locks.LeaseIDMissing},
		{"SetProperties", L, ""},
		{"CreateOverwrite", "", locks.LeaseIDMissing},
		{"Delete", "", locks.LeaseIDMissing},
		{"GetFile", "", ""},
		{"GetFile", W, locks.LeaseIDMismatchWithFileOperation},
		{"GetProperties", "", ""},
		{"ListRanges", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.lease, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			e.putFile("data/f", []byte("0123456789"))
			id, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: L})
			mustNil(t, err, "acquire")
			if id != L {
				t.Fatalf("lease id %q", id)
			}
			err = opResult(t, e, tt.op, tt.lease)
			if tt.want == "" {
				mustNil(t, err, tt.op)
			} else {
				wantLease(t, err, tt.want, tt.op)
			}
		})
	}
	t.Run("lease survives create overwrite; id on a missing file", func(t *testing.T) {
		e := newEnv(t)
		e.share("data")
		e.putFile("data/f", []byte("0123456789"))
		_, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: L})
		mustNil(t, err, "acquire")
		_, err = e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: 3, LeaseID: L})
		mustNil(t, err, "create over leased file with the id")
		_, li, err := e.fs.Stat(ctxBG, "data/f", "")
		mustNil(t, err, "stat")
		if li.State != locks.LeaseLeased || li.ID != L {
			t.Fatalf("lease after overwrite %+v", li)
		}
		_, err = e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/new", Size: 3, LeaseID: L})
		wantLease(t, err, locks.LeaseNotPresentWithFileOperation, "create missing with lease id")
	})
}

func TestRESTReadOnly(t *testing.T) {
	for _, op := range []string{"PutRange", "SetMetadata", "CreateOverwrite"} {
		t.Run(op, func(t *testing.T) {
			e := newEnv(t)
			e.share("data")
			e.putFile("data/f", []byte("0123456789"))
			_, err := e.fs.SetAttributesByPath(ctxBG, "data/f", AttrReadOnly)
			mustNil(t, err, "set readonly")
			wantErr(t, opResult(t, e, op, ""), locks.ErrReadOnly, op)
		})
	}
}

func TestRESTFileOperations(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	_, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/nodir/f", Size: 1})
	wantErr(t, err, ErrParentNotFound, "create in missing dir")
	a, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: "data/f", Size: 20,
		Content: ContentHeaders{Type: "text/plain", MD5: bytes.Repeat([]byte{1}, 16)}, Metadata: map[string]string{"m": "1"}})
	mustNil(t, err, "create")
	if a.Size != 20 || a.Attributes != AttrArchive || a.Content.Type != "text/plain" || a.Metadata["m"] != "1" {
		t.Fatalf("created %+v", a)
	}
	if got := e.content("data/f"); !bytes.Equal(got, make([]byte, 20)) {
		t.Fatalf("new file content %v", got)
	}
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 15, Length: 10, Body: bytes.NewReader(make([]byte, 10))})
	wantErr(t, err, ErrInvalidRange, "put range past the end")
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 5, Body: bytes.NewReader([]byte("ab"))})
	wantErr(t, err, ErrInvalidArg, "short body")
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 2, Length: 5, Body: bytes.NewReader([]byte("hello"))})
	mustNil(t, err, "put range")
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 3, Length: 2})
	mustNil(t, err, "clear range")
	want := append(append(make([]byte, 2), 'h', 0, 0, 'l', 'o'), make([]byte, 13)...)
	if got := e.content("data/f"); !bytes.Equal(got, want) {
		t.Fatalf("content %q want %q", got, want)
	}
	_, err = e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: 20, Ranged: true, Length: -1})
	wantErr(t, err, ErrInvalidRange, "range past the end")

	// Set properties replaces the content headers group; a resize keeps them.
	n := int64(4)
	b, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Size: &n})
	mustNil(t, err, "resize")
	if b.Size != 4 || b.Content.Type != "text/plain" {
		t.Fatalf("after resize %+v", b)
	}
	c, err := e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Content: &ContentHeaders{Language: "en"}})
	mustNil(t, err, "set headers")
	if c.Content.Type != "" || c.Content.Language != "en" || c.ETag == b.ETag {
		t.Fatalf("after set headers %+v", c)
	}

	// Copy and Put Range From.
	cp, err := e.fs.CopyFile(ctxBG, CopyFileRequest{Source: "data/f", Dest: "data/copy"})
	mustNil(t, err, "copy")
	if cp.Size != 4 || !bytes.Equal(e.content("data/copy"), e.content("data/f")) || cp.Metadata["m"] != "1" {
		t.Fatalf("copy %+v %q", cp, e.content("data/copy"))
	}
	e.putFile("data/big", pattern(BlockSize+10, 3))
	_, err = e.fs.CopyFile(ctxBG, CopyFileRequest{Source: "data/big", Dest: "data/copy"})
	mustNil(t, err, "copy over")
	if !bytes.Equal(e.content("data/copy"), pattern(BlockSize+10, 3)) {
		t.Fatal("copy of a multi-block file differs")
	}
	_, err = e.fs.PutRangeFrom(ctxBG, PutRangeFromRequest{Path: "data/copy", Offset: 0, Length: 4, SourcePath: "data/f"})
	mustNil(t, err, "put range from")
	got := e.content("data/copy")
	if !bytes.Equal(got[:4], e.content("data/f")) || !bytes.Equal(got[4:], pattern(BlockSize+10, 3)[4:]) {
		t.Fatal("put range from URL wrote the wrong bytes")
	}

	// Rename through REST.
	_, err = e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/copy", Dest: "data/f"})
	wantErr(t, err, ErrExist, "rename onto existing without replace")
	r, err := e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/copy", Dest: "data/f", ReplaceIfExists: true})
	mustNil(t, err, "rename replace")
	if r.Path != "data/f" || r.Size != BlockSize+10 {
		t.Fatalf("renamed %+v", r)
	}
	_, _, err = e.fs.Stat(ctxBG, "data/copy", "")
	wantErr(t, err, ErrNotFound, "old name")
	_, err = e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "data/dir"})
	mustNil(t, err, "mkdir")
	_, err = e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/f", Dest: "data/dir", ReplaceIfExists: true})
	wantErr(t, err, ErrExist, "rename onto a directory")
	_, err = e.fs.SetAttributesByPath(ctxBG, "data/big", AttrReadOnly)
	mustNil(t, err, "readonly")
	_, err = e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/f", Dest: "data/big", ReplaceIfExists: true})
	wantErr(t, err, locks.ErrReadOnly, "rename onto read-only")
	_, err = e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/f", Dest: "data/big", ReplaceIfExists: true, IgnoreReadOnly: true})
	mustNil(t, err, "rename onto read-only, ignored")
	d, err := e.fs.RenamePath(ctxBG, RenamePathRequest{Source: "data/dir", Dest: "data/dir2"})
	mustNil(t, err, "rename dir")
	if d.Kind != KindDirectory || d.Path != "data/dir2" {
		t.Fatalf("renamed dir %+v", d)
	}
	mustNil(t, e.fs.DeleteFile(ctxBG, "data/big", ""), "delete")
	_, err = e.get("data/big")
	wantErr(t, err, ErrNotFound, "deleted file")
	wantErr(t, e.fs.DeleteFile(ctxBG, "data/big", ""), ErrNotFound, "delete twice")
}

func TestListAndForceCloseHandles(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	_, err := e.fs.CreateDirectory(ctxBG, CreateDirectoryRequest{Path: "data/d"})
	mustNil(t, err, "mkdir")
	e.putFile("data/d/a", []byte("a"))
	e.putFile("data/top", []byte("t"))
	h1 := e.mustOpen("data/d/a", locks.AccessRead, allShare, DispositionOpen)
	h2 := e.mustOpen("data/d/a", rw, allShare, DispositionOpen)
	h3 := e.mustOpen("data/top", locks.AccessRead, allShare, DispositionOpen)
	defer h3.Close(ctxBG)

	count := func(path string, rec bool) int {
		hs, err := e.fs.ListHandles(ctxBG, path, rec)
		mustNil(t, err, "list handles")
		return len(hs)
	}
	hs, err := e.fs.ListHandles(ctxBG, "data/d/a", false)
	mustNil(t, err, "list file handles")
	if len(hs) != 2 || hs[0].Path != "d/a" || hs[0].ID != h1.ID() {
		t.Fatalf("file handles %+v", hs)
	}
	if n := count("data", true); n != 3 {
		t.Fatalf("recursive share handles %d", n)
	}
	if n := count("data/d", true); n != 2 {
		t.Fatalf("recursive dir handles %d", n)
	}
	if n := count("data/d", false); n != 0 {
		t.Fatalf("non-recursive dir handles %d", n)
	}
	n, err := e.fs.ForceCloseHandles(ctxBG, "data/d/a", h1.ID(), false, false)
	mustNil(t, err, "force close one")
	if n != 1 {
		t.Fatalf("closed %d", n)
	}
	_, err = h1.ReadAt(ctxBG, make([]byte, 1), 0)
	wantErr(t, err, locks.ErrHandleClosed, "read on force-closed handle")
	n, err = e.fs.ForceCloseHandles(ctxBG, "data", 0, true, true)
	mustNil(t, err, "force close all")
	if n != 2 {
		t.Fatalf("closed %d", n)
	}
	n, _ = e.fs.ForceCloseHandles(ctxBG, "data", 12345, false, true)
	if n != 0 {
		t.Fatalf("unknown id closed %d", n)
	}
	_ = h2.Close(ctxBG)
	_ = h3.Close(ctxBG)
	_ = h1.Close(ctxBG)
}

func TestSMBOpenDispositions(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	tests := []struct {
		disp     Disposition
		exists   bool
		want     error
		wantSize int64
	}{
		{DispositionOpen, false, ErrNotFound, 0},
		{DispositionOpen, true, nil, 3},
		{DispositionCreate, true, ErrExist, 0},
		{DispositionCreate, false, nil, 0},
		{DispositionOpenIf, false, nil, 0},
		{DispositionOpenIf, true, nil, 3},
		{DispositionOverwrite, false, ErrNotFound, 0},
		{DispositionOverwrite, true, nil, 0},
		{DispositionOverwriteIf, true, nil, 0},
		{DispositionSupersede, false, nil, 0},
	}
	for i, tt := range tests {
		path := "data/f" + string(rune('a'+i))
		if tt.exists {
			e.putFile(path, []byte("abc"))
		}
		h, a, err := e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: path, Disposition: tt.disp, Open: OpenOptions{Access: rw, Share: allShare}})
		if tt.want != nil {
			wantErr(t, err, tt.want, path)
			continue
		}
		mustNil(t, err, path)
		if a.Size != tt.wantSize {
			t.Errorf("%s disposition %d: size %d want %d", path, tt.disp, a.Size, tt.wantSize)
		}
		mustNil(t, h.Close(ctxBG), "close")
	}
	_, _, err := e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: "data/missing/x", Disposition: DispositionOpenIf, Open: OpenOptions{Access: rw}})
	wantErr(t, err, ErrParentNotFound, "missing parent")
	_, _, err = e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: "nosuch/x", Open: OpenOptions{Access: rw}})
	wantErr(t, err, ErrShareNotFound, "missing share")
	_, _, err = e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: "data/a:b", Open: OpenOptions{Access: rw}})
	wantErr(t, err, ErrInvalidName, "bad name")

	// Delete-on-close removes the file when the handle closes.
	h, _, err := e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: "data/doc", Disposition: DispositionCreate, Open: OpenOptions{Access: rw | locks.AccessDelete, Share: allShare, DeleteOnClose: true}})
	mustNil(t, err, "create delete-on-close")
	_, err = h.WriteAt(ctxBG, []byte("x"), 0)
	mustNil(t, err, "write")
	mustNil(t, h.Close(ctxBG), "close")
	_, _, err = e.fs.Stat(ctxBG, "data/doc", "")
	wantErr(t, err, ErrNotFound, "after delete-on-close")
}

var _ = io.EOF
var _ = errors.Is

// TestSMBViewEdgeCases: locking.md A12 (attribute-only handles), A14 (SMB
// opens against a lease), §1.5 (lease acquire against handles), and SMB
// opens of a name unlinked through the mount.
func TestSMBViewEdgeCases(t *testing.T) {
	const L = "11111111-2222-3333-4444-555555555555"
	t.Run("attribute-only handle blocks only Delete", func(t *testing.T) {
		e := newEnv(t)
		e.share("data")
		e.putFile("data/f", []byte("0123456789"))
		h := e.mustOpen("data/f", locks.AccessReadAttributes, locks.ShareNone, DispositionOpen)
		defer h.Close(ctxBG)
		for _, op := range []string{"GetFile", "PutRange", "SetMetadata", "CreateOverwrite"} {
			mustNil(t, opResult(t, e, op, ""), op)
		}
		wantErr(t, opResult(t, e, "Delete", ""), locks.ErrSharingViolation, "Delete")
	})
	t.Run("SMB opens against a lease", func(t *testing.T) {
		e := newEnv(t)
		e.share("data")
		e.putFile("data/f", []byte("x"))
		_, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: L})
		mustNil(t, err, "acquire")
		_, err = e.open("data/f", locks.AccessWrite, allShare, DispositionOpen)
		wantErr(t, err, locks.ErrSharingViolation, "write open of a leased file")
		_, err = e.open("data/f", locks.AccessDelete, allShare, DispositionOpen)
		wantErr(t, err, locks.ErrSharingViolation, "delete open of a leased file")
		h, err := e.open("data/f", locks.AccessRead, locks.ShareRead, DispositionOpen)
		mustNil(t, err, "read open sharing read only (A14: access decides)")
		mustNil(t, h.Close(ctxBG), "close")
	})
	t.Run("lease acquire against handles", func(t *testing.T) {
		e := newEnv(t)
		e.share("data")
		e.putFile("data/f", []byte("x"))
		h := e.mustOpen("data/f", rw, allShare, DispositionOpen)
		_, _, err := e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: L})
		wantErr(t, err, locks.ErrSharingViolation, "acquire with a writer open")
		mustNil(t, h.Close(ctxBG), "close")
		r := e.mustOpen("data/f", locks.AccessRead, allShare, DispositionOpen)
		defer r.Close(ctxBG)
		_, _, err = e.fs.LeaseFile(ctxBG, "data/f", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: L})
		mustNil(t, err, "acquire with a reader sharing everything")
	})
	t.Run("SMB open of a name unlinked through the mount", func(t *testing.T) {
		e := newEnv(t)
		sh := e.share("data")
		e.putFile("data/f", []byte("x"))
		f, _ := e.fs.Lookup(ctxBG, sh, "f")
		h, err := e.fs.Open(ctxBG, f.ID, OpenOptions{Access: locks.AccessRead, Share: allShare})
		mustNil(t, err, "open")
		mustNil(t, e.fs.Unlink(ctxBG, sh, "f"), "unlink")
		for _, d := range []Disposition{DispositionOpen, DispositionOpenIf, DispositionCreate, DispositionOverwriteIf} {
			_, err := e.open("data/f", locks.AccessRead, allShare, d)
			wantErr(t, err, locks.ErrDeletePending, "SMB open of an unlinked name")
		}
		mustNil(t, h.Close(ctxBG), "close")
		h2, err := e.open("data/f", rw, allShare, DispositionOpenIf)
		mustNil(t, err, "open_if after the last close creates")
		mustNil(t, h2.Close(ctxBG), "close")
	})
}
