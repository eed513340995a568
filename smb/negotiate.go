package smb

import (
	"bytes"
	"crypto/rand"
	"crypto/sha512"
	"fmt"

	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// Security modes and capabilities (MS-SMB2 2.2.3, 2.2.4).
const (
	secSigningEnabled  uint16 = 0x1
	secSigningRequired uint16 = 0x2

	capDFS      uint32 = 0x01
	capLargeMTU uint32 = 0x04
)

// Negotiate context types.
const (
	ctxPreauthIntegrity uint16 = 1
	hashSHA512          uint16 = 1
)

// smb1Negotiate answers the SMB1 multi-protocol NEGOTIATE that smbclient
// and Windows send first (MS-SMB2 3.3.5.3.1): with SMB2 NEGOTIATE response
// for dialect 2.??? (the client then negotiates again in SMB2), or 2.0.2
// directly for clients that offer only that.
func (c *conn) smb1Negotiate(msg []byte) ([]byte, error) {
	if len(msg) < 35 || msg[4] != 0x72 {
		return nil, fmt.Errorf("smb: SMB1 command %#x: %w", msg[min(4, len(msg)-1)], errDisconnect)
	}
	var wildcard, smb202 bool
	for _, d := range bytes.Split(msg[35:], []byte{0}) {
		d = bytes.TrimPrefix(d, []byte{2})
		switch string(d) {
		case "SMB 2.???":
			wildcard = true
		case "SMB 2.002":
			smb202 = true
		}
	}
	switch {
	case wildcard:
		c.dialect = dialectWildcard
	case smb202:
		c.dialect, c.negotiated, c.maxIO = dialect202, true, smallIO
	default:
		return nil, fmt.Errorf("smb: SMB1 client offers no SMB2 dialect: %w", errDisconnect)
	}
	// The SMB1 request used message id 0.
	c.seqLo = 1
	body := c.negotiateBody(c.dialect, nil)
	hdr := header{Command: cmdNegotiate, Flags: flagResponse, Credits: c.grantCredits(1)}
	out := make([]byte, headerSize, headerSize+len(body))
	hdr.encode(out)
	return append(out, body...), nil
}

// negotiate serves SMB2 NEGOTIATE (MS-SMB2 3.3.5.4).
func (c *conn) negotiate(req *request) (ntstatus.Status, []byte, error) {
	if c.negotiated {
		return 0, nil, fmt.Errorf("smb: second NEGOTIATE: %w", errDisconnect)
	}
	b, err := body(req.msg, 36)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	count := int(le.Uint16(b[2:]))
	if count == 0 || len(b) < 36+2*count {
		return ntstatus.InvalidParameter, nil, nil
	}
	c.clientSecMode = le.Uint16(b[4:])
	c.clientCaps = le.Uint32(b[8:])
	copy(c.clientGUID[:], b[12:28])
	var best uint16
	for i := 0; i < count; i++ {
		d := le.Uint16(b[36+2*i:])
		c.clientDialects = append(c.clientDialects, d)
		switch d {
		case dialect202, dialect210, dialect300, dialect302, dialect311:
			best = max(best, d)
		}
	}
	if best == 0 {
		return ntstatus.NotSupported, nil, nil
	}
	var contexts []byte
	if best == dialect311 {
		off, n := le.Uint32(b[28:]), int(le.Uint16(b[32:]))
		ok, err := hasPreauthSHA512(req.msg, off, n)
		if err != nil || !ok {
			return ntstatus.InvalidParameter, nil, nil
		}
		salt := make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return 0, nil, err
		}
		// SMB2_PREAUTH_INTEGRITY_CAPABILITIES: one algorithm, SHA-512.
		data := []byte{1, 0, 32, 0, byte(hashSHA512), 0}
		data = append(data, salt...)
		contexts = le.AppendUint16(nil, ctxPreauthIntegrity)
		contexts = le.AppendUint16(contexts, uint16(len(data)))
		contexts = append(contexts, 0, 0, 0, 0)
		contexts = append(contexts, data...)
	}
	c.dialect, c.negotiated = best, true
	c.maxIO = smallIO
	if best != dialect202 {
		c.maxIO = maxIO
	}
	out := c.negotiateBody(best, contexts)
	if best == dialect311 {
		// The preauth hash covers this request and the response, which is
		// exactly what handleFrame will send (a NEGOTIATE is never
		// compounded or signed).
		c.preauth = preauthHash(c.preauth, req.msg)
		req.onSent = func(m []byte) { c.preauth = preauthHash(c.preauth, m) }
	}
	return ntstatus.Success, out, nil
}

// hasPreauthSHA512 walks the negotiate contexts of a 3.1.1 request and
// reports whether a preauth integrity context offers SHA-512.
func hasPreauthSHA512(msg []byte, off uint32, n int) (bool, error) {
	if off < headerSize || int(off) > len(msg) {
		return false, errMalformed
	}
	b := msg[off:]
	found := false
	for i := 0; i < n; i++ {
		if len(b) < 8 {
			return false, errMalformed
		}
		typ, size := le.Uint16(b), int(le.Uint16(b[2:]))
		if len(b) < 8+size {
			return false, errMalformed
		}
		data := b[8 : 8+size]
		if typ == ctxPreauthIntegrity {
			if len(data) < 4 {
				return false, errMalformed
			}
			count := int(le.Uint16(data))
			if len(data) < 4+2*count {
				return false, errMalformed
			}
			for j := 0; j < count; j++ {
				if le.Uint16(data[4+2*j:]) == hashSHA512 {
					found = true
				}
			}
		}
		next := align8(8 + size)
		if i < n-1 && next > len(b) {
			return false, errMalformed
		}
		b = b[min(next, len(b)):]
	}
	return found, nil
}

// negotiateBody builds a NEGOTIATE response body for dialect.
func (c *conn) negotiateBody(dialect uint16, contexts []byte) []byte {
	token := ntlm.NegTokenInit()
	b := make([]byte, 64, 64+len(token)+8+len(contexts))
	le.PutUint16(b, 65)
	mode := secSigningEnabled
	if c.signingRequired {
		mode |= secSigningRequired
	}
	le.PutUint16(b[2:], mode)
	le.PutUint16(b[4:], dialect)
	copy(b[8:24], c.srv.guid[:])
	var caps uint32
	if dialect != dialect202 {
		caps |= capLargeMTU
	}
	le.PutUint32(b[24:], caps)
	io := uint32(smallIO)
	if dialect != dialect202 && dialect != dialectWildcard {
		io = maxIO
	}
	le.PutUint32(b[28:], io)
	le.PutUint32(b[32:], io)
	le.PutUint32(b[36:], io)
	le.PutUint64(b[40:], filetime(c.srv.now()))
	le.PutUint64(b[48:], 0)
	le.PutUint16(b[56:], headerSize+64)
	le.PutUint16(b[58:], uint16(len(token)))
	b = append(b, token...)
	if len(contexts) > 0 {
		for (headerSize+len(b))%8 != 0 {
			b = append(b, 0)
		}
		le.PutUint16(b[6:], 1)
		le.PutUint32(b[60:], uint32(headerSize+len(b)))
		b = append(b, contexts...)
	}
	return b
}

// preauthHash extends a preauth integrity hash with one message.
func preauthHash(prev [64]byte, msg []byte) [64]byte {
	h := sha512.New()
	h.Write(prev[:])
	h.Write(msg)
	var out [64]byte
	copy(out[:], h.Sum(nil))
	return out
}
