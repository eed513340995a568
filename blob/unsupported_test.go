package blob_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestSDKUnsupportedHeadersRefused: encryption scopes, legal holds and immutability policies, sent through azblob's own
// options, are 400 UnsupportedHeader and change nothing; a legal hold of
// false asks for nothing and passes.
func TestSDKUnsupportedHeadersRefused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "uns", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("uns")
	scope := &blob.CPKScopeInfo{EncryptionScope: to.Ptr("myscope")}
	bb := cc.NewBlockBlobClient("b")
	for _, tc := range []struct {
		name string
		o    *blockblob.UploadOptions
	}{
		{"encryption scope", &blockblob.UploadOptions{CPKScopeInfo: scope}},
		{"legal hold", &blockblob.UploadOptions{LegalHold: to.Ptr(true)}},
		{"immutability policy", &blockblob.UploadOptions{ImmutabilityPolicyMode: to.Ptr(blob.ImmutabilityPolicySettingLocked), ImmutabilityPolicyExpiryTime: to.Ptr(time.Now().Add(time.Hour))}},
	} {
		_, err := bb.Upload(ctx, rsc([]byte("data")), tc.o)
		if status(err) != http.StatusBadRequest || code(err) != "UnsupportedHeader" {
			t.Errorf("Upload with a %s: %v", tc.name, err)
		}
		if _, err := bb.GetProperties(ctx, nil); status(err) != http.StatusNotFound {
			t.Fatalf("Upload with a %s created the blob: %v", tc.name, err)
		}
	}
	if _, err := bb.Upload(ctx, rsc([]byte("data")), &blockblob.UploadOptions{LegalHold: to.Ptr(false)}); err != nil {
		t.Fatalf("legal hold false: %v", err)
	}
	if _, err := bb.StageBlock(ctx, blockID(0), rsc([]byte("x")), &blockblob.StageBlockOptions{CPKScopeInfo: scope}); code(err) != "UnsupportedHeader" {
		t.Errorf("Stage Block with an encryption scope: %v", err)
	}
	if _, err := cc.NewBlockBlobClient("b").CreateSnapshot(ctx, &blob.CreateSnapshotOptions{CPKScopeInfo: scope}); code(err) != "UnsupportedHeader" {
		t.Errorf("Snapshot with an encryption scope: %v", err)
	}
	_, err := c.ServiceClient().NewContainerClient("scoped").Create(ctx, &container.CreateOptions{CPKScopeInfo: &container.CPKScopeInfo{DefaultEncryptionScope: to.Ptr("myscope")}})
	if code(err) != "UnsupportedHeader" {
		t.Errorf("Create Container with a default encryption scope: %v", err)
	}
	if _, err := c.ServiceClient().NewContainerClient("scoped").GetProperties(ctx, nil); status(err) != http.StatusNotFound {
		t.Errorf("the refused container exists: %v", err)
	}
}

// TestRawUnsupportedHeadersRefused: the headers the SDK sends on rarer
// paths (a tier condition on Delete Blob, a managed-disk diff) and a
// customer-provided key where no operation takes one (a source's key
// without a source, a key on Delete Blob) are refused the same way, with
// the header named.
func TestRawUnsupportedHeadersRefused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "raw", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServiceClient().NewContainerClient("raw").NewBlockBlobClient("b").Upload(ctx, rsc([]byte("data")), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		header       string
	}{
		{"PUT", "/raw/b?comp=metadata", map[string]string{"x-ms-source-encryption-key": "a2V5"}, "x-ms-source-encryption-key"},
		// Delete Blob's condition on another operation.
		{"PUT", "/raw/b?comp=metadata", map[string]string{"x-ms-access-tier-if-modified-since": time.Now().UTC().Format(http.TimeFormat)}, "x-ms-access-tier-if-modified-since"},
		{"GET", "/raw/b?comp=pagelist", map[string]string{"x-ms-previous-snapshot-url": e.URL + "/raw/b?snapshot=x"}, "x-ms-previous-snapshot-url"},
		{"DELETE", "/raw/b", map[string]string{"x-ms-encryption-algorithm": "AES256"}, "x-ms-encryption-algorithm"},
	} {
		st, cd, body := rawRequest(t, e, tc.method, tc.path, tc.hdr, "")
		if st != http.StatusBadRequest || cd != "UnsupportedHeader" || !strings.Contains(body, "<HeaderName>"+tc.header+"</HeaderName>") {
			t.Errorf("%s %s with %s: %d %s\n%s", tc.method, tc.path, tc.header, st, cd, body)
		}
	}
	if _, err := c.ServiceClient().NewContainerClient("raw").NewBlobClient("b").GetProperties(ctx, nil); err != nil {
		t.Errorf("a refused request deleted the blob: %v", err)
	}
}
