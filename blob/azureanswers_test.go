package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestCreateAppendBlobStoresNoMD5: Create Append Blob stores no
// Content-MD5 unless x-ms-blob-content-md5 gives one (azblob's
// TestBlobCreateAppendHTTPHeaders, recorded against Azure), while Put Blob
// of an empty block blob stores the MD5 of nothing, as before.
func TestCreateAppendBlobStoresNoMD5(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "md5", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("md5")
	given := md5.Sum([]byte("given"))
	empty := md5.Sum(nil)
	for _, tc := range []struct {
		name   string
		create func() error
		want   []byte
	}{
		{"append", func() error {
			_, err := cc.NewAppendBlobClient("append").Create(ctx, nil)
			return err
		}, nil},
		{"appendwithmd5", func() error {
			_, err := cc.NewAppendBlobClient("appendwithmd5").Create(ctx, &appendblob.CreateOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentMD5: given[:]}})
			return err
		}, given[:]},
		{"emptyblock", func() error {
			_, err := cc.NewBlockBlobClient("emptyblock").Upload(ctx, rsc(nil), nil)
			return err
		}, empty[:]},
	} {
		if err := tc.create(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, err := cc.NewBlobClient(tc.name).GetProperties(ctx, nil)
		if err != nil || !bytes.Equal(p.ContentMD5, tc.want) {
			t.Errorf("%s: %v, Content-MD5 %x, want %x", tc.name, err, p.ContentMD5, tc.want)
		}
	}
	// An append blob copied keeps having none.
	if _, err := cc.NewBlobClient("appendcopy").StartCopyFromURL(ctx, cc.NewBlobClient("append").URL(), nil); err != nil {
		t.Fatal(err)
	}
	if p, err := cc.NewBlobClient("appendcopy").GetProperties(ctx, nil); err != nil || p.ContentMD5 != nil {
		t.Errorf("copy of an empty append blob: %v, Content-MD5 %x, want none", err, p.ContentMD5)
	}
}

// TestAbortCopyIDMustBeAGUID: Abort Copy Blob with a copyid that is not
// a GUID is 400 InvalidQueryParameterValue even on a missing blob
// (azblob's TestBlobAbortCopyNoCopyStarted, recorded against Azure);
// without copyid 400 MissingRequiredQueryParameter; a GUID on a missing
// blob is 404 BlobNotFound.
func TestAbortCopyIDMustBeAGUID(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "abort", nil); err != nil {
		t.Fatal(err)
	}
	missing := c.ServiceClient().NewContainerClient("abort").NewBlobClient("missing")
	if _, err := missing.AbortCopyFromURL(ctx, "copynotstarted", nil); code(err) != "InvalidQueryParameterValue" {
		t.Errorf("abort copynotstarted: %v, want InvalidQueryParameterValue", err)
	}
	if _, err := missing.AbortCopyFromURL(ctx, "0a1b2c3d-0000-4000-8000-000000000001", nil); code(err) != "BlobNotFound" {
		t.Errorf("abort a GUID on a missing blob: %v, want BlobNotFound", err)
	}
	st, errCode, _ := rawRequest(t, e, "PUT", "/abort/missing?comp=copy", map[string]string{"x-ms-copy-action": "abort"}, "")
	if st != http.StatusBadRequest || errCode != "MissingRequiredQueryParameter" {
		t.Errorf("abort without copyid: %d %s, want 400 MissingRequiredQueryParameter", st, errCode)
	}
}

// TestSetBlobExpiryNeedsHierarchicalNamespace: Set Blob Expiry is 400
// HierarchicalNamespaceNotEnabled (the emulated account has a flat
// namespace; azblob's TestBlockBlobSetExpiryOnHnsDisabledAccount,
// recorded against Azure), and the blob keeps no expiry.
func TestSetBlobExpiryNeedsHierarchicalNamespace(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "expiry", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("expiry").NewBlockBlobClient("b")
	if _, err := bb.Upload(ctx, rsc([]byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	_, err := bb.SetExpiry(ctx, blockblob.ExpiryTypeNever{}, nil)
	if code(err) != "HierarchicalNamespaceNotEnabled" || status(err) != http.StatusBadRequest {
		t.Errorf("Set Blob Expiry: %v, want 400 HierarchicalNamespaceNotEnabled", err)
	}
	if p, err := bb.GetProperties(ctx, nil); err != nil || p.ExpiresOn != nil {
		t.Errorf("after a refused Set Blob Expiry: %v, expires on %v", err, p.ExpiresOn)
	}
}
