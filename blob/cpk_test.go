package blob_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	blobsrv "github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/storagehttp"
)

// cpkOf is the customer-provided key info of a 32-byte key made of b.
func cpkOf(b byte) *blob.CPKInfo {
	key := make([]byte, 32)
	for i := range key {
		key[i] = b
	}
	sum := sha256.Sum256(key)
	return &blob.CPKInfo{
		EncryptionKey:       to.Ptr(base64.StdEncoding.EncodeToString(key)),
		EncryptionKeySHA256: to.Ptr(base64.StdEncoding.EncodeToString(sum[:])),
		EncryptionAlgorithm: to.Ptr(blob.EncryptionAlgorithmTypeAES256),
	}
}

// TestCustomerProvidedKey: a blob written with a key records the key's
// SHA-256 and answers it; reading it, its properties and metadata, writing
// its metadata or snapshotting it without the key is 409
// BlobUsesCustomerSpecifiedEncryption, with another key 409
// BlobCustomerSpecifiedEncryptionMismatch; a key on a blob that has none
// is 409 BlobDoesNotUseCustomerSpecifiedEncryption; operations that take
// no key (Get Block List, tags, Delete Blob) need none; a snapshot keeps
// the key; a copy reads a keyed source only with its key (409
// CannotVerifyCopySource otherwise); Put Blob replaces the blob, key and
// all.
func TestCustomerProvidedKey(t *testing.T) {
	ctx := context.Background()
	e := newOAuthEnv(t, newFakeClock(), t.TempDir(), blobsrv.DevKey)
	svc := newEnvClientFor(t, e)
	if _, err := svc.CreateContainer(ctx, "keys", nil); err != nil {
		t.Fatal(err)
	}
	cc := svc.NewContainerClient("keys")
	k1, k2 := cpkOf(1), cpkOf(2)
	bb := cc.NewBlockBlobClient("secret")
	up, err := bb.UploadBuffer(ctx, []byte("classified"), &blockblob.UploadBufferOptions{CPKInfo: k1})
	if err != nil {
		t.Fatal(err)
	}
	if up.EncryptionKeySHA256 == nil || *up.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 {
		t.Fatalf("upload answered key hash %v, want %s", up.EncryptionKeySHA256, *k1.EncryptionKeySHA256)
	}
	if _, err := cc.NewBlockBlobClient("plain").UploadBuffer(ctx, []byte("open"), nil); err != nil {
		t.Fatal(err)
	}
	plain := cc.NewBlobClient("plain")

	type op func(cpk *blob.CPKInfo) error
	props := func(c *blob.Client) op {
		return func(cpk *blob.CPKInfo) error {
			_, err := c.GetProperties(ctx, &blob.GetPropertiesOptions{CPKInfo: cpk})
			return err
		}
	}
	read := func(c *blob.Client) op {
		return func(cpk *blob.CPKInfo) error {
			r, err := c.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: cpk})
			if err == nil {
				r.Body.Close()
			}
			return err
		}
	}
	setMD := func(c *blob.Client) op {
		return func(cpk *blob.CPKInfo) error {
			_, err := c.SetMetadata(ctx, map[string]*string{"k": to.Ptr("v")}, &blob.SetMetadataOptions{CPKInfo: cpk})
			return err
		}
	}
	snap := func(c *blob.Client) op {
		return func(cpk *blob.CPKInfo) error {
			_, err := c.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: cpk})
			return err
		}
	}
	secret := bb.BlobClient()
	for _, tt := range []struct {
		name string
		op   op
		cpk  *blob.CPKInfo
		code string // "" success
	}{
		{"properties without the key", props(secret), nil, "BlobUsesCustomerSpecifiedEncryption"},
		{"properties with another key", props(secret), k2, "BlobCustomerSpecifiedEncryptionMismatch"},
		{"properties with the key", props(secret), k1, ""},
		{"read without the key", read(secret), nil, "BlobUsesCustomerSpecifiedEncryption"},
		{"read with another key", read(secret), k2, "BlobCustomerSpecifiedEncryptionMismatch"},
		{"read with the key", read(secret), k1, ""},
		{"metadata without the key", setMD(secret), nil, "BlobUsesCustomerSpecifiedEncryption"},
		{"metadata with the key", setMD(secret), k1, ""},
		{"snapshot without the key", snap(secret), nil, "BlobUsesCustomerSpecifiedEncryption"},
		{"snapshot with another key", snap(secret), k2, "BlobCustomerSpecifiedEncryptionMismatch"},
		{"a key on a blob without one", read(plain), k1, "BlobDoesNotUseCustomerSpecifiedEncryption"},
		{"no key on a blob without one", read(plain), nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op(tt.cpk)
			if code(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
			if tt.code != "" && status(err) != http.StatusConflict {
				t.Fatalf("status %d, want 409", status(err))
			}
		})
	}

	// Answers name the key; the content is served as written.
	r, err := secret.DownloadStream(ctx, &blob.DownloadStreamOptions{CPKInfo: k1})
	if err != nil {
		t.Fatal(err)
	}
	got := readAllBody(t, r.Body)
	if got != "classified" || r.EncryptionKeySHA256 == nil || *r.EncryptionKeySHA256 != *k1.EncryptionKeySHA256 || r.IsServerEncrypted == nil || !*r.IsServerEncrypted {
		t.Fatalf("read %q, key hash %v, server encrypted %v", got, r.EncryptionKeySHA256, r.IsServerEncrypted)
	}

	// Listings name the key's hash.
	page, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Segment.BlobItems {
		want := ""
		if *it.Name == "secret" {
			want = *k1.EncryptionKeySHA256
		}
		if got := it.Properties.CustomerProvidedKeySHA256; (got == nil) != (want == "") || got != nil && *got != want {
			t.Errorf("List Blobs: %s has CustomerProvidedKeySha256 %v, want %q", *it.Name, got, want)
		}
	}

	// A snapshot keeps the key.
	sn, err := secret.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKInfo: k1})
	if err != nil {
		t.Fatal(err)
	}
	if sn.IsServerEncrypted == nil || *sn.IsServerEncrypted {
		t.Errorf("snapshot with a key: x-ms-request-server-encrypted %v, want false", sn.IsServerEncrypted)
	}
	snc, _ := secret.WithSnapshot(*sn.Snapshot)
	if err := props(snc)(nil); code(err) != "BlobUsesCustomerSpecifiedEncryption" {
		t.Errorf("snapshot without the key: %v", err)
	}
	if err := props(snc)(k1); err != nil {
		t.Errorf("snapshot with the key: %v", err)
	}

	// Operations that take no key need none.
	if _, err := bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil); err != nil {
		t.Errorf("Get Block List without the key: %v", err)
	}
	if _, err := secret.GetTags(ctx, nil); err != nil {
		t.Errorf("Get Blob Tags without the key: %v", err)
	}

	// From URL: the source is read with its own key.
	srcURL, err := secret.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := cc.NewBlockBlobClient("copy")
	if _, err := dst.UploadBlobFromURL(ctx, srcURL, nil); code(err) != "CannotVerifyCopySource" || status(err) != http.StatusConflict {
		t.Errorf("Put Blob From URL of a keyed source without its key: %v", err)
	}
	if _, err := cc.NewBlobClient("copy2").StartCopyFromURL(ctx, secret.URL(), nil); code(err) != "CannotVerifyCopySource" || status(err) != http.StatusConflict {
		t.Errorf("Copy Blob of a keyed source: %v", err)
	}
	req, _ := http.NewRequest(http.MethodPut, e.url+"/keys/copy3", nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	req.Header.Set("x-ms-copy-source", secret.URL())
	for k, v := range map[string]string{"x-ms-source-encryption-key": *k1.EncryptionKey,
		"x-ms-source-encryption-key-sha256": *k1.EncryptionKeySHA256, "x-ms-source-encryption-algorithm": "AES256"} {
		req.Header.Set(k, v)
	}
	signRequest(t, req)
	if resp, err := e.client.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "UnsupportedHeader" {
		t.Errorf("Copy Blob with a source key (Copy Blob takes none): %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	src := &blob.SourceCPKInfo{SourceEncryptionKey: k1.EncryptionKey, SourceEncryptionKeySHA256: k1.EncryptionKeySHA256, SourceEncryptionAlgorithm: k1.EncryptionAlgorithm}
	if _, err := dst.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{SourceCustomerProvidedKey: src, CPKInfo: k2}); err != nil {
		t.Fatalf("Put Blob From URL with both keys: %v", err)
	}
	if err := props(dst.BlobClient())(k2); err != nil {
		t.Errorf("the copy is under the destination's key: %v", err)
	}

	// Put Blob replaces the blob with its key; Delete Blob takes none.
	if _, err := bb.UploadBuffer(ctx, []byte("public now"), nil); err != nil {
		t.Fatalf("overwrite without a key: %v", err)
	}
	if err := read(secret)(nil); err != nil {
		t.Errorf("read of the overwritten blob without a key: %v", err)
	}
	if _, err := dst.Delete(ctx, nil); err != nil {
		t.Errorf("Delete Blob of a keyed blob without the key: %v", err)
	}
}

// TestCustomerProvidedKeyHeaders: the key headers are checked before
// anything runs: a key that is not 32 base64 bytes or whose SHA-256 is
// not the one sent is 400 InvalidHeaderValue, a key without its hash (or
// a write without the algorithm) 400 MissingRequiredHeader, another
// algorithm 400 InvalidHeaderValue, and a key over plain HTTP is refused
// ("a client must establish a secure connection … using HTTPS"); nothing
// is written.
func TestCustomerProvidedKeyHeaders(t *testing.T) {
	ctx := context.Background()
	e := newOAuthEnv(t, newFakeClock(), t.TempDir(), blobsrv.DevKey)
	if _, err := newEnvClientFor(t, e).CreateContainer(ctx, "hdr", nil); err != nil {
		t.Fatal(err)
	}
	k := cpkOf(7)
	for _, tt := range []struct {
		name   string
		hdr    map[string]string
		code   string
		header string
	}{
		{"short key", map[string]string{"x-ms-encryption-key": "a2V5", "x-ms-encryption-key-sha256": *k.EncryptionKeySHA256, "x-ms-encryption-algorithm": "AES256"},
			"InvalidHeaderValue", "x-ms-encryption-key"},
		{"hash of another key", map[string]string{"x-ms-encryption-key": *k.EncryptionKey, "x-ms-encryption-key-sha256": *cpkOf(8).EncryptionKeySHA256, "x-ms-encryption-algorithm": "AES256"},
			"InvalidHeaderValue", "x-ms-encryption-key-sha256"},
		{"no hash", map[string]string{"x-ms-encryption-key": *k.EncryptionKey, "x-ms-encryption-algorithm": "AES256"},
			"MissingRequiredHeader", "x-ms-encryption-key-sha256"},
		{"no algorithm on a write", map[string]string{"x-ms-encryption-key": *k.EncryptionKey, "x-ms-encryption-key-sha256": *k.EncryptionKeySHA256},
			"MissingRequiredHeader", "x-ms-encryption-algorithm"},
		{"another algorithm", map[string]string{"x-ms-encryption-key": *k.EncryptionKey, "x-ms-encryption-key-sha256": *k.EncryptionKeySHA256, "x-ms-encryption-algorithm": "AES128"},
			"InvalidHeaderValue", "x-ms-encryption-algorithm"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, e.url+"/hdr/b", nil)
			req.Header.Set("x-ms-blob-type", "BlockBlob")
			req.Header.Set("x-ms-version", "2025-11-05")
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			signRequest(t, req)
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != tt.code ||
				!containsAll(body, "<HeaderName>"+tt.header+"</HeaderName>") {
				t.Fatalf("%d %s\n%s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
			}
		})
	}
	if _, err := newEnvClientFor(t, e).NewContainerClient("hdr").NewBlobClient("b").GetProperties(ctx, nil); status(err) != http.StatusNotFound {
		t.Errorf("a refused write created the blob: %v", err)
	}

	// Plain HTTP.
	plain := newEnv(t, nil)
	c := plain.client(t)
	if _, err := c.CreateContainer(ctx, "hdr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServiceClient().NewContainerClient("hdr").NewBlockBlobClient("b").UploadBuffer(ctx, []byte("x"),
		&blockblob.UploadBufferOptions{CPKInfo: k}); status(err) != http.StatusBadRequest {
		t.Errorf("a key over HTTP: %v", err)
	}
}

func readAllBody(t *testing.T, rc io.ReadCloser) string {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signRequest signs req with the development key (SharedKey).
func signRequest(t *testing.T, req *http.Request) {
	t.Helper()
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	sg, err := storagehttp.NewSigner(blobsrv.DevAccount, blobsrv.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "SharedKey "+blobsrv.DevAccount+":"+sg.Sign(storagehttp.StringToSign(blobsrv.DevAccount, req)))
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
