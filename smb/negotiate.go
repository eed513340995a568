package smb

import (
	"bytes"
	"crypto/rand"
	"crypto/sha512"
	"fmt"
	"slices"

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
		c.dialect, c.negotiated = dialect202, true
		c.maxIO, c.maxRead = ioLimits(dialect202)
	default:
		return nil, fmt.Errorf("smb: SMB1 client offers no SMB2 dialect: %w", errDisconnect)
	}
	// The SMB1 request used message id 0.
	c.seqLo = 1
	body := c.negotiateBody(c.dialect, nil, 0)
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
	var nctx uint16
	c.signAlg = signAESCMAC
	if best == dialect311 {
		off, n := le.Uint32(b[28:]), int(le.Uint16(b[32:]))
		nc, err := parseNegotiateContexts(req.msg, off, n)
		if err != nil || !nc.preauthSHA512 {
			return ntstatus.InvalidParameter, nil, nil
		}
		salt := make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return 0, nil, err
		}
		// SMB2_PREAUTH_INTEGRITY_CAPABILITIES: one algorithm, SHA-512.
		data := []byte{1, 0, 32, 0, byte(hashSHA512), 0}
		data = append(data, salt...)
		contexts, nctx = appendContext(nil, ctxPreauthIntegrity, data), 1
		if nc.ciphers != nil {
			// GCM before CCM, whatever the client's order (as Windows).
			for _, want := range []uint16{cipherAES128GCM, cipherAES128CCM} {
				if c.cipher == 0 && slices.Contains(nc.ciphers, want) {
					c.cipher = want
				}
			}
			// No common cipher: one cipher, 0 (MS-SMB2 3.3.5.4).
			contexts, nctx = appendContext(contexts, ctxEncryption, le.AppendUint16([]byte{1, 0}, c.cipher)), nctx+1
		}
		if nc.signing != nil {
			// The client's first choice among those known.
			for _, alg := range nc.signing {
				if alg == signHMACSHA256 || alg == signAESCMAC || alg == signAESGMAC {
					c.signAlg = alg
					break
				}
			}
			contexts, nctx = appendContext(contexts, ctxSigning, le.AppendUint16([]byte{1, 0}, c.signAlg)), nctx+1
		}
	} else if best >= dialect300 && c.clientCaps&capEncryption != 0 {
		c.cipher = cipherAES128CCM
	}
	c.dialect, c.negotiated = best, true
	c.srv.clients.add(c)
	c.maxIO, c.maxRead = ioLimits(best)
	out := c.negotiateBody(best, contexts, nctx)
	if best == dialect311 {
		// The preauth hash covers this request and the response, which is
		// exactly what handleFrame will send (a NEGOTIATE is never
		// compounded or signed).
		c.preauth = preauthHash(c.preauth, req.msg)
		req.onSent = func(m []byte) { c.preauth = preauthHash(c.preauth, m) }
	}
	return ntstatus.Success, out, nil
}

// negotiateContexts is what a 3.1.1 NEGOTIATE request offers.
type negotiateContexts struct {
	preauthSHA512 bool
	ciphers       []uint16 // nil: no encryption context
	signing       []uint16 // nil: no signing context
}

// parseNegotiateContexts walks the negotiate contexts of a 3.1.1 request.
func parseNegotiateContexts(msg []byte, off uint32, n int) (negotiateContexts, error) {
	var nc negotiateContexts
	if off < headerSize || int(off) > len(msg) {
		return nc, errMalformed
	}
	b := msg[off:]
	for i := 0; i < n; i++ {
		if len(b) < 8 {
			return nc, errMalformed
		}
		typ, size := le.Uint16(b), int(le.Uint16(b[2:]))
		if len(b) < 8+size {
			return nc, errMalformed
		}
		data := b[8 : 8+size]
		switch typ {
		case ctxPreauthIntegrity:
			if len(data) < 4 {
				return nc, errMalformed
			}
			ids, err := uint16List(data, 4)
			if err != nil {
				return nc, err
			}
			nc.preauthSHA512 = nc.preauthSHA512 || slices.Contains(ids, hashSHA512)
		case ctxEncryption:
			ids, err := uint16List(data, 2)
			if err != nil {
				return nc, err
			}
			nc.ciphers = append(make([]uint16, 0, len(ids)), ids...)
		case ctxSigning:
			ids, err := uint16List(data, 2)
			if err != nil {
				return nc, err
			}
			nc.signing = append(make([]uint16, 0, len(ids)), ids...)
		}
		next := align8(8 + size)
		if i < n-1 && next > len(b) {
			return nc, errMalformed
		}
		b = b[min(next, len(b)):]
	}
	return nc, nil
}

// uint16List reads a count (the first two bytes of data) and that many
// 16-bit ids starting at offset start.
func uint16List(data []byte, start int) ([]uint16, error) {
	if len(data) < 2 {
		return nil, errMalformed
	}
	count := int(le.Uint16(data))
	if len(data) < start+2*count {
		return nil, errMalformed
	}
	ids := make([]uint16, count)
	for i := range ids {
		ids[i] = le.Uint16(data[start+2*i:])
	}
	return ids, nil
}

// appendContext appends one negotiate context, 8-byte aligned after the
// one before it.
func appendContext(contexts []byte, typ uint16, data []byte) []byte {
	contexts = appendPad(contexts)
	contexts = le.AppendUint16(contexts, typ)
	contexts = le.AppendUint16(contexts, uint16(len(data)))
	contexts = append(contexts, 0, 0, 0, 0)
	return append(contexts, data...)
}

// negotiateBody builds a NEGOTIATE response body for dialect.
func (c *conn) negotiateBody(dialect uint16, contexts []byte, count uint16) []byte {
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
	le.PutUint32(b[24:], c.serverCaps(dialect))
	io, rd := ioLimits(dialect)
	le.PutUint32(b[28:], io) // MaxTransactSize
	le.PutUint32(b[32:], rd) // MaxReadSize
	le.PutUint32(b[36:], io) // MaxWriteSize
	le.PutUint64(b[40:], filetime(c.srv.now()))
	le.PutUint64(b[48:], 0)
	le.PutUint16(b[56:], headerSize+64)
	le.PutUint16(b[58:], uint16(len(token)))
	b = append(b, token...)
	if len(contexts) > 0 {
		for (headerSize+len(b))%8 != 0 {
			b = append(b, 0)
		}
		le.PutUint16(b[6:], count)
		le.PutUint32(b[60:], uint32(headerSize+len(b)))
		b = append(b, contexts...)
	}
	return b
}

// serverCaps are the capabilities the server announces for dialect (in
// NEGOTIATE and again in VALIDATE_NEGOTIATE_INFO): large MTU from 2.1,
// encryption for 3.0 and 3.0.2 clients that can encrypt (3.1.1 negotiates
// it in a context instead).
func (c *conn) serverCaps(dialect uint16) uint32 {
	var caps uint32
	if dialect != dialect202 {
		caps |= capLargeMTU
	}
	if (dialect == dialect300 || dialect == dialect302) && c.cipher != 0 {
		caps |= capEncryption
	}
	if dialect != dialect202 && c.srv.cfg.Caching != nil {
		caps |= capLeasing // leases from SMB 2.1 on, as smbd (lease.go)
	}
	if dialect >= dialect300 && c.srv.cfg.Caching != nil && c.clientCaps&capDirectoryLeasing != 0 {
		caps |= capDirectoryLeasing // to a client that supports it (dirlease.go)
	}
	if dialect >= dialect300 {
		caps |= capMultiChannel // sessions bind to further connections (channel.go)
	}
	return caps
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

// ioLimits are the transfer sizes a dialect gets (MaxTransactSize and
// MaxWriteSize, MaxReadSize): SMB 2.0.2, and the wildcard answer that
// may lead to it, stay within 64 KiB; later dialects take larger ones.
func ioLimits(dialect uint16) (io, rd uint32) {
	if dialect == dialect202 || dialect == dialectWildcard {
		return smallIO, smallIO
	}
	return maxIO, maxRead
}
