package smb

import (
	"context"
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
