package smb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/blobshare/blobshare/ntstatus"
)

// Limits of one connection.
const (
	// maxIO is MaxWriteSize and MaxTransactSize offered to clients that
	// negotiate large MTU (2.1 and later).
	maxIO = 8 << 20
	// maxFrame is the largest NetBIOS frame accepted: a WRITE of maxIO
	// plus its header and a compound's small companions. Larger frames
	// close the connection before any of it is read.
	maxFrame = maxIO + 64<<10
	// maxRead is the MaxReadSize offered with large MTU. Smaller than
	// maxIO: smbclient keeps a fixed window of bytes in flight (16 MiB)
	// in READs of MaxReadSize, so 1 MiB READs give 16 in flight, where 8
	// MiB gave 2 and left the client waiting on each response's read
	// and signing (BenchmarkSmbclientVsSmbd).
	maxRead = 1 << 20
	// maxReadsInFlight bounds the READs a connection serves at once on
	// goroutines, and so the read buffers it holds.
	maxReadsInFlight = 16
	// readBufSize is the size of a read buffer: a READ response of
	// maxRead bytes, header included.
	readBufSize = headerSize + 16 + maxRead
	// maxCredits bounds the message ids granted and not yet used.
	maxCredits = 8192
	// smallIO is the I/O limit without large MTU (2.0.2).
	smallIO = 64 << 10
)

// errDisconnect asks the connection loop to drop the connection: the
// protocol says to, or the client broke framing so badly nothing can be
// answered.
var errDisconnect = errors.New("smb: drop connection")

// conn is one client connection; requests are served in order on its
// goroutine.
type conn struct {
	srv    *Server
	nc     net.Conn
	log    *slog.Logger
	remote string

	negotiated      bool
	dialect         uint16
	clientGUID      [16]byte
	clientCaps      uint32
	clientSecMode   uint16
	clientDialects  []uint16
	preauth         [64]byte // connection preauth integrity hash (3.1.1)
	signingRequired bool
	maxIO           uint32
	maxRead         uint32 // MaxReadSize: maxRead, or smallIO for 2.0.2
	// cipher is the negotiated encryption cipher (0: none), signAlg the
	// 3.x signing algorithm (AES-CMAC unless 3.1.1 negotiated another).
	cipher  uint16
	signAlg uint16

	// Credits: the message ids granted are [seqLo, seqHi); used holds
	// those above seqLo already consumed.
	seqLo, seqHi uint64
	used         map[uint64]struct{}

	// sessions are the sessions this connection set up or is a channel
	// of (by id); binds the session bindings in progress on it.
	sessions map[uint64]*session
	binds    map[uint64]*binding
	rbuf     []byte

	// wmu serialises frames on the wire: the loop's replies and the final
	// responses of pending requests.
	wmu sync.Mutex

	// Pending (async) requests, by async id; their goroutines are waited
	// for (pwg) before the connection's sessions close.
	pmu       sync.Mutex
	pending   map[uint64]*pendingOp
	nextAsync uint64
	pwg       sync.WaitGroup
	// afterSend runs once the current reply frame is on the wire: pending
	// requests start waiting only after their interim response went out.
	afterSend []func()
	// single is set while serving a frame of one message: a READ is then
	// served on a goroutine (fileio.go), taking one of readSlots.
	single    bool
	readSlots chan struct{}
	// loopMu is held while a frame is served (from its decryption to the
	// afterSend calls after its reply): the state above that the loop
	// owns (credits, sessions, afterSend, single) is then also the
	// continuation's, the rest of a compound served after an async
	// CREATE completes (async.go). closing, set under it when the
	// connection closes, stops continuations from starting.
	loopMu  sync.Mutex
	closing bool
	// lastPending is the pending request the request being served
	// registered (goPendingBody), nil when it went no async.
	lastPending *pendingOp
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, remote: nc.RemoteAddr().String(), seqHi: 1,
		used: map[uint64]struct{}{}, sessions: map[uint64]*session{}, binds: map[uint64]*binding{}, pending: map[uint64]*pendingOp{},
		readSlots: make(chan struct{}, maxReadsInFlight)}
	c.log = s.log.With("smb_client", c.remote)
	c.signingRequired = !s.cfg.SigningOptional
	return c
}

func (c *conn) serve(ctx context.Context) {
	defer c.close()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("smb: panic serving connection", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		msg, err := c.readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.log.Debug("smb: connection closed", "err", err)
			}
			return
		}
		if !c.serveFrame(ctx, msg) {
			return
		}
	}
}

// serveFrame serves one frame under loopMu and reports whether the
// connection goes on.
func (c *conn) serveFrame(ctx context.Context, msg []byte) bool {
	c.loopMu.Lock()
	defer c.loopMu.Unlock()
	var enc *session
	if len(msg) >= 4 && [4]byte(msg[:4]) == protoTransform {
		var err error
		if enc, msg, err = c.decryptFrame(msg); err != nil {
			c.log.Debug("smb: dropping connection", "err", err)
			return false
		}
	}
	early, out, err := c.handleFrame(ctx, msg, enc)
	if err != nil {
		c.log.Debug("smb: dropping connection", "err", err)
		return false
	}
	return c.sendFrames(early, out, enc)
}

// sendFrames sends the reply frames of a frame or a continuation (either
// may be nil), then runs afterSend, whether or not they went out (a
// pending request then ends on its own, its final response failing to
// send). loopMu is held. It reports whether the connection goes on.
func (c *conn) sendFrames(early, out []byte, enc *session) bool {
	ok := true
	for _, f := range [][]byte{early, out} {
		if f != nil && ok {
			ok = c.send(f, enc) == nil
		}
	}
	for _, f := range c.afterSend {
		f()
	}
	c.afterSend = c.afterSend[:0]
	return ok
}

// decryptFrame opens an SMB2 TRANSFORM frame with the key of the session
// it names. A frame that does not open drops the connection (MS-SMB2
// 3.3.5.2.1.1).
func (c *conn) decryptFrame(msg []byte) (*session, []byte, error) {
	id, err := decodeTransform(msg)
	if err != nil {
		return nil, nil, fmt.Errorf("smb: bad transform header: %w", errDisconnect)
	}
	s := c.sessions[id]
	if s == nil || s.crypto == nil {
		return nil, nil, fmt.Errorf("smb: encrypted message for session %#x without keys: %w", id, errDisconnect)
	}
	plain, err := s.crypto.decrypt(msg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", err, errDisconnect)
	}
	return s, plain, nil
}

// send writes one reply frame (NetBIOS framing), encrypted with enc's key
// when enc is set (the request came encrypted, so the reply goes so).
func (c *conn) send(out []byte, enc *session) error {
	if enc != nil {
		var err error
		if out, err = enc.crypto.encrypt(out, enc.id); err != nil {
			return err
		}
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(out))) // len(out) < 2^24: hdr[0] stays 0
	// One writev for the framing and the message: a READ's response goes
	// from its buffer to the socket without a copy through a bufio.Writer.
	bufs := net.Buffers{hdr[:], out}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := bufs.WriteTo(c.nc)
	return err
}

// readFrame reads one NetBIOS session message (RFC 1002 framing as SMB2
// over TCP uses it: a zero byte, then a 24-bit length).
func (c *conn) readFrame(r *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if hdr[0] != 0 {
		return nil, fmt.Errorf("smb: NetBIOS message type %#x: %w", hdr[0], errDisconnect)
	}
	n := int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
	if n > maxFrame {
		return nil, fmt.Errorf("smb: frame of %d bytes over the %d limit: %w", n, maxFrame, errDisconnect)
	}
	if cap(c.rbuf) < n {
		c.rbuf = make([]byte, n)
	}
	msg := c.rbuf[:n]
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// close ends every session: their opens are closed (committing writes and
// running delete-on-close) before the goroutine ends.
func (c *conn) close() {
	c.nc.Close()
	if c.negotiated {
		c.srv.clients.remove(c)
	}
	c.loopMu.Lock()
	c.closing = true
	for _, f := range c.afterSend {
		f() // lets pending requests whose interim response never went out end
	}
	c.afterSend = nil
	c.loopMu.Unlock()
	c.endPending(func(p *pendingOp) bool { return !c.outlives(p) }, ntstatus.Cancelled)
	c.pwg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for id, s := range c.sessions {
		s.dropChannel(ctx, c) // the last channel closes the session's opens
		delete(c.sessions, id)
	}
}

// response is one message of a reply frame.
type response struct {
	hdr  header
	body []byte
	sess *session // signs the response when set and signing applies
	sign bool
	// signer, when set, signs instead of sess's key on the connection
	// (the responses of a session binding).
	signer signer
	// onSent sees the response as sent (signed, before padding), for the
	// preauth integrity hash.
	onSent func(msg []byte)
	// frame, when set, is a buffer whose bytes after the header are body:
	// a lone response is encoded in place, without copying the body.
	frame []byte
}

// related is what a related request in a compound inherits.
type related struct {
	sessionID uint64
	treeID    uint32
	file      fileID
	status    ntstatus.Status
	any       bool
	// signer is the session of the chain's last request that had one,
	// unrelated requests included: it signs the STATUS_INVALID_PARAMETER
	// of a related request with nothing to inherit.
	signer *session
}

// handleFrame serves one frame: an SMB1 NEGOTIATE, or one SMB2 message or
// a compound chain. It returns the reply frames, nil for none: early goes
// before out (the responses of a chain before an interim response).
func (c *conn) handleFrame(ctx context.Context, msg []byte, enc *session) (early, out []byte, err error) {
	if len(msg) >= 4 && [4]byte(msg[:4]) == protoSMB1 {
		if enc != nil {
			return nil, nil, fmt.Errorf("smb: encrypted SMB1 message: %w", errDisconnect)
		}
		if c.negotiated || c.dialect == dialectWildcard {
			return nil, nil, fmt.Errorf("smb: SMB1 message after negotiation: %w", errDisconnect)
		}
		out, err := c.smb1Negotiate(msg)
		return nil, out, err
	}
	var rel related
	c.single = len(msg) >= headerSize && le.Uint32(msg[20:]) == 0 // NextCommand
	return c.serveChain(ctx, msg, &rel, true, enc, nil)
}

// serveChain serves the requests of a chain from msg on, after resps (the
// responses already made of it), and returns its reply frames (see
// handleFrame).
//
// An interim response travels alone, after a frame of the responses
// before it (smbd does so; the Linux kernel client reads no further in a
// frame once it meets an interim response). A request that goes async in
// the middle of a chain: a CREATE waiting for a break stops the chain,
// whose rest is served after the CREATE completes, related requests with
// its file id (MS-SMB2 3.3.5.2.7 allows failing it instead; Windows and
// smbd go on); any other request is answered STATUS_INTERNAL_ERROR at its
// place and the chain goes on, as Windows does (MS-SMB2 3.3.5.2.7,
// footnote: "except for the last request in the chain and CREATE
// requests that cause oplock breaks").
func (c *conn) serveChain(ctx context.Context, msg []byte, rel *related, first bool, enc *session, resps []*response) (early, out []byte, err error) {
	for off := 0; ; {
		m := msg[off:]
		h, err := decodeHeader(m)
		if err != nil {
			return nil, nil, fmt.Errorf("smb: bad header: %w", errDisconnect)
		}
		end := len(m)
		if h.NextCommand != 0 {
			if h.NextCommand < headerSize || int(h.NextCommand) > len(m) || h.NextCommand%8 != 0 {
				return nil, nil, fmt.Errorf("smb: bad NextCommand %d: %w", h.NextCommand, errDisconnect)
			}
			end = int(h.NextCommand)
		}
		c.lastPending = nil
		r, err := c.handleMessage(ctx, h, m[:end], rel, first && off == 0, enc)
		if err != nil {
			return nil, nil, err
		}
		if r != nil && r.hdr.Flags&flagAsync != 0 && ntstatus.Status(r.hdr.Status) == ntstatus.Pending && c.lastPending != nil {
			p := c.lastPending
			switch {
			case h.NextCommand == 0 || h.Command == cmdCreate:
				if len(resps) > 0 {
					early = c.encodeResponses(resps)
				}
				if h.NextCommand != 0 {
					// The buffer is the connection's, reused by the
					// next frame: the rest is copied.
					p.rest = bytes.Clone(m[end:])
				}
				return early, c.encodeResponses([]*response{r}), nil
			default:
				c.settleInline(p, r)
			}
		}
		if r != nil {
			resps = append(resps, r)
		}
		if h.NextCommand == 0 {
			break
		}
		off += int(h.NextCommand)
	}
	if len(resps) == 0 {
		return nil, nil, nil
	}
	return nil, c.encodeResponses(resps), nil
}

// encodeResponses encodes a chain of responses, signing those that sign.
func (c *conn) encodeResponses(resps []*response) []byte {
	var out []byte
	lone := len(resps) == 1 && resps[0].frame != nil
	for i, r := range resps {
		start := len(out)
		if lone {
			// The body already follows room for the header: no copy.
			out = r.frame
		} else {
			out = append(out, make([]byte, headerSize)...)
			out = append(out, r.body...)
		}
		if i < len(resps)-1 {
			out = appendPad(out)
			r.hdr.NextCommand = uint32(len(out) - start)
		}
		sg := r.signer
		if sg == nil && r.sess != nil {
			sg = r.sess.signerOn(c)
		}
		if r.sign && sg != nil {
			r.hdr.Flags |= flagSigned
		}
		r.hdr.encode(out[start:])
		if r.hdr.Flags&flagSigned != 0 && sg != nil {
			sig := signatureOf(sg, out[start:])
			copy(out[start+48:start+64], sig[:])
		}
		if r.onSent != nil {
			r.onSent(out[start:])
		}
	}
	return out
}

// consumeCredits checks the request's message ids against the granted
// window (MS-SMB2 3.3.5.2.3) and marks them used.
func (c *conn) consumeCredits(h header) error {
	charge := uint64(h.CreditCharge)
	if charge == 0 || c.dialect == dialect202 {
		charge = 1
	}
	if h.MessageID < c.seqLo || h.MessageID+charge > c.seqHi || h.MessageID+charge < h.MessageID {
		return fmt.Errorf("smb: message id %d (charge %d) outside [%d, %d): %w", h.MessageID, charge, c.seqLo, c.seqHi, errDisconnect)
	}
	for id := h.MessageID; id < h.MessageID+charge; id++ {
		if _, dup := c.used[id]; dup {
			return fmt.Errorf("smb: message id %d reused: %w", id, errDisconnect)
		}
	}
	for id := h.MessageID; id < h.MessageID+charge; id++ {
		c.used[id] = struct{}{}
	}
	for {
		if _, ok := c.used[c.seqLo]; !ok {
			break
		}
		delete(c.used, c.seqLo)
		c.seqLo++
	}
	return nil
}

// grantCredits grants up to the requested credits, keeping the window
// within maxCredits and never leaving the client without one.
func (c *conn) grantCredits(requested uint16) uint16 {
	g := uint64(requested)
	window := c.seqHi - c.seqLo
	if window+g > maxCredits {
		g = maxCredits - min(window, maxCredits)
	}
	if g == 0 && window-uint64(len(c.used)) == 0 {
		g = 1
	}
	c.seqHi += g
	return uint16(g)
}

// request is one SMB2 request being served.
type request struct {
	hdr  header
	msg  []byte // the whole message, header included
	sess *session
	tree *tree
	rel  *related
	// onSent, set by a handler, is passed on to the response.
	onSent func(msg []byte)
	// asyncID is set by a handler that answers STATUS_PENDING.
	asyncID uint64
	// frame: see response.frame (set by READ).
	frame []byte
	// deferred, set by READ, computes the response on a goroutine: its
	// status, body and the buffer (with room for the header) holding it.
	// The goroutine sends it once sendAfter (when set) is closed, then
	// closes sent (when set).
	deferred  func() (ntstatus.Status, []byte, []byte)
	sendAfter <-chan struct{}
	sent      chan<- struct{}
	// enc is the session whose key decrypted the request (nil: it came
	// in the clear); the response goes encrypted with it.
	enc *session
}

// handleMessage serves one SMB2 request of a frame.
func (c *conn) handleMessage(ctx context.Context, h header, msg []byte, rel *related, first bool, enc *session) (*response, error) {
	if h.Flags&flagResponse != 0 {
		return nil, fmt.Errorf("smb: response sent to the server: %w", errDisconnect)
	}
	if h.Command == cmdCancel {
		c.cancelRequest(h) // never answered (MS-SMB2 3.3.5.16)
		return nil, nil
	}
	if err := c.consumeCredits(h); err != nil {
		return nil, err
	}
	if !c.negotiated && h.Command != cmdNegotiate {
		return nil, fmt.Errorf("smb: command %#x before NEGOTIATE: %w", h.Command, errDisconnect)
	}
	resp := &response{hdr: header{
		Command: h.Command, Flags: flagResponse, MessageID: h.MessageID,
		CreditCharge: h.CreditCharge, TreeID: h.TreeID, SessionID: h.SessionID,
	}}
	if h.Flags&flagRelated != 0 {
		resp.hdr.Flags |= flagRelated
		if first || !rel.any {
			// No session or tree to inherit (MS-SMB2 3.3.5.2.7.2); the
			// answer is signed when the header names a session that
			// signs, as any other error of the session's.
			resp.hdr.Credits = c.grantCredits(h.Credits)
			s := c.sessions[h.SessionID]
			if s == nil || !s.valid.Load() {
				s = rel.signer // smbd signs with the chain's last key; Samba's client checks so
			}
			if s != nil && s.valid.Load() && enc == nil && h.Command != cmdSessionSetup {
				resp.sess, resp.sign = s, h.Flags&flagSigned != 0 || s.signingRequired
			}
			return c.fail(resp, ntstatus.InvalidParameter), nil
		}
		h.SessionID, h.TreeID = rel.sessionID, rel.treeID
		resp.hdr.SessionID, resp.hdr.TreeID = h.SessionID, h.TreeID
	} else {
		*rel = related{signer: rel.signer}
	}
	req := &request{hdr: h, msg: msg, rel: rel, enc: enc}
	status, out, err := c.dispatch(ctx, req, resp)
	if err != nil {
		return nil, err
	}
	resp.hdr.Credits = c.grantCredits(h.Credits)
	if req.sess != nil && h.Command != cmdSessionSetup {
		rel.signer = req.sess
		resp.sess = req.sess
		// An encrypted reply is not signed (MS-SMB2 3.3.4.1.1).
		resp.sign = enc == nil && (h.Flags&flagSigned != 0 || req.sess.signingRequired)
	}
	if req.deferred != nil {
		c.goDeferred(resp, req, enc)
		return nil, nil
	}
	if status.IsError() {
		c.log.Debug("smb: request failed", "command", h.Command, "message_id", h.MessageID, "status", status.String())
	}
	// A request without a session leaves none to the related requests
	// after it: they fail STATUS_INVALID_PARAMETER (MS-SMB2 3.3.5.2.7.2,
	// smbtorture smb2.compound.invalid2).
	rel.any, rel.sessionID, rel.treeID = status != ntstatus.UserSessionDeleted, resp.hdr.SessionID, resp.hdr.TreeID
	if status.IsError() && h.Command == cmdCreate {
		rel.status = status
	}
	resp.hdr.Status = uint32(status)
	if status == ntstatus.UserSessionDeleted && h.Flags&flagSigned != 0 {
		// The session and its key are gone: the response to a signed
		// request keeps the SIGNED flag with no signature, which clients
		// accept for this status only (Samba's smbXcli checks the flag,
		// then skips the signature).
		resp.hdr.Flags |= flagSigned
	}
	if status == ntstatus.Pending {
		// An interim response: the final one follows from the pending
		// request's goroutine (async.go).
		resp.hdr.Flags |= flagAsync
		resp.hdr.AsyncID = req.asyncID
	}
	withData := status == ntstatus.Success || status == ntstatus.BufferOverflow ||
		(h.Command == cmdSessionSetup && status == ntstatus.MoreProcessingRequired)
	if !withData && out == nil {
		return c.fail(resp, status), nil
	}
	resp.body = out
	resp.onSent = req.onSent
	resp.frame = req.frame
	return resp, nil
}

// goDeferred computes and sends a response on a goroutine (a READ alone in
// its frame): the header is resp's, status and body come from
// req.deferred, and it is sent in the order req.sendAfter and req.sent
// give. The goroutine gives back the read slot and buffer and is waited
// for when the connection closes.
func (c *conn) goDeferred(resp *response, req *request, enc *session) {
	c.pwg.Add(1)
	go func() {
		defer c.pwg.Done()
		defer func() { <-c.readSlots }()
		if req.sent != nil {
			defer close(req.sent)
		}
		st, body, frame := req.deferred()
		defer c.srv.putReadBuf(frame)
		if req.sendAfter != nil {
			<-req.sendAfter
		}
		resp.hdr.Status = uint32(st)
		if st == ntstatus.Success {
			resp.body, resp.frame = body, frame[:headerSize+len(body)]
		} else {
			c.log.Debug("smb: request failed", "command", resp.hdr.Command, "message_id", resp.hdr.MessageID, "status", st.String())
			c.fail(resp, st)
		}
		if err := c.send(c.encodeResponses([]*response{resp}), enc); err != nil {
			c.log.Debug("smb: sending a read's response", "err", err)
		}
	}()
}

// fail turns resp into an error response (MS-SMB2 2.2.2).
func (c *conn) fail(resp *response, status ntstatus.Status) *response {
	resp.hdr.Status = uint32(status)
	resp.body = []byte{9, 0, 0, 0, 0, 0, 0, 0, 0}
	return resp
}

// dispatch checks the session, signature and tree a command needs and runs
// its handler.
func (c *conn) dispatch(ctx context.Context, req *request, resp *response) (ntstatus.Status, []byte, error) {
	h := req.hdr
	switch h.Command {
	case cmdNegotiate:
		return c.negotiate(req)
	case cmdSessionSetup:
		return c.sessionSetup(ctx, req, resp)
	case cmdEcho:
		if _, err := body(req.msg, 4); err != nil {
			return ntstatus.InvalidParameter, nil, nil
		}
		if s := c.sessions[h.SessionID]; s != nil && s.valid.Load() {
			req.sess = s
		}
		return ntstatus.Success, []byte{4, 0, 0, 0}, nil
	}
	s := c.sessions[h.SessionID]
	if s == nil {
		return ntstatus.UserSessionDeleted, nil, nil
	}
	// The session's requests are served one at a time, whichever of its
	// channels they come on (channel.go).
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.valid.Load() {
		return ntstatus.UserSessionDeleted, nil, nil
	}
	switch {
	case req.enc != nil && req.enc != s:
		// Encrypted under another session's key: that session's key
		// does not speak for this one (MS-SMB2 3.3.5.2.1.1).
		return ntstatus.AccessDenied, nil, nil
	case req.enc != nil:
		// Encryption authenticates the request; it carries no signature.
	case s.encryptData:
		return ntstatus.AccessDenied, nil, nil // MS-SMB2 3.3.5.2.9
	case s.signer != nil:
		if h.Flags&flagSigned != 0 {
			if signatureOf(s.signerOn(c), req.msg) != h.Signature {
				c.log.Warn("smb: bad message signature", "command", h.Command)
				return ntstatus.AccessDenied, nil, nil
			}
		} else if s.signingRequired {
			return ntstatus.AccessDenied, nil, nil
		}
	}
	req.sess = s
	switch h.Command {
	case cmdLogoff:
		return c.logoff(ctx, req)
	case cmdTreeConnect:
		return c.treeConnect(ctx, req, resp)
	}
	t := s.trees[h.TreeID]
	if t == nil {
		return ntstatus.NetworkNameDeleted, nil, nil
	}
	req.tree = t
	if req.rel != nil && req.rel.status.IsError() && h.Flags&flagRelated != 0 {
		return req.rel.status, nil, nil
	}
	switch h.Command {
	case cmdTreeDisconnect:
		return c.treeDisconnect(ctx, req)
	case cmdCreate:
		return c.create(ctx, req)
	case cmdClose:
		return c.closeFile(ctx, req)
	case cmdFlush:
		return c.flush(ctx, req)
	case cmdRead:
		return c.read(ctx, req)
	case cmdWrite:
		return c.write(ctx, req)
	case cmdLock:
		return c.lock(ctx, req)
	case cmdIoctl:
		return c.ioctl(ctx, req)
	case cmdQueryDirectory:
		return c.queryDirectory(ctx, req)
	case cmdQueryInfo:
		return c.queryInfo(ctx, req)
	case cmdSetInfo:
		return c.setInfo(ctx, req)
	case cmdChangeNotify:
		return c.changeNotify(ctx, req)
	case cmdOplockBreak:
		if c.srv.cfg.Caching == nil {
			// No oplock or lease is ever granted, so there is
			// nothing to acknowledge (MS-SMB2 3.3.5.22).
			return ntstatus.InvalidDeviceState, nil, nil
		}
		return c.oplockBreak(ctx, req)
	}
	return ntstatus.NotSupported, nil, nil
}
