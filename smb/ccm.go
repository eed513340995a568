package smb

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// ccm is AES-CCM (RFC 3610, NIST SP 800-38C) with a 16-byte tag, as SMB 3
// encrypts with AES-128-CCM (MS-SMB2 3.1.4.3): an 11-byte nonce, so a
// 4-byte length field (messages up to 4 GiB). The standard library has
// GCM but not CCM.
type ccm struct {
	block cipher.Block
}

const (
	ccmNonceSize = 11
	ccmTagSize   = 16
	ccmL         = 15 - ccmNonceSize // bytes of the length field
)

var errCCMOpen = errors.New("smb: CCM message authentication failed")

func newCCM(b cipher.Block) cipher.AEAD { return &ccm{block: b} }

func (c *ccm) NonceSize() int { return ccmNonceSize }
func (c *ccm) Overhead() int  { return ccmTagSize }

// mac computes the CBC-MAC of the formatted nonce, additional data and
// plaintext (RFC 3610 2.2).
func (c *ccm) mac(nonce, plaintext, ad []byte) [16]byte {
	var x, b [16]byte
	flags := byte(8*((ccmTagSize-2)/2) + (ccmL - 1))
	if len(ad) > 0 {
		flags |= 0x40
	}
	b[0] = flags
	copy(b[1:], nonce)
	binary.BigEndian.PutUint32(b[16-ccmL:], uint32(len(plaintext)))
	c.block.Encrypt(x[:], b[:])
	if len(ad) > 0 {
		// The length of ad prefixes it: 2 bytes below 0xFF00, else
		// 0xFFFE and 4 bytes (SMB's ad is 32 bytes).
		var pre []byte
		if len(ad) < 0xFF00 {
			pre = binary.BigEndian.AppendUint16(nil, uint16(len(ad)))
		} else {
			pre = binary.BigEndian.AppendUint32([]byte{0xFF, 0xFE}, uint32(len(ad)))
		}
		c.cbc(&x, append(pre, ad...))
	}
	c.cbc(&x, plaintext)
	return x
}

// cbc runs CBC-MAC over data zero-padded to whole blocks.
func (c *ccm) cbc(x *[16]byte, data []byte) {
	for len(data) > 0 {
		n := min(16, len(data))
		subtle.XORBytes(x[:n], x[:n], data[:n])
		c.block.Encrypt(x[:], x[:])
		data = data[n:]
	}
}

// ctr XORs src with the CTR key stream starting at counter 1 into dst, and
// returns S0 (the stream block of counter 0, which masks the tag).
func (c *ccm) ctr(dst, src, nonce []byte) [16]byte {
	var a, s, s0 [16]byte
	a[0] = ccmL - 1
	copy(a[1:], nonce)
	c.block.Encrypt(s0[:], a[:])
	for i := uint32(1); len(src) > 0; i++ {
		binary.BigEndian.PutUint32(a[16-ccmL:], i)
		c.block.Encrypt(s[:], a[:])
		n := min(16, len(src))
		subtle.XORBytes(dst[:n], src[:n], s[:n])
		dst, src = dst[n:], src[n:]
	}
	return s0
}

func (c *ccm) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != ccmNonceSize || uint64(len(plaintext)) > 1<<32-1 {
		panic("smb: CCM: bad nonce or message length")
	}
	tag := c.mac(nonce, plaintext, ad)
	ret, out := sliceForAppend(dst, len(plaintext)+ccmTagSize)
	s0 := c.ctr(out, plaintext, nonce)
	subtle.XORBytes(out[len(plaintext):], tag[:], s0[:])
	return ret
}

func (c *ccm) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != ccmNonceSize || len(ciphertext) < ccmTagSize {
		return nil, errCCMOpen
	}
	n := len(ciphertext) - ccmTagSize
	ret, out := sliceForAppend(dst, n)
	s0 := c.ctr(out, ciphertext[:n], nonce)
	var want [16]byte
	subtle.XORBytes(want[:], ciphertext[n:], s0[:])
	tag := c.mac(nonce, out, ad)
	if subtle.ConstantTimeCompare(tag[:], want[:]) != 1 {
		clear(out)
		return nil, errCCMOpen
	}
	return ret, nil
}

// sliceForAppend extends in by n bytes, returning the whole slice and the
// new tail.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}
