package smb

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"testing"
)

// TestCCMKnownAnswer checks AES-128-CCM (11-byte nonce, 16-byte tag, SMB's
// parameters) against vectors computed by an independent implementation
// (pycryptodome's AES.MODE_CCM), sealing and opening, and that a changed
// byte of ciphertext, tag or additional data fails to open.
func TestCCMKnownAnswer(t *testing.T) {
	key := make([]byte, 16)
	for i := range key {
		key[i] = byte(i)
	}
	nonce := make([]byte, 11)
	for i := range nonce {
		nonce[i] = byte(100 + i)
	}
	ad := make([]byte, 32)
	for i := range ad {
		ad[i] = byte(200 + i)
	}
	pt := make([]byte, 45)
	for i := range pt {
		pt[i] = byte(i * 7 % 256)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	c := newCCM(b)
	for _, tc := range []struct {
		pt   []byte
		want string
	}{
		{pt, "6c2150c74e975eeecb2726adc6e5acb74456a430f8cdec0e74038e7b51bfe51d53741da3a5b65312fe088e12ad69148e3b7ea2c94b88b9f3741ddf9624"},
		{nil, "da9b949d06b511ab015ceb14f92c0c6c"},
	} {
		sealed := c.Seal(nil, nonce, tc.pt, ad)
		if got := hex.EncodeToString(sealed); got != tc.want {
			t.Fatalf("Seal(%d bytes) = %s, want %s", len(tc.pt), got, tc.want)
		}
		opened, err := c.Open(nil, nonce, sealed, ad)
		if err != nil || !bytes.Equal(opened, tc.pt) {
			t.Fatalf("Open = %x, %v; want %x", opened, err, tc.pt)
		}
		for i := range sealed {
			bad := bytes.Clone(sealed)
			bad[i] ^= 1
			if _, err := c.Open(nil, nonce, bad, ad); err == nil {
				t.Fatalf("Open accepted a message changed at byte %d", i)
			}
		}
		badAD := bytes.Clone(ad)
		badAD[0] ^= 1
		if _, err := c.Open(nil, nonce, sealed, badAD); err == nil {
			t.Fatal("Open accepted changed additional data")
		}
	}
}
