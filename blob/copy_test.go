package blob_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

// TestSDKCopyBlob: Copy Blob and Copy Blob From URL within the account
// are synchronous (status success at once), copy content, properties and
// metadata (or take new metadata), honour source conditions and the
// destination's lease; Abort Copy finds nothing to abort.
func TestSDKCopyBlob(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	for _, n := range []string{"src", "dst"} {
		if _, err := c.CreateContainer(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	srcBlob := c.ServiceClient().NewContainerClient("src").NewBlockBlobClient("a/file.txt")
	if _, err := srcBlob.UploadBuffer(ctx, []byte("copy me"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := srcBlob.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := srcBlob.SetMetadata(ctx, map[string]*string{"origin": to.Ptr("src")}, nil); err != nil {
		t.Fatal(err)
	}
	dst := c.ServiceClient().NewContainerClient("dst").NewBlobClient("copy.txt")

	resp, err := dst.StartCopyFromURL(ctx, srcBlob.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.CopyStatus == nil || *resp.CopyStatus != blob.CopyStatusTypeSuccess || resp.CopyID == nil {
		t.Fatalf("copy status %v id %v", resp.CopyStatus, resp.CopyID)
	}
	if got := download(t, dst, nil); string(got) != "copy me" {
		t.Fatalf("copied content %q", got)
	}
	props, err := dst.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *props.ContentType != "text/plain" || props.Metadata["Origin"] == nil && props.Metadata["origin"] == nil ||
		props.CopyStatus == nil || *props.CopyStatus != blob.CopyStatusTypeSuccess || *props.CopyID != *resp.CopyID {
		t.Fatalf("copied properties: type %v md %v status %v", *props.ContentType, props.Metadata, props.CopyStatus)
	}

	// Synchronous Copy Blob From URL with new metadata.
	sync, err := c.ServiceClient().NewContainerClient("dst").NewBlobClient("sync.txt").CopyFromURL(ctx, srcBlob.URL(),
		&blob.CopyFromURLOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	if err != nil || sync.CopyStatus == nil || *sync.CopyStatus != "success" {
		t.Fatalf("copy from URL: %v", err)
	}
	sp, _ := c.ServiceClient().NewContainerClient("dst").NewBlobClient("sync.txt").GetProperties(ctx, nil)
	if len(sp.Metadata) != 1 {
		t.Fatalf("metadata of the sync copy: %v", sp.Metadata)
	}

	// Source conditions, a missing source, the destination's lease.
	stale := azcoreETag(`"0xDEAD"`)
	if _, err := dst.StartCopyFromURL(ctx, srcBlob.URL(), &blob.StartCopyFromURLOptions{
		SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: &stale}}); code(err) != "ConditionNotMet" {
		t.Fatalf("stale source If-Match: %v", err)
	}
	if _, err := dst.StartCopyFromURL(ctx, e.URL+"/src/missing", nil); code(err) != "BlobNotFound" {
		t.Fatalf("missing source: %v", err)
	}
	lc, _ := lease.NewBlobClient(dst, &lease.BlobClientOptions{LeaseID: to.Ptr(idA)})
	if _, err := lc.AcquireLease(ctx, -1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.StartCopyFromURL(ctx, srcBlob.URL(), nil); code(err) != "LeaseIdMissing" {
		t.Fatalf("copy onto a leased blob without its id: %v", err)
	}
	if _, err := dst.StartCopyFromURL(ctx, srcBlob.URL(), &blob.StartCopyFromURLOptions{
		AccessConditions: &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(idA)}}}); err != nil {
		t.Fatalf("copy with the lease id: %v", err)
	}
	if _, err := dst.AbortCopyFromURL(ctx, *resp.CopyID, nil); code(err) != "NoPendingCopyOperation" {
		t.Fatalf("abort: %v", err)
	}
}
