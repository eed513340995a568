package blob_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestSDKSealAppendBlob follows azblob's TestSeal,
// TestSealWithAccessConditions and TestCopySealedBlob: a sealed append
// blob answers x-ms-blob-sealed and refuses appends (409 BlobIsSealed);
// Seal takes a write's conditions and x-ms-blob-condition-appendpos; a
// copy of a sealed blob is sealed unless x-ms-seal-blob: false, and
// x-ms-seal-blob: true seals a copy.
func TestSDKSealAppendBlob(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "seal", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("seal")
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("entry")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.Seal(ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr[int64](3)}}); code(err) != "AppendPositionConditionNotMet" {
		t.Errorf("Seal at a wrong append position: %v", err)
	}
	if _, err := ab.Seal(ctx, &appendblob.SealOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcoreETag(`"0x1"`))}}}); code(err) != "ConditionNotMet" {
		t.Errorf("Seal with If-Match of another ETag: %v", err)
	}
	r, err := ab.Seal(ctx, &appendblob.SealOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: to.Ptr[int64](5)}})
	if err != nil || r.IsSealed == nil || !*r.IsSealed {
		t.Fatalf("Seal: %v %v", err, r.IsSealed)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("more")), nil); code(err) != "BlobIsSealed" {
		t.Errorf("Append Block on a sealed blob: %v, want 409 BlobIsSealed", err)
	}
	if p, err := ab.GetProperties(ctx, nil); err != nil || p.IsSealed == nil || !*p.IsSealed {
		t.Errorf("Get Blob Properties of a sealed blob: %v %v", err, p.IsSealed)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "entry" {
		t.Errorf("sealed content %q", got)
	}
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{})
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Segment.BlobItems) != 1 || page.Segment.BlobItems[0].Properties.IsSealed == nil || !*page.Segment.BlobItems[0].Properties.IsSealed {
		t.Errorf("List Blobs of a sealed blob: %v", err)
	}
	if _, err := cc.NewBlockBlobClient("block").Upload(ctx, rsc([]byte("x")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewAppendBlobClient("block").Seal(ctx, nil); code(err) != "InvalidBlobType" {
		t.Errorf("Seal of a block blob: %v", err)
	}

	for _, tc := range []struct {
		name   string
		seal   *bool
		sealed bool
	}{{"copy-default", nil, true}, {"copy-true", to.Ptr(true), true}, {"copy-false", to.Ptr(false), false}} {
		dst := cc.NewAppendBlobClient(tc.name)
		if _, err := dst.StartCopyFromURL(ctx, ab.URL(), &blob.StartCopyFromURLOptions{SealBlob: tc.seal}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, err := dst.GetProperties(ctx, nil)
		if err != nil || (p.IsSealed != nil && *p.IsSealed) != tc.sealed {
			t.Errorf("%s: %v sealed %v, want %v", tc.name, err, p.IsSealed, tc.sealed)
		}
		_, err = dst.AppendBlock(ctx, rsc([]byte("more")), nil)
		if tc.sealed && code(err) != "BlobIsSealed" || !tc.sealed && err != nil {
			t.Errorf("%s: Append Block: %v", tc.name, err)
		}
	}
}
