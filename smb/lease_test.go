package smb

import (
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// A small client of its own for oplocks and leases: rawClient's requests
// with create contexts and oplock levels, and a reader that tells break
// notifications (MessageId all ones) and interim responses from final
// responses.

// cachingServer serves a fresh fs with caching on, breaks timing out
// after timeout.
func cachingServer(t *testing.T, timeout time.Duration) (*fs.FileSystem, string) {
	t.Helper()
	fsys, table := newTestFSTable(t)
	addr := newTestServer(t, fsys, func(c *Config) {
		c.Caching = table
		c.BreakTimeout = timeout
	})
	return fsys, addr
}

// leaseCtx is an SMB2_CREATE_REQUEST_LEASE (v1) or _V2 (v2) context.
func leaseCtx(key byte, state locks.CacheState, v2 bool, epoch uint16) []byte {
	n := 32
	if v2 {
		n = 52
	}
	out := make([]byte, 24+n)
	le.PutUint16(out[4:], 16)
	le.PutUint16(out[6:], 4)
	le.PutUint16(out[10:], 24)
	le.PutUint32(out[12:], uint32(n))
	copy(out[16:], "RqLs")
	out[24] = key
	le.PutUint32(out[24+16:], uint32(state))
	if v2 {
		le.PutUint16(out[24+48:], epoch)
	}
	return out
}

// createResp is what a CREATE response says of caching.
type createResp struct {
	st     ntstatus.Status
	id     fileID
	oplock byte
	lease  locks.CacheState
	flags  uint32
	epoch  uint16
	leased bool
}

// createReq is a CREATE request body.
func createReq(name string, oplock byte, access, share, disp uint32, contexts []byte) []byte {
	n := utf16le(name)
	b := make([]byte, 56, 56+len(n)+8+len(contexts))
	le.PutUint16(b, 57)
	b[3] = oplock
	le.PutUint32(b[4:], 2)
	le.PutUint32(b[24:], access)
	le.PutUint32(b[32:], share)
	le.PutUint32(b[36:], disp)
	le.PutUint16(b[44:], headerSize+56)
	le.PutUint16(b[46:], uint16(len(n)))
	b = append(b, n...)
	if len(contexts) > 0 {
		b = appendPad(b)
		le.PutUint32(b[48:], uint32(headerSize+len(b)))
		le.PutUint32(b[52:], uint32(len(contexts)))
		b = append(b, contexts...)
	}
	return b
}

func parseCreateResp(t testing.TB, st ntstatus.Status, body []byte) createResp {
	t.Helper()
	r := createResp{st: st}
	if st != ntstatus.Success {
		return r
	}
	r.oplock = body[2]
	r.id = getFileID(body[64:])
	if off, n := le.Uint32(body[80:]), le.Uint32(body[84:]); n > 0 {
		ctxs, err := parseCreateContexts(body[off-headerSize : off-headerSize+n])
		if err != nil {
			t.Fatalf("response contexts: %v", err)
		}
		if d, ok := ctxs["RqLs"]; ok {
			r.leased = true
			r.lease, r.flags = locks.CacheState(le.Uint32(d[16:])), le.Uint32(d[20:])
			if len(d) >= 52 {
				r.epoch = le.Uint16(d[48:])
			}
		}
	}
	return r
}

// send sends one request and returns its message id.
func (c *rawClient) send(cmd uint16, body []byte) uint64 {
	c.t.Helper()
	id := c.msgID
	if err := c.frame(c.message(cmd, body)); err != nil {
		c.t.Fatalf("send %#x: %v", cmd, err)
	}
	return id
}

// next reads the next frame: its header and body.
func (c *rawClient) next() (header, []byte) {
	c.t.Helper()
	resp, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("no frame: %v", err)
	}
	h, err := decodeHeader(resp)
	if err != nil {
		c.t.Fatal("bad header")
	}
	return h, resp[headerSize:]
}

// breakNote reads a break notification (nothing else may come first).
func (c *rawClient) breakNote() []byte {
	c.t.Helper()
	h, b := c.next()
	if h.Command != cmdOplockBreak || h.MessageID != ^uint64(0) || h.SessionID != 0 || h.Flags&flagSigned != 0 {
		c.t.Fatalf("want a break notification, got command %#x message %#x session %#x flags %#x", h.Command, h.MessageID, h.SessionID, h.Flags)
	}
	return b
}

// noFrame checks that nothing arrives for a while.
func (c *rawClient) noFrame(d time.Duration) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(d))
	defer c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if msg, err := c.readFrame(); err == nil {
		h, _ := decodeHeader(msg)
		c.t.Fatalf("unexpected frame: command %#x message %#x status %#x", h.Command, h.MessageID, h.Status)
	}
}

// pending reads the interim STATUS_PENDING response of request id.
func (c *rawClient) pending(id uint64) {
	c.t.Helper()
	h, _ := c.next()
	if h.MessageID != id || ntstatus.Status(h.Status) != ntstatus.Pending || h.Flags&flagAsync == 0 {
		c.t.Fatalf("want an interim response to %d, got message %d status %#x", id, h.MessageID, h.Status)
	}
}

// final reads the final response to request id.
func (c *rawClient) final(id uint64) (ntstatus.Status, []byte) {
	c.t.Helper()
	h, b := c.next()
	if h.MessageID != id {
		c.t.Fatalf("want the response to %d, got message %d (command %#x status %#x)", id, h.MessageID, h.Command, h.Status)
	}
	return ntstatus.Status(h.Status), b
}

func (c *rawClient) createCaching(name string, oplock byte, access, share, disp uint32, contexts []byte) createResp {
	c.t.Helper()
	id := c.send(cmdCreate, createReq(name, oplock, access, share, disp, contexts))
	st, b := c.final(id)
	return parseCreateResp(c.t, st, b)
}

func leaseAck(key byte, state locks.CacheState) []byte {
	b := make([]byte, 36)
	le.PutUint16(b, 36)
	b[8] = key
	le.PutUint32(b[24:], uint32(state))
	return b
}

func oplockAck(id fileID, level byte) []byte {
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	b[2] = level
	id.put(b[8:])
	return b
}

const (
	accRW      = 0x00120089 | 0x00120116 // FILE_GENERIC_READ | FILE_GENERIC_WRITE
	shareAll   = 7
	dispOpen   = 1
	dispOpenIf = 3
)

// TestLeaseBreakAndAck: client A holds an RWH lease; client B's open of
// the same file breaks it to RH (lease break notification, ack required,
// v2 epoch one more) and goes async; A's acknowledgment completes B's
// CREATE with RH. A's own second open never breaks its lease.
// NEGOTIATE announces leasing; a lease key already used on another file
// is refused.
func TestLeaseBreakAndAck(t *testing.T) {
	_, addr := cachingServer(t, 0)
	for _, v2 := range []bool{false, true} {
		name := "v1.txt"
		dialect := uint16(dialect210)
		if v2 {
			name, dialect = "v2.txt", dialect300
		}
		// Other client GUIDs each round: a lease key of a client is
		// one file's (another file is STATUS_INVALID_PARAMETER).
		g := byte(1)
		if v2 {
			g = 3
		}
		a, b := leaseClient(t, addr, g, dialect), leaseClient(t, addr, g+1, dialect)
		if a.serverCaps&capLeasing == 0 {
			t.Fatalf("dialect %#x: NEGOTIATE does not announce leasing", dialect)
		}
		ra := a.createCaching(name, oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(0xa, locks.CacheRWH, v2, 7))
		if ra.st != ntstatus.Success || ra.oplock != oplockLease || ra.lease != locks.CacheRWH {
			t.Fatalf("%s: first open %+v, want an RWH lease", name, ra)
		}
		if v2 && ra.epoch != 8 {
			t.Fatalf("%s: epoch %d, want 8 (the client's 7, one state change)", name, ra.epoch)
		}
		own := a.createCaching(name, oplockLease, accRW, shareAll, dispOpen, leaseCtx(0xa, locks.CacheRWH, v2, 7))
		if own.st != ntstatus.Success || own.lease != locks.CacheRWH {
			t.Fatalf("%s: own second open %+v", name, own)
		}
		a.noFrame(50 * time.Millisecond)

		idB := b.send(cmdCreate, createReq(name, oplockLease, 0x00120089, shareAll, dispOpen, leaseCtx(0xb, locks.CacheRWH, v2, 0)))
		b.pending(idB)
		note := a.breakNote()
		if le.Uint16(note) != 44 || le.Uint32(note[4:])&leaseBreakAckRequired == 0 || note[8] != 0xa ||
			locks.CacheState(le.Uint32(note[24:])) != locks.CacheRWH || locks.CacheState(le.Uint32(note[28:])) != locks.CacheRH {
			t.Fatalf("%s: lease break %x, want RWH → RH for key a, ack required", name, note)
		}
		if v2 && le.Uint16(note[2:]) != 9 {
			t.Fatalf("%s: break epoch %d, want 9", name, le.Uint16(note[2:]))
		}
		b.noFrame(50 * time.Millisecond) // B waits for A
		if st, _ := a.call(cmdOplockBreak, leaseAck(0xb, locks.CacheRH)); st != ntstatus.Unsuccessful {
			t.Fatalf("%s: ack of a lease without a break: %v", name, st)
		}
		if st, _ := a.call(cmdOplockBreak, leaseAck(0xa, locks.CacheRWH)); st != statusRequestNotAccepted {
			t.Fatalf("%s: ack asking more than the break left: %v", name, st)
		}
		st, body := a.call(cmdOplockBreak, leaseAck(0xa, locks.CacheRH))
		if st != ntstatus.Success || locks.CacheState(le.Uint32(body[24:])) != locks.CacheRH {
			t.Fatalf("%s: ack: %v %x", name, st, body)
		}
		st, body = b.final(idB)
		rb := parseCreateResp(t, st, body)
		if rb.st != ntstatus.Success || rb.lease != locks.CacheRH {
			t.Fatalf("%s: B after the ack: %+v, want RH", name, rb)
		}
		if r := a.createCaching("other-"+name, oplockLease, accRW, shareAll, dispOpenIf, leaseCtx(0xa, locks.CacheRWH, v2, 0)); r.st != ntstatus.InvalidParameter {
			t.Fatalf("%s: lease key a on another file: %v, want STATUS_INVALID_PARAMETER", name, r.st)
		}
	}
}

// leaseClient is a raw client with ClientGuid guid on dialect, logged on
// to share "data".
func leaseClient(t *testing.T, addr string, guid byte, dialect uint16) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.guid[0] = guid
	c.negotiateWith(dialect, 0)
	if st := c.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatalf("login: %v", st)
	}
	if st := c.treeConnect("data"); st != ntstatus.Success {
		t.Fatalf("tree connect: %v", st)
	}
	return c
}

// TestOplockBreakAndTimeout: a batch oplock is broken to level II by a
// second open, which waits for the acknowledgment and gets level II; an
// exclusive oplock whose holder never acknowledges completes to none at
// the break timeout, and the waiting CREATE then completes.
func TestOplockBreakAndTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	_, addr := cachingServer(t, timeout)
	a, b := leaseClient(t, addr, 1, dialect210), leaseClient(t, addr, 2, dialect210)
	ra := a.createCaching("f.txt", byte(locks.OplockBatch), accRW, shareAll, dispOpenIf, nil)
	if ra.st != ntstatus.Success || ra.oplock != byte(locks.OplockBatch) {
		t.Fatalf("batch: %+v", ra)
	}
	idB := b.send(cmdCreate, createReq("f.txt", byte(locks.OplockBatch), 0x00120089, shareAll, dispOpen, nil))
	b.pending(idB)
	note := a.breakNote()
	if le.Uint16(note) != 24 || note[2] != byte(locks.OplockLevelII) || getFileID(note[8:]) != ra.id {
		t.Fatalf("oplock break %x, want to level II for %v", note, ra.id)
	}
	st, body := a.call(cmdOplockBreak, oplockAck(ra.id, byte(locks.OplockLevelII)))
	if st != ntstatus.Success || body[2] != byte(locks.OplockLevelII) {
		t.Fatalf("ack: %v %x", st, body)
	}
	st, body = b.final(idB)
	if rb := parseCreateResp(t, st, body); rb.st != ntstatus.Success || rb.oplock != byte(locks.OplockLevelII) {
		t.Fatalf("B after the ack: %+v, want level II", rb)
	}
	if st, _ := a.call(cmdOplockBreak, oplockAck(ra.id, 0)); st != statusInvalidOplockProtocol {
		t.Fatalf("ack without a break: %v", st)
	}

	rx := a.createCaching("x.txt", byte(locks.OplockExclusive), accRW, shareAll, dispOpenIf, nil)
	if rx.st != ntstatus.Success || rx.oplock != byte(locks.OplockExclusive) {
		t.Fatalf("exclusive: %+v", rx)
	}
	start := time.Now()
	idB = b.send(cmdCreate, createReq("x.txt", 0, 0x00120089, shareAll, dispOpen, nil))
	b.pending(idB)
	if note := a.breakNote(); note[2] != byte(locks.OplockLevelII) {
		t.Fatalf("oplock break %x, want to level II", note)
	}
	st, _ = b.final(idB) // nobody acknowledges
	if st != ntstatus.Success {
		t.Fatalf("B after the timeout: %v", st)
	}
	if d := time.Since(start); d < timeout {
		t.Fatalf("B's CREATE completed after %v, before the %v break timeout", d, timeout)
	}
	if st, _ := a.call(cmdOplockBreak, oplockAck(rx.id, byte(locks.OplockLevelII))); st != statusInvalidOplockProtocol {
		t.Fatalf("ack after the timeout: %v, want STATUS_INVALID_OPLOCK_PROTOCOL (the break completed to none)", st)
	}
}
