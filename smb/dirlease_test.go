package smb

import (
	"context"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// dirLeaseCtx is a v2 lease context with a parent lease key (parent 0:
// none).
func dirLeaseCtx(key byte, state locks.CacheState, epoch uint16, parent byte) []byte {
	out := leaseCtx(key, state, true, epoch)
	if parent != 0 {
		le.PutUint32(out[24+20:], leaseFlagParentKeySet)
		out[24+32] = parent
	}
	return out
}

// dirLeaseClient is leaseClient for a client that supports directory
// leasing (its NEGOTIATE says SMB2_GLOBAL_CAP_DIRECTORY_LEASING).
func dirLeaseClient(t *testing.T, addr string, guid byte, dialect uint16) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.guid[0] = guid
	c.negotiateWith(dialect, capDirectoryLeasing)
	if st := c.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatalf("login: %v", st)
	}
	if st := c.treeConnect("data"); st != ntstatus.Success {
		t.Fatalf("tree connect: %v", st)
	}
	return c
}

// createDir sends a CREATE of directory name (FILE_DIRECTORY_FILE) with
// the given contexts and returns what it answered.
func (c *rawClient) createDir(name string, oplock byte, disp uint32, contexts []byte) createResp {
	c.t.Helper()
	body := createReq(name, oplock, 0x00120089, shareAll, disp, contexts)
	le.PutUint32(body[40:], optDirectoryFile)
	id := c.send(cmdCreate, body)
	st, b := c.final(id)
	return parseCreateResp(c.t, st, b)
}

// dirBreak reads a lease break notification and checks it: key, from →
// to, ack required, epoch.
func (c *rawClient) dirBreak(key byte, from, to locks.CacheState, ack bool, epoch uint16) {
	c.t.Helper()
	note := c.breakNote()
	gotAck := le.Uint32(note[4:])&leaseBreakAckRequired != 0
	if le.Uint16(note) != 44 || note[8] != key || locks.CacheState(le.Uint32(note[24:])) != from ||
		locks.CacheState(le.Uint32(note[28:])) != to || gotAck != ack || le.Uint16(note[2:]) != epoch {
		c.t.Fatalf("lease break %x, want key %#x %v → %v ack %v epoch %d", note, key, from, to, ack, epoch)
	}
}

// TestDirectoryLease: SMB 3 announces directory leasing to a client that
// supports it; a directory asked RWH gets RH (never Write); SMB 2.1, and
// a client without the capability, get no directory lease.
// Client A holds RH on directory d, and then:
//   - A's own CREATE in d whose lease names d's lease as its parent breaks
//     nothing (a client never breaks the directory it caches);
//   - client B's CREATE of a file in d completes at once (a directory's
//     Read caching is revoked without waiting, MS-SMB2 3.3.1.4) and A gets
//     a break RH → none, ack required, epoch one more;
//   - a REST Create File in d, and a REST Delete File in d, break A's
//     lease the same way (each after A asked for RH again);
//   - B's open of d that conflicts with A's open breaks Handle caching
//     (RH → R) and waits for A's acknowledgment, then meets A's open as
//     the sharing violation it is.
func TestDirectoryLease(t *testing.T) {
	ctx := context.Background()
	addr, fileClient := restCaching(t, 10*time.Second, 2*time.Second)

	old := dirLeaseClient(t, addr, 9, dialect210)
	if old.serverCaps&capDirectoryLeasing != 0 {
		t.Fatal("SMB 2.1 NEGOTIATE announces directory leasing")
	}
	if r := old.createDir("d21", oplockLease, dispOpenIf, leaseCtx(0x21, locks.CacheRWH, false, 0)); r.st != ntstatus.Success || r.leased || r.oplock != 0 {
		t.Fatalf("SMB 2.1 directory with a lease request: %+v, want no lease", r)
	}
	// A client that does not say it supports directory leasing is not
	// told the server does, and gets none (python3-impacket 0.10 fails
	// every CREATE against a server announcing it).
	plain := leaseClient(t, addr, 8, dialect300)
	if plain.serverCaps&capDirectoryLeasing != 0 {
		t.Fatal("NEGOTIATE announces directory leasing to a client that does not support it")
	}
	if r := plain.createDir("d30", oplockLease, dispOpenIf, leaseCtx(0x30, locks.CacheRWH, true, 0)); r.st != ntstatus.Success || r.leased || r.oplock != 0 {
		t.Fatalf("directory lease for a client without the capability: %+v, want none", r)
	}

	a, b := dirLeaseClient(t, addr, 1, dialect300), leaseClient(t, addr, 2, dialect300)
	if a.serverCaps&capDirectoryLeasing == 0 {
		t.Fatal("SMB 3.0 NEGOTIATE does not announce directory leasing")
	}
	epoch := uint16(5)
	grant := func(disp uint32) {
		t.Helper()
		r := a.createDir("d", oplockLease, disp, dirLeaseCtx(0xd, locks.CacheRWH, 5, 0))
		epoch++
		if r.st != ntstatus.Success || r.oplock != oplockLease || r.lease != locks.CacheRH || r.epoch != epoch {
			t.Fatalf("directory lease: %+v, want RH epoch %d", r, epoch)
		}
	}
	grant(dispOpenIf)

	own := a.createCaching(`d\own.txt`, oplockLease, accRW, shareAll, dispOpenIf, dirLeaseCtx(0x1, locks.CacheRWH, 0, 0xd))
	if own.st != ntstatus.Success || own.lease != locks.CacheRWH || own.flags&leaseFlagParentKeySet == 0 {
		t.Fatalf("A's create in d: %+v, want RWH with the parent key", own)
	}
	a.noFrame(400 * time.Millisecond) // longer than the outbox poll

	if r := b.createCaching(`d\b.txt`, 0, accRW, shareAll, dispOpenIf, nil); r.st != ntstatus.Success {
		t.Fatalf("B's create in d: %v, want success without waiting", r.st)
	} else {
		a.dirBreak(0xd, locks.CacheRH, locks.CacheNone, true, epoch+1)
		epoch++
		if st, body := a.call(cmdOplockBreak, leaseAck(0xd, locks.CacheNone)); st != ntstatus.Success || le.Uint32(body[24:]) != 0 {
			t.Fatalf("ack: %v %x", st, body)
		}
		if st, _ := b.call(cmdClose, closeReq(r.id)); st != ntstatus.Success {
			t.Fatalf("close: %v", st)
		}
	}

	grant(dispOpen)
	if _, err := fileClient("d/rest.txt").Create(ctx, 3, nil); err != nil {
		t.Fatalf("REST Create File: %v", err)
	}
	a.dirBreak(0xd, locks.CacheRH, locks.CacheNone, true, epoch+1)
	epoch++
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xd, locks.CacheNone)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}

	grant(dispOpen)
	if _, err := fileClient("d/b.txt").Delete(ctx, nil); err != nil {
		t.Fatalf("REST Delete File: %v", err)
	}
	a.dirBreak(0xd, locks.CacheRH, locks.CacheNone, true, epoch+1)
	epoch++
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xd, locks.CacheNone)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}

	grant(dispOpen)
	body := createReq("d", 0, 0x00120089, 0, dispOpen, nil) // share none
	le.PutUint32(body[40:], optDirectoryFile)
	idB := b.send(cmdCreate, body)
	b.pending(idB)
	a.dirBreak(0xd, locks.CacheRH, locks.CacheR, true, epoch+1)
	b.noFrame(50 * time.Millisecond) // B waits for A
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xd, locks.CacheR)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	if st, _ := b.final(idB); st != ntstatus.SharingViolation {
		t.Fatalf("B's conflicting open after the Handle break: %v, want STATUS_SHARING_VIOLATION", st)
	}
}

// TestRESTDeleteDirectoryBreaksHandle: REST Delete Directory of a
// directory an SMB client holds with an RH lease breaks Handle caching
// first (RH → R, ack required) and waits for the client: for it to close
// the handle it only cached, or to acknowledge keeping it; then the
// delete goes on (REST deletes never pend, locking.md §2.3).
func TestRESTDeleteDirectoryBreaksHandle(t *testing.T) {
	ctx := context.Background()
	addr, root := restCachingRoot(t, 10*time.Second, 5*time.Second)
	a := dirLeaseClient(t, addr, 1, dialect300)
	for _, keep := range []bool{false, true} {
		name, key := "cached", byte(0xe)
		if keep {
			name, key = "kept", 0xf
		}
		r := a.createDir(name, oplockLease, dispOpenIf, dirLeaseCtx(key, locks.CacheRWH, 0, 0))
		if r.st != ntstatus.Success || r.lease != locks.CacheRH {
			t.Fatalf("%s: directory lease %+v, want RH", name, r)
		}
		done := make(chan error, 1)
		go func() {
			_, err := root.NewSubdirectoryClient(name).Delete(ctx, nil)
			done <- err
		}()
		a.dirBreak(key, locks.CacheRH, locks.CacheR, true, 2)
		select {
		case err := <-done:
			t.Fatalf("%s: Delete Directory answered %v before the client acknowledged", name, err)
		default:
		}
		if keep {
			if st, _ := a.call(cmdOplockBreak, leaseAck(key, locks.CacheR)); st != ntstatus.Success {
				t.Fatalf("ack: %v", st)
			}
			// REST deletes never pend and a directory's open handle
			// does not refuse one (locking.md §2.3): the delete goes
			// on once the break is acknowledged.
			if err := <-done; err != nil {
				t.Fatalf("%s: Delete Directory after the acknowledgment: %v", name, err)
			}
			continue
		}
		if st, _ := a.call(cmdClose, closeReq(r.id)); st != ntstatus.Success {
			t.Fatalf("close: %v", st)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: Delete Directory after the client closed its cached handle: %v", name, err)
		}
	}
}

// TestDirectoryLeaseNeedsV2: on SMB 3 a directory's v1 lease context (32
// bytes) is ignored, as on SMB 2.1: no lease, oplock level none.
func TestDirectoryLeaseNeedsV2(t *testing.T) {
	_, addr := cachingServer(t, 0)
	a := dirLeaseClient(t, addr, 1, dialect300)
	if r := a.createDir("v1dir", oplockLease, dispOpenIf, leaseCtx(0x1, locks.CacheRWH, false, 0)); r.st != ntstatus.Success || r.leased || r.oplock != 0 {
		t.Fatalf("v1 lease context on a directory: %+v, want no lease", r)
	}
	if r := a.createDir("v2dir", oplockLease, dispOpenIf, leaseCtx(0x2, locks.CacheRWH, true, 0)); r.st != ntstatus.Success || r.lease != locks.CacheRH {
		t.Fatalf("v2 lease context on a directory: %+v, want RH", r)
	}
}

// rename sends SET_INFO FileRenameInformation of open id to name.
func (c *rawClient) rename(id fileID, name string) ntstatus.Status {
	c.t.Helper()
	n := utf16le(name)
	info := make([]byte, 20, 20+len(n))
	le.PutUint32(info[16:], uint32(len(n)))
	info = append(info, n...)
	b := make([]byte, 32, 32+len(info))
	le.PutUint16(b, 33)
	b[2], b[3] = infoFile, fileRenameInformation
	le.PutUint32(b[4:], uint32(len(info)))
	le.PutUint16(b[8:], headerSize+32)
	id.put(b[16:])
	st, _ := c.call(cmdSetInfo, append(b, info...))
	return st
}

// TestDirectoryLeaseRename: a rename within a leased directory through an
// open whose lease names the directory's lease as parent breaks nothing
// (SET_INFO carries the parent lease to the namespace's transaction, as
// does the CLOSE after it); the same rename by another client's open
// breaks the lease RH → none.
func TestDirectoryLeaseRename(t *testing.T) {
	_, addr := cachingServer(t, 0)
	a, b := dirLeaseClient(t, addr, 1, dialect300), leaseClient(t, addr, 2, dialect300)
	r := a.createDir("r", oplockLease, dispOpenIf, dirLeaseCtx(0x7, locks.CacheRWH, 0, 0))
	if r.st != ntstatus.Success || r.lease != locks.CacheRH {
		t.Fatalf("directory lease: %+v", r)
	}
	const accRWD = accRW | 0x00010000 // and DELETE
	f := a.createCaching(`r\a.txt`, oplockLease, accRWD, shareAll, dispOpenIf, dirLeaseCtx(0x1, locks.CacheRWH, 0, 0x7))
	if f.st != ntstatus.Success {
		t.Fatalf("A's create in r: %v", f.st)
	}
	if st := a.rename(f.id, `r\b.txt`); st != ntstatus.Success {
		t.Fatalf("A's rename: %v", st)
	}
	if st, _ := a.call(cmdClose, closeReq(f.id)); st != ntstatus.Success {
		t.Fatalf("close: %v", st)
	}
	a.noFrame(400 * time.Millisecond) // longer than the outbox poll

	g := b.createCaching(`r\b.txt`, 0, accRWD, shareAll, dispOpen, nil)
	if g.st != ntstatus.Success {
		t.Fatalf("B's open: %v", g.st)
	}
	a.noFrame(100 * time.Millisecond) // an open changes nothing
	if st := b.rename(g.id, `r\c.txt`); st != ntstatus.Success {
		t.Fatalf("B's rename: %v", st)
	}
	a.dirBreak(0x7, locks.CacheRH, locks.CacheNone, true, 2)
}

// TestRESTDeleteNonEmptyDirectoryBreaksNothing: a Delete Directory that
// cannot succeed (the directory has entries) answers DirectoryNotEmpty
// without breaking the client's Handle caching.
func TestRESTDeleteNonEmptyDirectoryBreaksNothing(t *testing.T) {
	ctx := context.Background()
	addr, root := restCachingRoot(t, 10*time.Second, 5*time.Second)
	a := dirLeaseClient(t, addr, 1, dialect300)
	if r := a.createDir("full", oplockLease, dispOpenIf, dirLeaseCtx(0x5, locks.CacheRWH, 0, 0)); r.st != ntstatus.Success || r.lease != locks.CacheRH {
		t.Fatalf("directory lease %+v", r)
	}
	if _, err := root.NewSubdirectoryClient("full").NewFileClient("x.txt").Create(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	a.dirBreak(0x5, locks.CacheRH, locks.CacheNone, true, 2) // the create's
	if st, _ := a.call(cmdOplockBreak, leaseAck(0x5, locks.CacheNone)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	if r := a.createDir("full", oplockLease, dispOpen, dirLeaseCtx(0x5, locks.CacheRWH, 0, 0)); r.lease != locks.CacheRH {
		t.Fatalf("directory lease again %+v", r)
	}
	_, err := root.NewSubdirectoryClient("full").Delete(ctx, nil)
	if code, ec := restCode(t, err); code != 409 || ec != "DirectoryNotEmpty" {
		t.Fatalf("Delete Directory of a non-empty directory: %d %s, want 409 DirectoryNotEmpty", code, ec)
	}
	a.noFrame(400 * time.Millisecond)
}
