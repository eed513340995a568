package smb

import (
	"bytes"
	"context"
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
// (MS-SMB2 3.3.4.1.1). A binding in progress on c has no channel yet: its
// messages use the session's key, Session.SigningKey.
func (s *session) signerOn(c *conn) signer {
	s.chmu.Lock()
	defer s.chmu.Unlock()
	if sg, ok := s.channels[c]; ok {
		return sg
	}
	return s.signer
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
	s.closeAll(ctx, c.srv, c.log)
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
func (c *conn) bindSession(req *request, resp *response, b, blob []byte) (ntstatus.Status, []byte, error) {
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
	case s.hasChannel(c):
		return ntstatus.RequestNotAccepted, nil, nil
	}
	// Messages of the binding are signed with the session's key.
	req.sess = s
	resp.sess, resp.sign = s, true
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
	sg, err := newSigner(c.dialect, c.signAlg, res.SessionKey, bd.preauth[:])
	if err != nil {
		return 0, nil, err
	}
	s.addChannel(c, sg)
	c.sessions[id] = s
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
