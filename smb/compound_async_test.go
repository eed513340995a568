package smb

import (
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// part is one request of a compound: its command and body; related
// requests inherit the session, tree and file of the one before.
type part struct {
	cmd     uint16
	body    []byte
	related bool
}

// sendCompound sends parts as one compound frame (each request padded to
// 8 bytes, signed over its own bytes) and returns their message ids.
func (c *rawClient) sendCompound(parts ...part) []uint64 {
	c.t.Helper()
	var frame []byte
	ids := make([]uint64, len(parts))
	for i, p := range parts {
		h := header{Command: p.cmd, Credits: 64, CreditCharge: 1, MessageID: c.msgID, SessionID: c.session, TreeID: c.tree}
		ids[i] = c.msgID
		c.msgID++
		if p.related {
			h.Flags |= flagRelated
		}
		if c.signer != nil {
			h.Flags |= flagSigned
		}
		msg := make([]byte, headerSize, headerSize+len(p.body)+8)
		msg = append(msg, p.body...)
		if i < len(parts)-1 {
			msg = appendPad(msg)
			h.NextCommand = uint32(len(msg))
		}
		h.encode(msg)
		if c.signer != nil {
			sig := signatureOf(c.signer, msg)
			copy(msg[48:64], sig[:])
		}
		frame = append(frame, msg...)
	}
	if err := c.frame(frame); err != nil {
		c.t.Fatalf("send compound: %v", err)
	}
	return ids
}

// reply is one response of a frame.
type reply struct {
	h    header
	body []byte
}

// nextFrame reads one frame and splits its responses.
func (c *rawClient) nextFrame() []reply {
	c.t.Helper()
	msg, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("no frame: %v", err)
	}
	var out []reply
	for {
		h, err := decodeHeader(msg)
		if err != nil {
			c.t.Fatal("bad response header")
		}
		end := len(msg)
		if h.NextCommand != 0 {
			end = int(h.NextCommand)
		}
		out = append(out, reply{h, msg[headerSize:end]})
		if h.NextCommand == 0 {
			return out
		}
		msg = msg[end:]
	}
}

// statuses are the statuses of a frame's responses, by message id.
func statuses(rs []reply) map[uint64]ntstatus.Status {
	m := map[uint64]ntstatus.Status{}
	for _, r := range rs {
		m[r.h.MessageID] = ntstatus.Status(r.h.Status)
	}
	return m
}

func dispositionInfo(id fileID) []byte {
	b := make([]byte, 32, 33)
	le.PutUint16(b, 33)
	b[2] = 1 // SMB2_0_INFO_FILE
	b[3] = fileDispositionInformation
	le.PutUint32(b[4:], 1)
	le.PutUint16(b[8:], headerSize+32)
	id.put(b[16:])
	return append(b, 1) // DeletePending
}

func closeReq(id fileID) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	id.put(b[8:])
	return b
}

// TestCompoundCreateAsync: a compound CREATE + SET_INFO + CLOSE whose
// CREATE waits for a lease break (the Linux kernel client's unlink) gets
// the interim response of the CREATE alone in its frame, and after the
// holder acknowledges, one frame with the CREATE's final response and the
// SET_INFO and CLOSE served on the created file. Behind a CREATE that
// fails after the break (a sharing violation the holder keeps), the
// related requests fail with its status, in the same frame.
func TestCompoundCreateAsync(t *testing.T) {
	_, addr := cachingServer(t, 0)
	a, b := leaseClient(t, addr, 1, dialect300), leaseClient(t, addr, 2, dialect300)
	related := relatedFileID

	// The holder shares everything: the unlink goes through.
	ra := a.createCaching("gone.txt", oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(0xa, locks.CacheRWH, true, 0))
	if ra.st != ntstatus.Success || ra.lease != locks.CacheRWH {
		t.Fatalf("holder's open: %+v, want an RWH lease", ra)
	}
	ids := b.sendCompound(
		part{cmd: cmdCreate, body: createReq("gone.txt", oplockLease, 0x00110080, shareAll, dispOpen, leaseCtx(0xb, locks.CacheRH, true, 0))}, // DELETE|SYNCHRONIZE|READ_ATTRIBUTES
		part{cmd: cmdSetInfo, body: dispositionInfo(related), related: true},
		part{cmd: cmdClose, body: closeReq(related), related: true},
	)
	interim := b.nextFrame()
	if len(interim) != 1 || interim[0].h.MessageID != ids[0] || ntstatus.Status(interim[0].h.Status) != ntstatus.Pending ||
		interim[0].h.Flags&flagAsync == 0 {
		t.Fatalf("first frame: %+v, want the CREATE's interim response alone", interim)
	}
	note := a.breakNote()
	if locks.CacheState(le.Uint32(note[28:])) != locks.CacheRH {
		t.Fatalf("break %x, want RWH → RH", note)
	}
	b.noFrame(50 * time.Millisecond) // the chain waits for the acknowledgment
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xa, locks.CacheRH)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	rest := b.nextFrame()
	if len(rest) != 3 {
		t.Fatalf("after the ack: %d responses in the frame, want the 3 of the chain", len(rest))
	}
	cr := parseCreateResp(t, ntstatus.Status(rest[0].h.Status), rest[0].body)
	if rest[0].h.MessageID != ids[0] || cr.st != ntstatus.Success || rest[0].h.Flags&flagAsync == 0 || rest[0].h.AsyncID != interim[0].h.AsyncID {
		t.Fatalf("CREATE's final response: %+v %+v, want success with the interim's async id", rest[0].h, cr)
	}
	if got := statuses(rest); got[ids[1]] != ntstatus.Success || got[ids[2]] != ntstatus.Success {
		t.Fatalf("SET_INFO, CLOSE after the CREATE: %v, want both served on the created file", got)
	}
	if st, _ := a.call(cmdClose, closeReq(ra.id)); st != ntstatus.Success {
		t.Fatalf("holder's close: %v", st)
	}
	if st, _ := a.create("gone.txt", 0x80, shareAll, dispOpen, 0); st != ntstatus.ObjectNameNotFound {
		t.Fatalf("open after the unlink and the last close: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
	}

	// The holder shares no delete: the CREATE breaks its Handle caching
	// (to learn whether the handle is really open), the holder keeps it
	// open, so the CREATE fails and the chain behind it with it.
	ra = a.createCaching("kept.txt", oplockLease, accRW, 1, dispOpenIf, leaseCtx(0xc, locks.CacheRWH, true, 0))
	if ra.st != ntstatus.Success || ra.lease != locks.CacheRWH {
		t.Fatalf("holder's open: %+v, want an RWH lease", ra)
	}
	ids = b.sendCompound(
		part{cmd: cmdCreate, body: createReq("kept.txt", oplockLease, 0x00110080, shareAll, dispOpen, leaseCtx(0xd, locks.CacheRH, true, 0))},
		part{cmd: cmdSetInfo, body: dispositionInfo(related), related: true},
		part{cmd: cmdClose, body: closeReq(related), related: true},
	)
	if f := b.nextFrame(); len(f) != 1 || ntstatus.Status(f[0].h.Status) != ntstatus.Pending {
		t.Fatalf("first frame: %+v, want the CREATE's interim response alone", f)
	}
	note = a.breakNote()
	to := locks.CacheState(le.Uint32(note[28:]))
	if to&locks.CacheHandle != 0 {
		t.Fatalf("break %x, want Handle caching broken", note)
	}
	if st, _ := a.call(cmdOplockBreak, leaseAck(0xc, to)); st != ntstatus.Success {
		t.Fatalf("ack: %v", st)
	}
	rest = b.nextFrame()
	if got := statuses(rest); len(rest) != 3 || got[ids[0]] != ntstatus.SharingViolation || got[ids[1]] != ntstatus.SharingViolation ||
		got[ids[2]] != ntstatus.SharingViolation {
		t.Fatalf("after the ack: %v, want STATUS_SHARING_VIOLATION for the CREATE and each related request", got)
	}
}

func lockReq(id fileID, off, n uint64, flags uint32) []byte {
	b := make([]byte, 48)
	le.PutUint16(b, 48)
	le.PutUint16(b[2:], 1)
	id.put(b[8:])
	le.PutUint64(b[24:], off)
	le.PutUint64(b[32:], n)
	le.PutUint32(b[40:], flags)
	return b
}

// TestCompoundOtherAsync: a request other than a CREATE that would go
// async in the middle of a compound (a blocking LOCK on a locked range) is
// answered STATUS_INTERNAL_ERROR at its place, the chain going on, as
// Windows does; at the end of a compound it goes async, its interim
// response alone in a frame after the chain's other responses
// (smbtorture smb2.compound.interim2 and interim3 check both).
func TestCompoundOtherAsync(t *testing.T) {
	addr := newTestServer(t, newTestFS(t))
	a, b := loggedOn(t, addr), loggedOn(t, addr)
	const exclusive = 2
	st, held := a.create("locked.txt", 0xc0000000, shareAll, dispOpenIf, 0)
	if st != ntstatus.Success {
		t.Fatalf("create: %v", st)
	}
	if st, _ := a.call(cmdLock, lockReq(held, 0, 10, exclusive|0x10)); st != ntstatus.Success {
		t.Fatalf("lock: %v", st)
	}
	related := relatedFileID
	ids := b.sendCompound(
		part{cmd: cmdCreate, body: createReq("locked.txt", 0, 0xc0000000, shareAll, dispOpen, nil)},
		part{cmd: cmdLock, body: lockReq(related, 0, 10, exclusive), related: true},
		part{cmd: cmdClose, body: closeReq(related), related: true},
	)
	f := b.nextFrame()
	if got := statuses(f); len(f) != 3 || got[ids[0]] != ntstatus.Success || got[ids[1]] != statusInternalError || got[ids[2]] != ntstatus.Success {
		t.Fatalf("CREATE + blocking LOCK + CLOSE: %v, want the LOCK STATUS_INTERNAL_ERROR in one frame", got)
	}
	if f[1].h.Flags&flagAsync != 0 {
		t.Fatalf("the LOCK's response is async: %+v", f[1].h)
	}

	ids = b.sendCompound(
		part{cmd: cmdCreate, body: createReq("locked.txt", 0, 0xc0000000, shareAll, dispOpen, nil)},
		part{cmd: cmdLock, body: lockReq(related, 0, 10, exclusive), related: true},
	)
	if f := b.nextFrame(); len(f) != 1 || f[0].h.MessageID != ids[0] || ntstatus.Status(f[0].h.Status) != ntstatus.Success {
		t.Fatalf("first frame: %v, want the CREATE's response alone", statuses(f))
	}
	f = b.nextFrame()
	if len(f) != 1 || f[0].h.MessageID != ids[1] || ntstatus.Status(f[0].h.Status) != ntstatus.Pending {
		t.Fatalf("second frame: %v, want the LOCK's interim response", statuses(f))
	}
	if st, _ := a.call(cmdLock, lockReq(held, 0, 10, 4)); st != ntstatus.Success { // unlock
		t.Fatalf("unlock: %v", st)
	}
	if f := b.nextFrame(); len(f) != 1 || f[0].h.MessageID != ids[1] || ntstatus.Status(f[0].h.Status) != ntstatus.Success {
		t.Fatalf("after the unlock: %v, want the LOCK granted", statuses(f))
	}
}

// TestCompoundRelatedFileID: a related request uses the file of the
// request before it, whether a CREATE made it or the request named it
// (MS-SMB2 3.3.5.2.7.2; smbtorture smb2.compound_async.flush_close): a
// FLUSH of an open file and a related CLOSE close that file.
func TestCompoundRelatedFileID(t *testing.T) {
	c := loggedOn(t, newTestServer(t, newTestFS(t)))
	st, id := c.create("named.txt", 0xc0000000, shareAll, dispOpenIf, 0)
	if st != ntstatus.Success {
		t.Fatalf("create: %v", st)
	}
	flush := make([]byte, 24)
	le.PutUint16(flush, 24)
	id.put(flush[8:])
	ids := c.sendCompound(part{cmd: cmdFlush, body: flush}, part{cmd: cmdClose, body: closeReq(relatedFileID), related: true})
	if got := statuses(c.nextFrame()); got[ids[0]] != ntstatus.Success || got[ids[1]] != ntstatus.Success {
		t.Fatalf("FLUSH + related CLOSE: %v, want both served on the named file", got)
	}
	if st, _ := c.call(cmdClose, closeReq(id)); st != ntstatus.FileClosed {
		t.Fatalf("closing the file again: %v, want STATUS_FILE_CLOSED (the related CLOSE closed it)", st)
	}
}
