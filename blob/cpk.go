package blob

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// Customer-provided keys (x-ms-encryption-key, -key-sha256, -algorithm;
// x-ms-source-encryption-* for a From-URL operation's source), as "Provide
// an encryption key on a request to Blob storage" describes what a client
// observes. See "Customer-provided keys" in doc.go for what blobshare
// checks and what it does not do.

// cpkRoutes are the operations that take a customer-provided key (the
// page's list: Put Blob, Put Block List, Put Block, Put Block From URL,
// Put Page, Put Page From URL, Append Block, Set Blob Properties, Set
// Blob Metadata, Get Blob, Get Blob Properties, Get Blob Metadata,
// Snapshot Blob; the From-URL forms and Put Blob From URL share their
// routes, Copy Blob and Copy Blob From URL, which take no key, share Put
// Blob's). Any other operation carrying a key header is refused (400
// UnsupportedHeader), never served as if it had none.
var cpkRoutes = map[string]bool{
	"PutBlob": true, "PutBlock": true, "PutBlockList": true, "AppendBlock": true, "PutPage": true,
	"SetBlobProperties": true, "SetBlobMetadata": true, "GetBlob": true, "GetBlobProperties": true,
	"GetBlobMetadata": true, "SnapshotBlob": true,
}

const (
	hdrKey       = "x-ms-encryption-key"
	hdrKeySHA256 = "x-ms-encryption-key-sha256"
	hdrAlgorithm = "x-ms-encryption-algorithm"
	srcPrefix    = "x-ms-source-"
)

var cpkReason = "customer-provided keys are taken only by the operations that write or read a blob's content, properties or metadata"

// cpkHeaders and sourceCPKHeaders refuse the key headers where they do
// not belong.
var (
	cpkHeaders = []storagehttp.Unsupported{
		{Name: hdrKey, Reason: cpkReason}, {Name: hdrKeySHA256, Reason: cpkReason}, {Name: hdrAlgorithm, Reason: cpkReason},
	}
	sourceCPKHeaders = []storagehttp.Unsupported{
		{Name: srcPrefix + "encryption-key", Reason: "only a From-URL operation has a source"},
		{Name: srcPrefix + "encryption-key-sha256", Reason: "only a From-URL operation has a source"},
		{Name: srcPrefix + "encryption-algorithm", Reason: "only a From-URL operation has a source"},
	}
)

// prepareCPK validates the key headers of the chosen operation and leaves
// in r's header the form blobsvc's conditions read (params.go's
// conditions, sourceConditions): on an operation that takes a key,
// x-ms-encryption-key-sha256 is present, with the SHA-256 of the key sent
// or empty when none was sent (the blob's hash is then checked against
// "no key"); on one with a source, x-ms-source-encryption-key-sha256
// likewise. It answers x-ms-encryption-key-sha256 on success (s.fail
// drops it from an error).
func prepareCPK(w http.ResponseWriter, r *http.Request, rt *route) error {
	src := r.Header.Get("x-ms-copy-source") != ""
	// Copy Blob and Copy Blob From URL share Put Blob's route (a copy
	// source without x-ms-blob-type) but take no key, of either side;
	// their source is still checked against "no key" (sourceConditions).
	takesKey := cpkRoutes[rt.name] && !(rt.name == "PutBlob" && src && r.Header.Get("x-ms-blob-type") == "")
	if !takesKey {
		if err := storagehttp.CheckUnsupported(r.Header, cpkHeaders); err != nil {
			return err
		}
	}
	if !takesKey || !src {
		if err := storagehttp.CheckUnsupported(r.Header, sourceCPKHeaders); err != nil {
			return err
		}
	}
	if !takesKey {
		return nil
	}
	write := r.Method == http.MethodPut
	sha, err := customerKey(r, "x-ms-", write)
	if err != nil {
		return err
	}
	r.Header[http.CanonicalHeaderKey(hdrKeySHA256)] = []string{sha}
	if sha != "" {
		w.Header().Set(hdrKeySHA256, sha)
	}
	if src {
		// A source is read: its algorithm is optional, as a read's.
		ssha, err := customerKey(r, srcPrefix, false)
		if err != nil {
			return err
		}
		r.Header[http.CanonicalHeaderKey(srcPrefix+"encryption-key-sha256")] = []string{ssha}
	}
	return nil
}

// customerKey checks one set of key headers (prefix "x-ms-" or
// "x-ms-source-") and returns the key's SHA-256 in base64, "" when none
// of the three is sent. The key must be a base64 AES-256 key (32 bytes)
// and the hash its SHA-256 (400 InvalidHeaderValue), both must be sent
// (400 MissingRequiredHeader), the algorithm AES256 ("Required for write
// requests, optional for read requests"), and the request must come over
// HTTPS ("To send the encryption key as part of the request, a client
// must establish a secure connection to Azure Storage using HTTPS").
func customerKey(r *http.Request, prefix string, write bool) (string, error) {
	h := r.Header
	kName, sName, aName := prefix+"encryption-key", prefix+"encryption-key-sha256", prefix+"encryption-algorithm"
	key, sum, alg := h.Get(kName), h.Get(sName), h.Get(aName)
	switch {
	case key == "" && sum == "" && alg == "":
		return "", nil
	case key == "":
		return "", storagehttp.MissingHeader(kName)
	case sum == "":
		return "", storagehttp.MissingHeader(sName)
	case alg == "" && write:
		return "", storagehttp.MissingHeader(aName)
	case alg != "" && alg != "AES256":
		return "", storagehttp.InvalidHeader(aName, alg)
	case r.TLS == nil:
		e := storagehttp.InvalidHeader(kName, "(not shown)")
		e.Details = append(e.Details, storagehttp.Detail{Name: "Reason", Value: "a customer-provided key must be sent over HTTPS"})
		return "", e
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return "", storagehttp.InvalidHeader(kName, "(not shown)")
	}
	d := sha256.Sum256(raw)
	want := base64.StdEncoding.EncodeToString(d[:])
	if got, err := base64.StdEncoding.DecodeString(sum); err != nil || base64.StdEncoding.EncodeToString(got) != want {
		return "", storagehttp.InvalidHeader(sName, sum)
	}
	return want, nil
}

// sourceCPKError is a From-URL source's key failure: Azure answers it as
// the source's (409 CannotVerifyCopySource, with the source blob's
// message: "The blob is encrypted with customer specified encryption, but
// it was not provided in the request."); nil for any other error.
func sourceCPKError(err error) error {
	var msg string
	switch {
	case errors.Is(err, blobsvc.ErrCPKRequired):
		msg = msgCPKRequired
	case errors.Is(err, blobsvc.ErrCPKMismatch):
		msg = msgCPKMismatch
	case errors.Is(err, blobsvc.ErrCPKNotUsed):
		msg = msgCPKNotUsed
	default:
		return nil
	}
	e := storagehttp.NewError(http.StatusConflict, storagehttp.CodeCannotVerifyCopySource, msg)
	e.Err = err
	return e
}

const (
	msgCPKRequired = "The blob is encrypted with customer specified encryption, but it was not provided in the request."
	msgCPKMismatch = "The given customer specified encryption does not match the encryption used to encrypt the blob."
	msgCPKNotUsed  = "The blob is not encrypted with customer specified encryption, but one was provided in the request."
)
