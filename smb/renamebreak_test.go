package smb

import (
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// renameInfo is a SET_INFO FileRenameInformation request body renaming
// file id to name (replacing an existing one).
func renameInfo(id fileID, name string) []byte {
	n := utf16le(name)
	info := make([]byte, 20, 20+len(n))
	info[0] = 1 // ReplaceIfExists
	le.PutUint32(info[16:], uint32(len(n)))
	info = append(info, n...)
	b := make([]byte, 32, 32+len(info))
	le.PutUint16(b, 33)
	b[2] = 1 // SMB2_0_INFO_FILE
	b[3] = fileRenameInformation
	le.PutUint32(b[4:], uint32(len(info)))
	le.PutUint16(b[8:], headerSize+32)
	id.put(b[16:])
	return append(b, info...)
}

// TestRenameBreaksHandleCaching: a SET_INFO rename through one client's
// open breaks another client's Handle caching on the file (RH → R,
// acknowledgment required, MS-FSA 2.1.4.12) and waits for it: alone in
// its frame it goes async (interim STATUS_PENDING, then the final
// response once the holder acknowledged); in the middle of a compound
// (the Linux client's create-rename-close) it waits in place and the
// chain's responses come in one frame after the acknowledgment. The
// renamed name exists afterwards.
func TestRenameBreaksHandleCaching(t *testing.T) {
	_, addr := cachingServer(t, 0)
	a, b := leaseClient(t, addr, 1, dialect300), leaseClient(t, addr, 2, dialect300)
	const delAccess = 0x00110080 // DELETE | SYNCHRONIZE | FILE_READ_ATTRIBUTES

	ra := a.createCaching("r1.txt", oplockLease, 0x00120089, shareAll, dispOpenIf, leaseCtx(0xa, locks.CacheRH, true, 0))
	if ra.st != ntstatus.Success || ra.lease != locks.CacheRH {
		t.Fatalf("holder's open: %+v, want an RH lease", ra)
	}
	rb := b.createCaching("r1.txt", oplockLease, delAccess, shareAll, dispOpen, leaseCtx(0xb, locks.CacheRH, true, 0))
	if rb.st != ntstatus.Success {
		t.Fatalf("renamer's open: %+v", rb)
	}
	id := b.send(cmdSetInfo, renameInfo(rb.id, "r2.txt"))
	b.pending(id)
	note := a.breakNote()
	if note[8] != 0xa || le.Uint32(note[4:])&leaseBreakAckRequired == 0 ||
		locks.CacheState(le.Uint32(note[24:])) != locks.CacheRH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheR {
		t.Fatalf("break %x, want RH → R for key a, acknowledgment required", note)
	}
	b.noFrame(50 * time.Millisecond) // the rename waits for the acknowledgment
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xa, locks.CacheR)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	if st, body := b.final(id); st != ntstatus.Success || len(body) != 2 || body[0] != 2 {
		t.Fatalf("rename after the acknowledgment: %v %x, want success with SET_INFO's 2-byte body", st, body)
	}
	if st, _ := a.create("r2.txt", 0x80, shareAll, dispOpen, 0); st != ntstatus.Success {
		t.Fatalf("open of the new name: %v", st)
	}

	rc := a.createCaching("c1.txt", oplockLease, 0x00120089, shareAll, dispOpenIf, leaseCtx(0xc, locks.CacheRH, true, 0))
	if rc.st != ntstatus.Success || rc.lease != locks.CacheRH {
		t.Fatalf("holder's open: %+v, want an RH lease", rc)
	}
	ids := b.sendCompound(
		part{cmd: cmdCreate, body: createReq("c1.txt", 0, delAccess, shareAll, dispOpen, nil)},
		part{cmd: cmdSetInfo, body: renameInfo(relatedFileID, "c2.txt"), related: true},
		part{cmd: cmdClose, body: closeReq(relatedFileID), related: true},
	)
	note = a.breakNote()
	if note[8] != 0xc || locks.CacheState(le.Uint32(note[28:])) != locks.CacheR {
		t.Fatalf("break %x, want RH → R for key c", note)
	}
	b.noFrame(50 * time.Millisecond) // the chain waits for the acknowledgment
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xc, locks.CacheR)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	rest := b.nextFrame()
	if got := statuses(rest); len(rest) != 3 || got[ids[0]] != ntstatus.Success || got[ids[1]] != ntstatus.Success || got[ids[2]] != ntstatus.Success {
		t.Fatalf("create-rename-close after the acknowledgment: %v, want three successes in one frame", got)
	}
	if st, _ := a.create("c2.txt", 0x80, shareAll, dispOpen, 0); st != ntstatus.Success {
		t.Fatalf("open of the new name: %v", st)
	}
}

// TestRenameInChainOwnCache: a create-rename-close compound of a client
// that itself holds an RH lease on the file (another lease key, another
// open on the same connection) does not wait in place for its own
// acknowledgment, which the connection could not read meanwhile: the
// break is sent and the chain answered at once.
func TestRenameInChainOwnCache(t *testing.T) {
	_, addr := cachingServer(t, 0)
	b := leaseClient(t, addr, 2, dialect300)
	rb := b.createCaching("own1.txt", oplockLease, 0x00120089, shareAll, dispOpenIf, leaseCtx(0xe, locks.CacheRH, true, 0))
	if rb.st != ntstatus.Success || rb.lease != locks.CacheRH {
		t.Fatalf("own open: %+v, want an RH lease", rb)
	}
	ids := b.sendCompound(
		part{cmd: cmdCreate, body: createReq("own1.txt", 0, 0x00110080, shareAll, dispOpen, nil)},
		part{cmd: cmdSetInfo, body: renameInfo(relatedFileID, "own2.txt"), related: true},
		part{cmd: cmdClose, body: closeReq(relatedFileID), related: true},
	)
	note := b.breakNote() // sent before the chain is answered
	if note[8] != 0xe || locks.CacheState(le.Uint32(note[28:])) != locks.CacheR {
		t.Fatalf("break %x, want RH → R for key e", note)
	}
	rest := b.nextFrame()
	if got := statuses(rest); len(rest) != 3 || got[ids[0]] != ntstatus.Success || got[ids[1]] != ntstatus.Success || got[ids[2]] != ntstatus.Success {
		t.Fatalf("create-rename-close: %v, want three successes without an acknowledgment", got)
	}
	if st, _ := b.call(cmdOplockBreak, leaseAck(0xe, locks.CacheR)); st != ntstatus.Success {
		t.Fatalf("ack after the chain: %v", st)
	}
}
