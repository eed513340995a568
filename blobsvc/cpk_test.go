package blobsvc

import (
	"errors"
	"testing"
)

// TestCheckEncryption: the request's key hash against the blob's: nil
// (an operation without keys) and a missing blob check nothing; the same
// hash passes; no key on a keyed blob is ErrCPKRequired, another key
// ErrCPKMismatch, a key on a blob without one ErrCPKNotUsed.
func TestCheckEncryption(t *testing.T) {
	hash := func(s string) *string { return &s }
	for _, tt := range []struct {
		name   string
		sent   *string
		exists bool
		stored string
		want   error
	}{
		{"operation without keys", nil, true, "k1", nil},
		{"missing blob", hash(""), false, "", nil},
		{"same key", hash("k1"), true, "k1", nil},
		{"no key, no key", hash(""), true, "", nil},
		{"no key on a keyed blob", hash(""), true, "k1", ErrCPKRequired},
		{"another key", hash("k2"), true, "k1", ErrCPKMismatch},
		{"a key on a blob without one", hash("k1"), true, "", ErrCPKNotUsed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Conditions{EncryptionKeySHA256: tt.sent}.checkEncryption(tt.exists, tt.stored)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}
