package smb

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// session is one authenticated (or authenticating) user on a connection.
type session struct {
	id              uint64
	valid           bool // authentication completed
	challenge       *ntlm.Challenge
	spnego          bool
	preauth         [64]byte
	signer          signer
	signingRequired bool
	// crypto is set when the connection negotiated a cipher; encryptData
	// when every request must come encrypted and every response goes
	// encrypted (Config.EncryptData).
	crypto      *sessionCrypto
	encryptData bool
	user        string
	mechTypes   []byte // the SPNEGO MechTypeList, for the mechListMIC
	trees       map[uint32]*tree
	nextTree    uint32
	opens       map[uint64]*open // by volatile file id
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
	if b[2]&0x01 != 0 { // SMB2_SESSION_FLAG_BINDING: no multichannel
		return ntstatus.RequestNotAccepted, nil, nil
	}
	blob, err := buffer(req.msg, uint32(le.Uint16(b[12:])), uint32(le.Uint16(b[14:])))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
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
		var sc [8]byte
		if _, err := rand.Read(sc[:]); err != nil {
			return 0, nil, err
		}
		ch, err := ntlm.NewChallenge(token, sc, c.srv.now(), ntlm.Names{Computer: "BLOBSHARE", Domain: "WORKGROUP"})
		if err != nil {
			return ntstatus.LogonFailure, nil, nil
		}
		s = &session{id: c.srv.newSessionID(), challenge: ch, spnego: wrapped, preauth: c.preauth,
			trees: map[uint32]*tree{}, opens: map[uint64]*open{}, mechTypes: ntlm.MechTypes(blob)}
		c.sessions[s.id] = s
		resp.hdr.SessionID = s.id
		if c.dialect == dialect311 {
			s.preauth = preauthHash(s.preauth, req.msg)
			req.onSent = func(m []byte) { s.preauth = preauthHash(s.preauth, m) }
		}
		out := ch.Message
		if wrapped {
			out = ntlm.NegTokenResp(ntlm.AcceptIncomplete, out)
		}
		return ntstatus.MoreProcessingRequired, sessionSetupBody(0, out), nil
	case s == nil:
		return ntstatus.UserSessionDeleted, nil, nil
	case s.valid || s.challenge == nil:
		// Re-authentication is not supported.
		return ntstatus.RequestNotAccepted, nil, nil
	}
	if c.dialect == dialect311 {
		s.preauth = preauthHash(s.preauth, req.msg)
	}
	res, err := s.challenge.Authenticate(token, func(user string) (string, bool) {
		if strings.EqualFold(user, c.srv.cfg.Account) {
			return c.srv.cfg.Key, true
		}
		return "", false
	})
	s.challenge = nil
	if err != nil {
		delete(c.sessions, s.id)
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
			c.log.Info("smb: logon refused: the client cannot encrypt and --smb-encrypt requires it", "dialect", c.dialect)
			return ntstatus.AccessDenied, nil, nil
		}
		s.encryptData = true
		flags |= sessionFlagEncrypt
	}
	s.signer, s.valid, s.user = sg, true, res.User
	s.signingRequired = c.signingRequired || b[3]&byte(secSigningRequired) != 0
	req.sess = s
	// The final response is signed (MS-SMB2 3.3.4.1.1): the client checks
	// it with the key it derived.
	resp.sess, resp.sign = s, true
	var out []byte
	if wrapped {
		var mic []byte
		if s.mechTypes != nil && ntlm.HasMechListMIC(blob) {
			// The client protects the mechanism list: answer with the
			// server's MIC, which it checks (RFC 4178 5).
			mic = res.MechListMIC(s.mechTypes)
		}
		out = ntlm.NegTokenRespMIC(ntlm.AcceptCompleted, nil, mic)
	}
	return ntstatus.Success, sessionSetupBody(flags, out), nil
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
	c.endPending(func(p *pendingOp) bool { return p.sessionID == req.sess.id }, 0)
	req.sess.closeAll(ctx, c.srv, c.log)
	req.sess.valid = false
	delete(c.sessions, req.sess.id)
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
	c.endPending(func(p *pendingOp) bool { return p.open.tree == req.tree }, 0)
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
