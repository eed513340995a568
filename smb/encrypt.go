package smb

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
)

// Ciphers (MS-SMB2 2.2.3.1.2) and signing algorithms (2.2.3.1.7).
const (
	cipherAES128CCM uint16 = 1
	cipherAES128GCM uint16 = 2

	signHMACSHA256 uint16 = 0
	signAESCMAC    uint16 = 1
	signAESGMAC    uint16 = 2
)

// Negotiate context types beyond preauth integrity.
const (
	ctxEncryption uint16 = 2
	ctxSigning    uint16 = 8
)

// Capabilities, session and share flags for encryption.
const (
	capEncryption          uint32 = 0x40
	sessionFlagEncrypt     uint16 = 0x0004
	shareFlagEncryptData   uint32 = 0x00008000
	transformHeaderSize           = 52
	transformFlagEncrypted        = 0x0001
)

var protoTransform = [4]byte{0xfd, 'S', 'M', 'B'}

// sessionCrypto holds a session's keys for SMB2 TRANSFORM messages:
// requests are opened with the client-to-server key, responses sealed
// with the server-to-client key (MS-SMB2 3.3.5.5.3).
type sessionCrypto struct {
	cipher   uint16
	seal     cipher.AEAD // server to client
	open     cipher.AEAD // client to server
	nonceLen int
}

// newSessionCrypto derives a session's encryption keys for the dialect
// and cipher: 3.0 and 3.0.2 with fixed labels, 3.1.1 with the session's
// preauth integrity hash as context.
func newSessionCrypto(dialect, cipherID uint16, sessionKey, preauth []byte) (*sessionCrypto, error) {
	var s2c, c2s []byte
	if dialect == dialect311 {
		s2c = kdf(sessionKey, []byte("SMBS2CCipherKey\x00"), preauth)
		c2s = kdf(sessionKey, []byte("SMBC2SCipherKey\x00"), preauth)
	} else {
		s2c = kdf(sessionKey, []byte("SMB2AESCCM\x00"), []byte("ServerOut\x00"))
		c2s = kdf(sessionKey, []byte("SMB2AESCCM\x00"), []byte("ServerIn \x00"))
	}
	mk := func(key []byte) (cipher.AEAD, error) {
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		switch cipherID {
		case cipherAES128CCM:
			return newCCM(b), nil
		case cipherAES128GCM:
			return cipher.NewGCM(b)
		}
		return nil, fmt.Errorf("smb: cipher %d not supported", cipherID)
	}
	sc := &sessionCrypto{cipher: cipherID}
	var err error
	if sc.seal, err = mk(s2c); err != nil {
		return nil, err
	}
	if sc.open, err = mk(c2s); err != nil {
		return nil, err
	}
	sc.nonceLen = sc.seal.NonceSize()
	return sc, nil
}

// decodeTransform reads an SMB2 TRANSFORM header (MS-SMB2 2.2.41) and
// returns the session id it names.
func decodeTransform(msg []byte) (sessionID uint64, err error) {
	if len(msg) < transformHeaderSize || [4]byte(msg[:4]) != protoTransform {
		return 0, errMalformed
	}
	if le.Uint16(msg[42:]) != transformFlagEncrypted {
		return 0, errMalformed
	}
	if int(le.Uint32(msg[36:])) != len(msg)-transformHeaderSize {
		return 0, errMalformed
	}
	return le.Uint64(msg[44:]), nil
}

// decrypt opens a TRANSFORM message in place and returns the SMB2
// message(s) it carries. The additional data is the header from the nonce
// on; the signature field is the tag.
func (sc *sessionCrypto) decrypt(msg []byte) ([]byte, error) {
	nonce := msg[20 : 20+sc.nonceLen]
	ct := make([]byte, 0, len(msg)-transformHeaderSize+16)
	ct = append(ct, msg[transformHeaderSize:]...)
	ct = append(ct, msg[4:20]...)
	out, err := sc.open.Open(msg[transformHeaderSize:transformHeaderSize], nonce, ct, msg[20:transformHeaderSize])
	if err != nil {
		return nil, fmt.Errorf("smb: decrypting a message of session %#x: %w", le.Uint64(msg[44:]), err)
	}
	return out, nil
}

// encrypt seals a reply frame into a TRANSFORM message for sessionID.
func (sc *sessionCrypto) encrypt(plain []byte, sessionID uint64) ([]byte, error) {
	out := make([]byte, transformHeaderSize, transformHeaderSize+len(plain)+16)
	copy(out, protoTransform[:])
	if _, err := rand.Read(out[20 : 20+sc.nonceLen]); err != nil {
		return nil, err
	}
	le.PutUint32(out[36:], uint32(len(plain)))
	le.PutUint16(out[42:], transformFlagEncrypted)
	le.PutUint64(out[44:], sessionID)
	sealed := sc.seal.Seal(out[transformHeaderSize:], out[20:20+sc.nonceLen], plain, out[20:transformHeaderSize])
	tag := sealed[len(sealed)-16:]
	copy(out[4:20], tag)
	return out[:transformHeaderSize+len(plain)], nil
}

// gmacSigner signs 3.1.1 messages with AES-128-GMAC when negotiated
// (MS-SMB2 3.1.4.1): GCM over no plaintext, the message as additional
// data, and a nonce of the message id and two bits (response, CANCEL).
type gmacSigner struct{ gcm cipher.AEAD }

func newGMAC(key []byte) (*gmacSigner, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &gmacSigner{gcm: g}, nil
}

func (s *gmacSigner) sum(msg []byte) [16]byte {
	var nonce [12]byte
	copy(nonce[:8], msg[24:32]) // MessageId
	var bits uint32
	if le.Uint32(msg[16:])&flagResponse != 0 {
		bits |= 1
	}
	if le.Uint16(msg[12:]) == cmdCancel {
		bits |= 2
	}
	le.PutUint32(nonce[8:], bits)
	var out [16]byte
	copy(out[:], s.gcm.Seal(nil, nonce[:], nil, msg))
	return out
}
