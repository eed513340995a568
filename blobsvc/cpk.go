package blobsvc

import (
	"errors"
	"fmt"
)

// Customer-provided keys ("Provide an encryption key on a request to Blob
// storage"): "Azure Storage writes an SHA-256 hash of the encryption key
// alongside the blob's contents. The hash is used to verify that all
// subsequent operations against the blob use the same encryption key."
// blobsvc keeps that hash (Blob.EncryptionKeySHA256) and checks it; the
// key itself never reaches blobsvc, and the content is stored as sent (the
// blob package's doc says why, and what that means).
var (
	// ErrCPKRequired: the blob has a customer-provided key and the
	// request gives none (409 BlobUsesCustomerSpecifiedEncryption).
	ErrCPKRequired = errors.New("the blob is encrypted with a customer-provided key the request does not give")
	// ErrCPKMismatch: the request's key is not the blob's.
	ErrCPKMismatch = errors.New("the request's customer-provided key is not the blob's")
	// ErrCPKNotUsed: the request gives a key for a blob that has none.
	ErrCPKNotUsed = errors.New("the blob is not encrypted with a customer-provided key, but the request gives one")
)

// checkEncryption compares the request's key hash (Conditions.
// EncryptionKeySHA256) with the one stored with an existing blob. nil
// (an operation that does not take a key: Delete Blob, leases, tags,
// Get Block List) checks nothing; "" is a request without a key.
func (c Conditions) checkEncryption(exists bool, stored string) error {
	if c.EncryptionKeySHA256 == nil || !exists {
		return nil
	}
	switch got := *c.EncryptionKeySHA256; {
	case got == stored:
		return nil
	case got == "":
		return ErrCPKRequired
	case stored == "":
		return ErrCPKNotUsed
	default:
		return fmt.Errorf("key SHA-256 %s: %w", got, ErrCPKMismatch)
	}
}

// newKeyHash is the hash a write that replaces the content (Put Blob, Put
// Block List, the copies, a new page blob) records: the request's, or none.
func (c Conditions) newKeyHash() string {
	if c.EncryptionKeySHA256 == nil {
		return ""
	}
	return *c.EncryptionKeySHA256
}
