package smb

import (
	"context"
	"fmt"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// TestMountAndSessionOpensBreakLeases: an open of the FUSE mount (fs.Open)
// or of `blobshare session` (fs.OpenByPath) meets an SMB client's RWH
// lease as a local open would: it breaks Write caching (RWH → RH, an
// acknowledgment required) and blocks until the client acknowledges; the
// client's flush before its acknowledgment is what the open then reads.
func TestMountAndSessionOpensBreakLeases(t *testing.T) {
	ctx := context.Background()
	fsys, addr := cachingServer(t, 0)
	a := leaseClient(t, addr, 1, dialect300)
	for i, tc := range []struct {
		name string
		open func(fs.FileID, string) (*fs.Handle, error)
	}{
		{"mount", func(id fs.FileID, _ string) (*fs.Handle, error) {
			return fsys.Open(ctx, id, fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareAll, POSIX: true,
				ClientName: locks.ClientName(locks.ProtocolMount, "test")})
		}},
		{"session", func(_ fs.FileID, path string) (*fs.Handle, error) {
			h, _, err := fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: path, Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareAll,
				ClientName: locks.ClientName(locks.ProtocolSession, "test")}})
			return h, err
		}},
	} {
		key := byte(0xa + i)
		name := tc.name + ".txt"
		r := a.createCaching(name, oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(key, locks.CacheRWH, true, 0))
		if r.st != ntstatus.Success || r.lease != locks.CacheRWH {
			t.Fatalf("%s: SMB open %+v, want an RWH lease", tc.name, r)
		}
		attr, _, err := fsys.Stat(ctx, "data/"+name, "")
		if err != nil {
			t.Fatal(err)
		}
		type opened struct {
			h   *fs.Handle
			err error
		}
		done := make(chan opened, 1)
		go func() {
			h, err := tc.open(attr.ID, "data/"+name)
			done <- opened{h, err}
		}()
		note := a.breakNote()
		if note[8] != key || le.Uint32(note[4:])&leaseBreakAckRequired == 0 ||
			locks.CacheState(le.Uint32(note[24:])) != locks.CacheRWH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheRH {
			t.Fatalf("%s: lease break %x, want RWH → RH, acknowledgment required", tc.name, note)
		}
		select {
		case o := <-done:
			t.Fatalf("%s: the open returned (%v) before the client acknowledged", tc.name, o.err)
		default:
		}
		// The client flushes what it cached, then acknowledges.
		if st := a.write(r.id, 0, []byte("flushed")); st != ntstatus.Success {
			t.Fatalf("%s: flush: %v", tc.name, st)
		}
		if st, _ := a.call(cmdOplockBreak, leaseAck(key, locks.CacheRH)); st != ntstatus.Success {
			t.Fatalf("%s: ack: %v", tc.name, st)
		}
		o := <-done
		if o.err != nil {
			t.Fatalf("%s: open after the acknowledgment: %v", tc.name, o.err)
		}
		buf := make([]byte, 16)
		n, _ := o.h.ReadAt(ctx, buf, 0)
		if string(buf[:n]) != "flushed" {
			t.Errorf("%s: read %q, want the client's flushed bytes", tc.name, buf[:n])
		}
		if err := o.h.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMountAndSessionWritesBreakReadCaching: a write through an open of
// the FUSE mount (fs.Open) or of `blobshare session` (fs.OpenByPath), a
// cleared range, a size change through such a handle and the mount's
// truncate(2) by path each break the Read caching of an SMB client that
// holds an RH lease (to none, acknowledgment required for the Handle
// caching it loses) or a level II oplock (to none, no acknowledgment), as
// a write through another open does (MS-FSA 2.1.4.12). The write does not
// wait for the acknowledgment: after it returned the lease is still
// breaking, and the client's acknowledgment is accepted. The open itself
// broke nothing (neither cache has Write caching): the first frame the
// client gets is the write's break.
func TestMountAndSessionWritesBreakReadCaching(t *testing.T) {
	ctx := context.Background()
	fsys, addr := cachingServer(t, 0)
	a := leaseClient(t, addr, 1, dialect300)
	b := leaseClient(t, addr, 2, dialect210)
	mountOpen := func(id fs.FileID, _ string) (*fs.Handle, error) {
		return fsys.Open(ctx, id, fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareAll, POSIX: true,
			ClientName: locks.ClientName(locks.ProtocolMount, "test")})
	}
	sessionOpen := func(_ fs.FileID, path string) (*fs.Handle, error) {
		h, _, err := fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: path, Open: fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite,
			Share: locks.ShareAll, ClientName: locks.ClientName(locks.ProtocolSession, "test")}})
		return h, err
	}
	n := 0
	for _, tc := range []struct {
		name  string
		open  func(fs.FileID, string) (*fs.Handle, error)
		write func(h *fs.Handle, id fs.FileID) error
	}{
		{"mount write", mountOpen, func(h *fs.Handle, _ fs.FileID) error { _, err := h.WriteAt(ctx, []byte("new"), 0); return err }},
		{"mount clear", mountOpen, func(h *fs.Handle, _ fs.FileID) error { return h.ClearRange(ctx, 0, 2) }},
		{"mount ftruncate", mountOpen, func(h *fs.Handle, id fs.FileID) error {
			size := int64(1)
			_, err := fsys.Setattr(ctx, id, fs.SetattrRequest{Size: &size, Handle: h})
			return err
		}},
		{"mount truncate by path", mountOpen, func(_ *fs.Handle, id fs.FileID) error {
			size := int64(1)
			_, err := fsys.Setattr(ctx, id, fs.SetattrRequest{Size: &size})
			return err
		}},
		{"session write", sessionOpen, func(h *fs.Handle, _ fs.FileID) error { _, err := h.WriteAt(ctx, []byte("new"), 0); return err }},
	} {
		for _, lease := range []bool{true, false} {
			n++
			key := byte(0x10 + n)
			name := fmt.Sprintf("w%d.txt", n)
			c := a
			var r createResp
			if lease {
				r = a.createCaching(name, oplockLease, 0x00120089, shareAll, dispOpenIf, leaseCtx(key, locks.CacheRH, true, 0))
				if r.st != ntstatus.Success || r.lease != locks.CacheRH {
					t.Fatalf("%s: lease open %+v, want RH", tc.name, r)
				}
			} else {
				c = b
				r = b.createCaching(name, byte(locks.OplockLevelII), 0x00120089, shareAll, dispOpenIf, nil)
				if r.st != ntstatus.Success || r.oplock != byte(locks.OplockLevelII) {
					t.Fatalf("%s: oplock open %+v, want level II", tc.name, r)
				}
			}
			attr, _, err := fsys.Stat(ctx, "data/"+name, "")
			if err != nil {
				t.Fatal(err)
			}
			h, err := tc.open(attr.ID, "data/"+name)
			if err != nil {
				t.Fatalf("%s: open: %v", tc.name, err)
			}
			if err := tc.write(h, attr.ID); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			note := c.breakNote()
			if lease {
				if le.Uint16(note) != 44 || note[8] != key || le.Uint32(note[4:])&leaseBreakAckRequired == 0 ||
					locks.CacheState(le.Uint32(note[24:])) != locks.CacheRH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheNone {
					t.Fatalf("%s: lease break %x, want RH → none, acknowledgment required", tc.name, note)
				}
				if st, body := a.call(cmdOplockBreak, leaseAck(key, locks.CacheNone)); st != ntstatus.Success || le.Uint32(body[24:]) != 0 {
					t.Fatalf("%s: acknowledgment after the write returned: %v, want success (the break still outstanding)", tc.name, st)
				}
			} else if le.Uint16(note) != 24 || note[2] != byte(locks.OplockNone) || getFileID(note[8:]) != r.id {
				t.Fatalf("%s: oplock break %x, want level II → none", tc.name, note)
			}
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if st := c.closeFile(r.id); st != ntstatus.Success {
				t.Fatalf("%s: close: %v", tc.name, st)
			}
		}
	}
}
