package smb

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// kdf is SP800-108 in counter mode with HMAC-SHA256, one 128-bit block
// (MS-SMB2 3.1.4.2): label and context are used as given (the labels carry
// their trailing NUL).
func kdf(key, label, context []byte) []byte {
	mac := hmac.New(sha256.New, key)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], 1)
	mac.Write(n[:])
	mac.Write(label)
	mac.Write([]byte{0})
	mac.Write(context)
	binary.BigEndian.PutUint32(n[:], 128)
	mac.Write(n[:])
	return mac.Sum(nil)[:16]
}

// signer computes message signatures for one session.
type signer interface {
	sum(msg []byte) [16]byte
}

// hmacSigner signs for dialects 2.0.2 and 2.1: HMAC-SHA256 with the
// session key, first 16 bytes.
type hmacSigner struct{ key []byte }

func (s hmacSigner) sum(msg []byte) [16]byte {
	mac := hmac.New(sha256.New, s.key)
	mac.Write(msg)
	var out [16]byte
	copy(out[:], mac.Sum(nil))
	return out
}

// cmacSigner signs for the 3.x dialects: AES-128-CMAC (RFC 4493).
type cmacSigner struct {
	block  cipher.Block
	k1, k2 [16]byte
}

func newCMAC(key []byte) (*cmacSigner, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	s := &cmacSigner{block: b}
	var l [16]byte
	b.Encrypt(l[:], l[:])
	s.k1 = dbl(l)
	s.k2 = dbl(s.k1)
	return s, nil
}

// dbl is multiplication by x in GF(2^128) as CMAC's subkeys need it.
func dbl(v [16]byte) [16]byte {
	var out [16]byte
	carry := v[0] >> 7
	for i := 0; i < 15; i++ {
		out[i] = v[i]<<1 | v[i+1]>>7
	}
	out[15] = v[15] << 1
	if carry != 0 {
		out[15] ^= 0x87
	}
	return out
}

func (s *cmacSigner) sum(msg []byte) [16]byte {
	var x [16]byte
	n := len(msg)
	full := n > 0 && n%16 == 0
	blocks := (n + 15) / 16
	if blocks == 0 {
		blocks = 1
	}
	for i := 0; i < blocks-1; i++ {
		subtle.XORBytes(x[:], x[:], msg[16*i:16*i+16])
		s.block.Encrypt(x[:], x[:])
	}
	var last [16]byte
	rest := msg[16*(blocks-1):]
	if full {
		subtle.XORBytes(last[:], rest, s.k1[:])
	} else {
		copy(last[:], rest)
		last[len(rest)] = 0x80
		subtle.XORBytes(last[:], last[:], s.k2[:])
	}
	subtle.XORBytes(x[:], x[:], last[:])
	s.block.Encrypt(x[:], x[:])
	return x
}

// signatureOf computes msg's signature with its signature field zeroed,
// leaving msg as it was.
func signatureOf(s signer, msg []byte) [16]byte {
	var saved [16]byte
	copy(saved[:], msg[48:64])
	clear(msg[48:64])
	sig := s.sum(msg)
	copy(msg[48:64], saved[:])
	return sig
}

// newSigner picks the signing algorithm and key for a dialect (MS-SMB2
// 3.3.5.5.3): the session key itself for 2.x, a derived AES-CMAC key for
// 3.0/3.0.2 and, with the session's preauth hash as context, for 3.1.1,
// where alg (the negotiated signing algorithm) may be AES-GMAC instead.
func newSigner(dialect, alg uint16, sessionKey []byte, preauth []byte) (signer, error) {
	switch dialect {
	case dialect202, dialect210:
		return hmacSigner{key: sessionKey}, nil
	case dialect311:
		key := kdf(sessionKey, []byte("SMBSigningKey\x00"), preauth)
		switch alg {
		case signAESGMAC:
			return newGMAC(key)
		case signHMACSHA256:
			return hmacSigner{key: key}, nil
		}
		return newCMAC(key)
	default:
		return newCMAC(kdf(sessionKey, []byte("SMB2AESCMAC\x00"), []byte("SmbSign\x00")))
	}
}
