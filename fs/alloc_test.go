package fs

import (
	"bytes"
	"context"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// TestAllocationSize: the allocation a CREATE asks is kept apart from the
// size, in whole clusters, across processes; the reported allocation is
// the larger of it and the size in clusters, so writes past it grow it; a
// FileAllocationInformation below the size cuts the size to it (MS-FSA
// 2.1.5.15.1) and one above leaves the size alone; an overwrite starts
// over with the allocation it asks, a REST Create File with none;
// negative sizes and directories are refused; the mount's stat does not
// see it.
func TestAllocationSize(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.share("alloc")
	data := pattern(10000, 7)
	open := func(disp Disposition, alloc int64) (*Handle, Attr, error) {
		h, a, _, err := e.fs.OpenEntry(ctx, OpenEntryRequest{OpenPathRequest: OpenPathRequest{Path: "alloc/f", Disposition: disp,
			Open: OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareRead | locks.ShareWrite | locks.ShareDelete, VisibleWrites: true}},
			AllocationSize: alloc})
		return h, a, err
	}
	h, a, err := open(DispositionCreate, 5000)
	mustNil(t, err, "create with 5000")
	defer func() { h.Close(ctx) }()
	id := a.ID
	setAlloc := func(n int64) (Attr, error) {
		return e.fs.Setattr(ctx, id, SetattrRequest{AllocationSize: &n, Handle: h})
	}
	write := func(off, n int) (Attr, error) {
		if _, err := h.WriteAt(ctx, data[off:off+n], int64(off)); err != nil {
			return Attr{}, err
		}
		return h.Attr(ctx)
	}
	other := func() (Attr, error) { return openEnv(t, e.dir).fs.Lookup(ctx, a.Parent, "f") }
	steps := []struct {
		name            string
		do              func() (Attr, error)
		size, allocated int64
		stored          int64
		content         []byte // nil: not checked
	}{
		{"created with 5000", func() (Attr, error) { return a, nil }, 0, 8192, 8192, nil},
		{"another process", other, 0, 8192, 8192, nil},
		{"one byte written", func() (Attr, error) { return write(0, 1) }, 1, 8192, 8192, data[:1]},
		{"written past it", func() (Attr, error) { return write(1, 9999) }, 10000, 12288, 8192, data},
		{"allocation below the size cuts it", func() (Attr, error) { return setAlloc(3000) }, 3000, 4096, 4096, data[:3000]},
		{"allocation above the size keeps it", func() (Attr, error) { return setAlloc(20000) }, 3000, 20480, 20480, data[:3000]},
		{"another process after the set", other, 3000, 20480, 20480, nil},
		{"allocation 0 empties it", func() (Attr, error) { return setAlloc(0) }, 0, 0, 0, []byte{}},
		{"overwrite with 100", func() (Attr, error) {
			h.Close(ctx)
			var a Attr
			h, a, err = open(DispositionOverwriteIf, 100)
			return a, err
		}, 0, 4096, 4096, nil},
		{"overwrite without", func() (Attr, error) {
			h.Close(ctx)
			var a Attr
			h, a, err = open(DispositionOverwrite, 0)
			return a, err
		}, 0, 0, 0, nil},
	}
	for _, s := range steps {
		got, err := s.do()
		mustNil(t, err, s.name)
		if got.Size != s.size || got.Allocated() != s.allocated || got.AllocationSize != s.stored {
			t.Fatalf("%s: size %d allocated %d stored %d, want %d %d %d", s.name, got.Size, got.Allocated(), got.AllocationSize,
				s.size, s.allocated, s.stored)
		}
		if s.content != nil {
			if c := e.content("alloc/f"); !bytes.Equal(c, s.content) {
				t.Fatalf("%s: content %d bytes, want %d", s.name, len(c), len(s.content))
			}
		}
	}

	_, err = setAlloc(-1)
	wantErr(t, err, ErrInvalidRange, "negative allocation")
	_, _, err = open(DispositionOpen, -1)
	wantErr(t, err, ErrInvalidRange, "negative CREATE allocation")
	dir, err := e.fs.CreateDirectory(ctx, CreateDirectoryRequest{Path: "alloc/d"})
	mustNil(t, err, "mkdir")
	n := int64(4096)
	_, err = e.fs.Setattr(ctx, dir.ID, SetattrRequest{AllocationSize: &n})
	wantErr(t, err, ErrIsDir, "allocation of a directory")

	// The mount's stat reads no props: no allocation reaches it.
	_, err = setAlloc(50000)
	mustNil(t, err, "set 50000")
	st, err := e.fs.GetAttr(ctx, id)
	mustNil(t, err, "getattr")
	if st.AllocationSize != 0 {
		t.Fatalf("the mount's getattr sees allocation %d", st.AllocationSize)
	}

	// A REST Create File over it makes a new file: no allocation of its
	// own any more.
	h.Close(ctx)
	rc, err := e.fs.CreateFile(ctx, CreateFileRequest{Path: "alloc/f", Size: 5})
	mustNil(t, err, "REST create over it")
	if rc.AllocationSize != 0 || rc.Allocated() != 4096 {
		t.Fatalf("after REST create: stored %d allocated %d, want 0 4096", rc.AllocationSize, rc.Allocated())
	}
	h, _, err = open(DispositionOpen, 0)
	mustNil(t, err, "reopen")
}
