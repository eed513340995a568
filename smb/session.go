package smb

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// session is one authenticated (or authenticating) user. It lives on the
// connection that set it up and on every connection bound to it
// (multichannel, channel.go): its channels.
type session struct {
	id uint64
	// mu serialises the requests of the session's channels: trees, opens
	// and their state change only under it (dispatch holds it).
	mu    sync.Mutex
	valid atomic.Bool // authentication completed, not logged off
	// What a binding connection must match (MS-SMB2 3.3.5.5.2): the first
	// connection's dialect, client GUID, cipher and signing algorithm.
	dialect, cipher, signAlg uint16
	clientGUID               [16]byte
	// chmu guards channels: the signer of each connection the session
	// is on (the first connection's is signer, Session.SigningKey).
	chmu            sync.Mutex
	channels        map[*conn]signer
	nextFile        uint64
	challenge       *ntlm.Challenge
	preauth         [64]byte
	signer          signer
	signingRequired bool
	// crypto is set when the connection negotiated a cipher; encryptData
	// when every request must come encrypted and every response goes
	// encrypted (Config.EncryptData).
	crypto      *sessionCrypto
	encryptData bool
	user        string
	// workstation is the client machine's name from NTLM's AUTHENTICATE
	// ("" when the client sends none, as go-smb2 does): the ClientName of
	// its opens, as Azure's List Handles reports the client machine.
	workstation string
	mechTypes   []byte // the SPNEGO MechTypeList, for the mechListMIC (a copy: request buffers are reused)
	trees       map[uint32]*tree
	nextTree    uint32
	// reauth is the challenge of a re-authentication in progress, and
	// reauthMech its SPNEGO MechTypeList (reauthenticate); under mu.
	reauth     *ntlm.Challenge
	reauthMech []byte
	opens      map[uint64]*open // by volatile file id
}

// tree is one TREE_CONNECT: a file share, or IPC$.
type tree struct {
	id      uint32
	share   string // the share's stored name
	shareID fs.FileID
	ipc     bool
}

// closeAll closes every open of the session.
func (s *session) closeAll(ctx context.Context, srv *Server, log *slog.Logger) {
	for id, o := range s.opens {
		if err := srv.closeOpen(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
			log.Debug("smb: closing open at session end", "path", o.path, "err", err)
		}
		delete(s.opens, id)
	}
}

// sessionSetup serves SESSION_SETUP (MS-SMB2 3.3.5.5): NTLMv2, raw or
// inside SPNEGO, in two round trips.
func (c *conn) sessionSetup(ctx context.Context, req *request, resp *response) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 25)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	blob, err := buffer(req.msg, uint32(le.Uint16(b[12:])), uint32(le.Uint16(b[14:])))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	if b[2]&sessionFlagBinding != 0 {
		return c.bindSession(req, resp, blob)
	}
	token, wrapped, err := ntlm.Unwrap(blob)
	if err != nil {
		return ntstatus.LogonFailure, nil, nil
	}
	s := c.sessions[req.hdr.SessionID]
	switch {
	case req.hdr.SessionID == 0:
		if len(c.sessions) >= 64 {
			return ntstatus.InsufficientResources, nil, nil
		}
		ch, err := c.newChallenge(token)
		if err != nil {
			return ntstatus.LogonFailure, nil, nil
		}
		s = &session{id: c.srv.newSessionID(), challenge: ch, preauth: c.preauth,
			trees: map[uint32]*tree{}, opens: map[uint64]*open{}, mechTypes: bytes.Clone(ntlm.MechTypes(blob)),
			dialect: c.dialect, cipher: c.cipher, signAlg: c.signAlg, clientGUID: c.clientGUID,
			channels: map[*conn]signer{}}
		c.sessions[s.id] = s
		c.srv.addSession(s)
		resp.hdr.SessionID = s.id
		if c.dialect == dialect311 {
			s.preauth = preauthHash(s.preauth, req.msg)
			req.onSent = func(m []byte) { s.preauth = preauthHash(s.preauth, m) }
		}
		return ntstatus.MoreProcessingRequired, challengeBody(ch, wrapped), nil
	case s == nil || !s.valid.Load() && s.challenge == nil:
		// Unknown, or logged off on another channel.
		return ntstatus.UserSessionDeleted, nil, nil
	case s.valid.Load():
		return c.reauthenticate(ctx, req, resp, s, token, wrapped, blob)
	}
	if c.dialect == dialect311 {
		s.preauth = preauthHash(s.preauth, req.msg)
	}
	res, err := c.authenticate(s.challenge, token)
	s.challenge = nil
	if err != nil {
		delete(c.sessions, s.id)
		c.srv.forgetSession(s)
		c.log.Info("smb: logon refused", "err", err)
		return ntstatus.LogonFailure, nil, nil
	}
	sg, err := newSigner(c.dialect, c.signAlg, res.SessionKey, s.preauth[:])
	if err != nil {
		return 0, nil, err
	}
	var flags uint16
	if c.cipher != 0 {
		if s.crypto, err = newSessionCrypto(c.dialect, c.cipher, res.SessionKey, s.preauth[:]); err != nil {
			return 0, nil, err
		}
	}
	if c.srv.cfg.EncryptData {
		if s.crypto == nil {
			// MS-SMB2 3.3.5.5.3: a client that cannot encrypt is refused
			// where encryption is required.
			delete(c.sessions, s.id)
			c.srv.forgetSession(s)
			c.log.Info("smb: logon refused: the client cannot encrypt and --smb-encrypt requires it", "dialect", c.dialect)
			return ntstatus.AccessDenied, nil, nil
		}
		s.encryptData = true
		flags |= sessionFlagEncrypt
	}
	s.mu.Lock()
	s.signer, s.user, s.workstation = sg, res.User, res.Workstation
	s.signingRequired = c.signingRequired || b[3]&byte(secSigningRequired) != 0
	s.addChannel(c, sg)
	s.valid.Store(true)
	s.mu.Unlock()
	req.sess = s
	c.closePrevious(ctx, le.Uint64(b[16:]), s) // PreviousSessionId
	// The final response is signed (MS-SMB2 3.3.4.1.1): the client checks
	// it with the key it derived.
	resp.sess, resp.sign = s, true
	return ntstatus.Success, acceptBody(flags, wrapped, s.mechTypes, blob, res), nil
}

// reauthenticate serves a SESSION_SETUP on a valid session of this
// connection: a re-authentication (MS-SMB2 3.3.5.5.2). The session stays
// usable meanwhile and keeps its keys (a re-authentication derives none).
// Its first leg gets a fresh challenge; its last one succeeds for the
// account (the user may be named in any case or domain, as at logon) or
// fails with the authentication's error, STATUS_LOGON_FAILURE, and then,
// as MS-SMB2 3.3.5.5.3 says, the session ends: its opens close and later
// requests on it get STATUS_USER_SESSION_DELETED. Responses are signed
// with the session's key when the request was or the session requires it.
func (c *conn) reauthenticate(ctx context.Context, req *request, resp *response, s *session, token []byte, wrapped bool, blob []byte) (ntstatus.Status, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.valid.Load() {
		return ntstatus.UserSessionDeleted, nil, nil
	}
	// The session's key speaks for the request as for any other
	// (dispatch): encrypted under it, or signed with it when signed, so
	// nobody without the key can end the session with a wrong password.
	switch {
	case req.enc != nil && req.enc != s:
		return ntstatus.AccessDenied, nil, nil
	case req.enc != nil:
	case s.encryptData:
		return ntstatus.AccessDenied, nil, nil
	case req.hdr.Flags&flagSigned != 0 && signatureOf(s.signerOn(c), req.msg) != req.hdr.Signature:
		c.log.Warn("smb: bad message signature", "command", req.hdr.Command)
		return ntstatus.AccessDenied, nil, nil
	}
	req.sess, resp.sess = s, s
	resp.sign = req.enc == nil && (req.hdr.Flags&flagSigned != 0 || s.signingRequired)
	if s.reauth == nil {
		ch, err := c.newChallenge(token)
		if err != nil {
			c.endSession(ctx, s, resp)
			return ntstatus.LogonFailure, nil, nil
		}
		s.reauth, s.reauthMech = ch, bytes.Clone(ntlm.MechTypes(blob))
		return ntstatus.MoreProcessingRequired, challengeBody(ch, wrapped), nil
	}
	ch, mech := s.reauth, s.reauthMech
	s.reauth, s.reauthMech = nil, nil
	res, err := c.authenticate(ch, token)
	if err != nil {
		c.log.Info("smb: re-authentication refused; the session ends", "err", err)
		sign := resp.sign
		c.endSession(ctx, s, resp)
		// The refusal is still the session's answer: signed with its key
		// as the request was, as smbd signs it (Samba's client takes an
		// unsigned answer to a signed request for STATUS_ACCESS_DENIED;
		// smbtorture smb2.notify.invalid-reauth).
		resp.sess, resp.sign = s, sign
		return ntstatus.LogonFailure, nil, nil
	}
	s.user = res.User
	var flags uint16
	if s.encryptData {
		flags |= sessionFlagEncrypt
	}
	return ntstatus.Success, acceptBody(flags, wrapped, mech, blob, res), nil
}

// endSession ends s as LOGOFF does (its pending requests, opens and
// trees go) after a failed re-authentication; s.mu is held. It leaves the
// failure response, resp, unsigned; the caller signs it with the
// session's key where the answer must be (reauthenticate).
func (c *conn) endSession(ctx context.Context, s *session, resp *response) {
	resp.sess, resp.sign = nil, false
	s.endPending(func(p *pendingOp) bool { return p.sessionID == s.id })
	s.closeAll(ctx, c.srv, c.log)
	s.valid.Store(false)
	c.srv.forgetSession(s)
	delete(c.sessions, s.id)
}

// newChallenge answers the first leg of an NTLM logon (a new session or a
// binding) with a fresh server challenge.
func (c *conn) newChallenge(token []byte) (*ntlm.Challenge, error) {
	var sc [8]byte
	if _, err := rand.Read(sc[:]); err != nil {
		return nil, err
	}
	return ntlm.NewChallenge(token, sc, c.srv.now(), ntlm.Names{Computer: "BLOBSHARE", Domain: "WORKGROUP"})
}

// authenticate checks the second leg against the account: its name in
// any domain, its key as the password.
func (c *conn) authenticate(ch *ntlm.Challenge, token []byte) (ntlm.Result, error) {
	return ch.Authenticate(token, func(user string) (string, bool) {
		if strings.EqualFold(user, c.srv.cfg.Account) {
			return c.srv.cfg.Key, true
		}
		return "", false
	})
}

// challengeBody is the SESSION_SETUP response carrying the challenge,
// in SPNEGO when the client wrapped its token.
func challengeBody(ch *ntlm.Challenge, wrapped bool) []byte {
	out := ch.Message
	if wrapped {
		out = ntlm.NegTokenResp(ntlm.AcceptIncomplete, out)
	}
	return sessionSetupBody(0, out)
}

// acceptBody is the final SESSION_SETUP response: with SPNEGO, an
// accept-completed token, with the server's mechListMIC when the client
// protected the mechanism list of its first token (mechTypes; RFC 4178 5),
// which it checks.
func acceptBody(flags uint16, wrapped bool, mechTypes, blob []byte, res ntlm.Result) []byte {
	var out []byte
	if wrapped {
		var mic []byte
		if mechTypes != nil && ntlm.HasMechListMIC(blob) {
			mic = res.MechListMIC(mechTypes)
		}
		out = ntlm.NegTokenRespMIC(ntlm.AcceptCompleted, nil, mic)
	}
	return sessionSetupBody(flags, out)
}

func sessionSetupBody(flags uint16, token []byte) []byte {
	b := make([]byte, 8, 8+len(token))
	le.PutUint16(b, 9)
	le.PutUint16(b[2:], flags)
	le.PutUint16(b[4:], headerSize+8)
	le.PutUint16(b[6:], uint16(len(token)))
	if len(token) == 0 {
		return append(b, 0)
	}
	return append(b, token...)
}

// logoff serves LOGOFF: the session's opens close.
func (c *conn) logoff(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	if _, err := body(req.msg, 4); err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	s := req.sess
	s.endPending(func(p *pendingOp) bool { return p.sessionID == s.id })
	s.disconnectAll(ctx, c.srv) // durable opens stay, disconnected (as smbd)
	s.valid.Store(false)
	c.srv.forgetSession(s)
	delete(c.sessions, s.id)
	return ntstatus.Success, []byte{4, 0, 0, 0}, nil
}

// treeConnect serves TREE_CONNECT for \\server\share (any server name).
func (c *conn) treeConnect(ctx context.Context, req *request, resp *response) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 9)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	raw, err := buffer(req.msg, uint32(le.Uint16(b[4:])), uint32(le.Uint16(b[6:])))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	path, err := fromUTF16(raw)
	if err != nil || !strings.HasPrefix(path, `\\`) {
		return ntstatus.BadNetworkName, nil, nil
	}
	parts := strings.Split(path[2:], `\`)
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return ntstatus.BadNetworkName, nil, nil
	}
	s := req.sess
	if len(s.trees) >= 1024 {
		return ntstatus.InsufficientResources, nil, nil
	}
	t := &tree{}
	shareType := byte(1) // SMB2_SHARE_TYPE_DISK
	if strings.EqualFold(parts[1], "IPC$") {
		t.ipc, t.share = true, "IPC$"
		shareType = 2 // SMB2_SHARE_TYPE_PIPE
	} else {
		a, err := c.srv.cfg.FS.GetShare(ctx, parts[1])
		if err != nil {
			if errors.Is(err, fs.ErrShareNotFound) || errors.Is(err, fs.ErrNotFound) || errors.Is(err, fs.ErrInvalidName) {
				return ntstatus.BadNetworkName, nil, nil
			}
			return ntstatus.FromError(err), nil, nil
		}
		t.share, t.shareID = a.Name, a.ID
	}
	s.nextTree++
	t.id = s.nextTree
	s.trees[t.id] = t
	resp.hdr.TreeID = t.id
	out := make([]byte, 16)
	le.PutUint16(out, 16)
	out[2] = shareType
	shareFlags := uint32(0x00000030) // SMB2_SHAREFLAG_NO_CACHING: nothing may be cached offline
	if s.encryptData {
		shareFlags |= shareFlagEncryptData
	}
	le.PutUint32(out[4:], shareFlags)
	le.PutUint32(out[8:], 0)
	le.PutUint32(out[12:], 0x001F01FF)
	return ntstatus.Success, out, nil
}

// treeDisconnect serves TREE_DISCONNECT: the tree's opens close.
func (c *conn) treeDisconnect(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	if _, err := body(req.msg, 4); err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	s := req.sess
	s.endPending(func(p *pendingOp) bool { return p.open.tree == req.tree })
	for id, o := range s.opens {
		if o.tree == req.tree {
			if err := c.srv.closeOpen(ctx, o); err != nil {
				c.log.Debug("smb: closing open at tree disconnect", "path", o.path, "err", err)
			}
			delete(s.opens, id)
		}
	}
	delete(s.trees, req.tree.id)
	return ntstatus.Success, []byte{4, 0, 0, 0}, nil
}
