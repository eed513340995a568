package smb

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"sync"

	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// Multichannel (MS-SMB2 3.3.5.5.2): a 3.x client may bind a session set up
// on one connection to further connections of the same client (the same
// ClientGuid and dialect). Each bound connection is a channel of the
// session with a signing key of its own; the session's trees and opens are
// reachable on every channel, and it ends when it is logged off or its last
// channel's connection closes. A session's requests are served one at a
// time whichever channel they come on (session.mu).

const (
	// sessionFlagBinding is SMB2_SESSION_FLAG_BINDING.
	sessionFlagBinding = 0x01
	// capMultiChannel is SMB2_GLOBAL_CAP_MULTI_CHANNEL.
	capMultiChannel uint32 = 0x08
)

// maxChannels bounds the channels of a session, as Windows does
// (smbtorture's multichannel num_channels expects the 33rd binding to fail
// with STATUS_INSUFFICIENT_RESOURCES).
const maxChannels = 32

// fsctlQueryNetworkInterfaceInfo is FSCTL_QUERY_NETWORK_INTERFACE_INFO.
const fsctlQueryNetworkInterfaceInfo uint32 = 0x001401FC

// networkInterfaces answers FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2
// 3.3.5.15.11) with one NETWORK_INTERFACE_INFO: the address this
// connection reached, which is the one the server listens on (no other
// address of the host is disclosed), without RSS or RDMA, so clients open
// no further channels to it on their own.
func (c *conn) networkInterfaces(maxOut uint32) (ntstatus.Status, []byte) {
	if c.dialect < dialect300 {
		return ntstatus.NotSupported, nil
	}
	ap, err := netip.ParseAddrPort(c.nc.LocalAddr().String())
	if err != nil {
		return ntstatus.NotSupported, nil // not an IP listener
	}
	const infoSize = 152
	if maxOut < infoSize {
		return ntstatus.BufferTooSmall, nil
	}
	b := make([]byte, infoSize)
	le.PutUint32(b[4:], 1)               // IfIndex
	le.PutUint64(b[16:], 10_000_000_000) // LinkSpeed: 10 Gbit/s, a figure for the loopback
	sa := b[24:]
	if ip := ap.Addr().Unmap(); ip.Is4() {
		le.PutUint16(sa, 0x0002) // InterNetwork
		a4 := ip.As4()
		copy(sa[4:8], a4[:])
	} else {
		le.PutUint16(sa, 0x0017) // InterNetworkV6
		a16 := ip.As16()
		copy(sa[8:24], a16[:])
	}
	return ntstatus.Success, b
}

// binding is a session binding in progress on a connection: the NTLM
// challenge sent and, for 3.1.1, the channel's preauth integrity hash.
type binding struct {
	challenge *ntlm.Challenge
	mechTypes []byte // the SPNEGO MechTypeList of the first leg
	preauth   [64]byte
}

// addSession enters s in the server's table, where binding connections
// find it.
func (srv *Server) addSession(s *session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.sessions[s.id] = s
}

// forgetSession removes s from the server's table.
func (srv *Server) forgetSession(s *session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.sessions[s.id] == s {
		delete(srv.sessions, s.id)
	}
}

func (srv *Server) lookupSession(id uint64) *session {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.sessions[id]
}

// addChannel makes c a channel of s, signing with sg.
func (s *session) addChannel(c *conn, sg signer) {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	s.channels[c] = sg
}

// signerOn is the key s signs and checks messages with on c: the channel's
// (MS-SMB2 3.3.4.1.1); nil when c is not a channel of s.
func (s *session) signerOn(c *conn) signer {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	return s.channels[c]
}

// channelCount is how many channels s has.
func (s *session) channelCount() int {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	return len(s.channels)
}

// hasChannel reports whether c is a channel of s.
func (s *session) hasChannel(c *conn) bool {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	_, ok := s.channels[c]
	return ok
}

// endPending ends, on every channel, the pending requests match selects
// (conn.endPending).
func (s *session) endPending(match func(p *pendingOp) bool) {
	s.chmu.Lock()
	conns := make([]*conn, 0, len(s.channels))
	for c := range s.channels {
		conns = append(conns, c)
	}
	s.chmu.Unlock()
	for _, c := range conns {
		c.endPending(match, 0)
	}
}

// dropChannel ends c's channel of s, when c closes: the session's opens
// close with its last channel.
func (s *session) dropChannel(ctx context.Context, c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chmu.Lock()
	delete(s.channels, c)
	last := len(s.channels) == 0
	s.chmu.Unlock()
	if !last {
		return
	}
	s.disconnectAll(ctx, c.srv) // durable opens stay, disconnected
	s.valid.Store(false)
	c.srv.forgetSession(s)
}

// bindSession serves a SESSION_SETUP with SMB2_SESSION_FLAG_BINDING (MS-SMB2
// 3.3.5.5.2): the session named must exist on another connection of the
// same client with the same dialect and cipher, the request must be signed
// with the session's key, and the user who authenticates (NTLMv2, two round
// trips as for a new session) must be the session's. The channel's signing
// key is derived from that authentication's session key (and, on 3.1.1,
// this connection's preauth hash), as Samba's client and smbd derive it.
func (c *conn) bindSession(req *request, resp *response, blob []byte) (ntstatus.Status, []byte, error) {
	id := req.hdr.SessionID
	switch {
	case c.dialect < dialect300:
		return ntstatus.RequestNotAccepted, nil, nil
	case id == 0:
		return ntstatus.InvalidParameter, nil, nil
	}
	s := c.srv.lookupSession(id)
	if s == nil || !s.valid.Load() || s.clientGUID != c.clientGUID {
		return ntstatus.UserSessionDeleted, nil, nil
	}
	switch {
	case s.dialect != c.dialect || s.cipher != c.cipher || s.signAlg != c.signAlg:
		return ntstatus.InvalidParameter, nil, nil
	case req.hdr.Flags&flagSigned == 0:
		return ntstatus.InvalidParameter, nil, nil
	case signatureOf(s.signer, req.msg) != req.hdr.Signature:
		c.log.Warn("smb: session binding with a bad signature", "session", id)
		return ntstatus.AccessDenied, nil, nil
	}
	// The request was signed with the session's key: so is every
	// response of the binding, errors too (clients require it), but the
	// last, which the channel's key signs.
	req.sess = s
	resp.sess, resp.sign, resp.signer = s, true, s.signer
	switch {
	case s.hasChannel(c):
		return ntstatus.RequestNotAccepted, nil, nil
	case s.channelCount() >= maxChannels:
		return ntstatus.InsufficientResources, nil, nil
	}
	token, wrapped, err := ntlm.Unwrap(blob)
	if err != nil {
		delete(c.binds, id)
		return ntstatus.LogonFailure, nil, nil
	}
	bd := c.binds[id]
	if bd == nil {
		if len(c.binds) >= 64 {
			return ntstatus.InsufficientResources, nil, nil
		}
		ch, err := c.newChallenge(token)
		if err != nil {
			return ntstatus.LogonFailure, nil, nil
		}
		bd = &binding{challenge: ch, mechTypes: bytes.Clone(ntlm.MechTypes(blob)), preauth: c.preauth}
		c.binds[id] = bd
		if c.dialect == dialect311 {
			bd.preauth = preauthHash(bd.preauth, req.msg)
			req.onSent = func(m []byte) { bd.preauth = preauthHash(bd.preauth, m) }
		}
		return ntstatus.MoreProcessingRequired, challengeBody(ch, wrapped), nil
	}
	delete(c.binds, id)
	if c.dialect == dialect311 {
		bd.preauth = preauthHash(bd.preauth, req.msg)
	}
	res, err := c.authenticate(bd.challenge, token)
	if err != nil {
		c.log.Info("smb: session binding refused", "session", id, "err", err)
		return ntstatus.LogonFailure, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.valid.Load() { // logged off meanwhile
		return ntstatus.UserSessionDeleted, nil, nil
	}
	if !strings.EqualFold(res.User, s.user) {
		return ntstatus.AccessDenied, nil, nil
	}
	if s.channelCount() >= maxChannels { // others bound meanwhile
		return ntstatus.InsufficientResources, nil, nil
	}
	sg, err := newSigner(c.dialect, c.signAlg, res.SessionKey, bd.preauth[:])
	if err != nil {
		return 0, nil, err
	}
	s.addChannel(c, sg)
	c.sessions[id] = s
	resp.signer = sg
	var flags uint16
	if s.encryptData {
		flags |= sessionFlagEncrypt
	}
	return ntstatus.Success, acceptBody(flags, wrapped, bd.mechTypes, blob, res), nil
}

// lockSequences are an open's LockSequenceArray (MS-SMB2 3.3.5.14): a
// client that resends a LOCK on another channel after losing the first
// (multichannel) marks it with a bucket (LockSequenceIndex, 1 to 64) and a
// number, and a request whose bucket holds that number already was done
// and is answered STATUS_SUCCESS without being done again. The server
// checks them on every 3.x connection, since it offers multichannel there.
type lockSequences struct {
	mu  sync.Mutex
	seq [64]uint8 // the number done, plus one; 0: the bucket is invalid
}

// check returns the bucket of a request's LockSequence (-1: none, it is
// not checked) and whether it is a replay. A request that is not a replay
// invalidates its bucket until it succeeds (done).
func (l *lockSequences) check(lockSequence uint32) (int, bool) {
	index, number := lockSequence>>4, uint8(lockSequence&0xf)
	if index < 1 || index > 64 {
		return -1, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := int(index - 1)
	if l.seq[b] == number+1 {
		return b, true
	}
	l.seq[b] = 0
	return b, false
}

// done records a request of bucket b that succeeded.
func (l *lockSequences) done(b int, lockSequence uint32) {
	if b < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq[b] = uint8(lockSequence&0xf) + 1
}
