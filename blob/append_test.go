package blob_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestSDKAppendBlobs: Create makes an empty append blob; Append Block adds
// blocks at the end (reporting the offset and block count), honours
// x-ms-blob-condition-appendpos and -maxsize (412 with their own codes)
// and the ETag conditions; block-blob operations on it are 409
// InvalidBlobType, and Put Blob of a block blob replaces it.
func TestSDKAppendBlobs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "logs", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("logs")
	ab := cc.NewAppendBlobClient("app.log")
	if _, err := ab.Create(ctx, &appendblob.CreateOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}}); err != nil {
		t.Fatal(err)
	}
	var etag string
	for i, line := range []string{"first\n", "second\n", "third\n"} {
		resp, err := ab.AppendBlock(ctx, rsc([]byte(line)), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"0", "6", "13"}[i]
		if resp.BlobAppendOffset == nil || *resp.BlobAppendOffset != want || *resp.BlobCommittedBlockCount != int32(i+1) {
			t.Fatalf("append %d: offset %v count %v", i, resp.BlobAppendOffset, resp.BlobCommittedBlockCount)
		}
		etag = string(*resp.ETag)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "first\nsecond\nthird\n" {
		t.Fatalf("content %q", got)
	}
	props, err := ab.GetProperties(ctx, nil)
	if err != nil || *props.BlobType != blob.BlobTypeAppendBlob || *props.BlobCommittedBlockCount != 3 || *props.ContentType != "text/plain" {
		t.Fatalf("properties: %v %+v", err, props)
	}

	pos := func(p, max *int64) *appendblob.AppendBlockOptions {
		return &appendblob.AppendBlockOptions{AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: p, MaxSize: max}}
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("x")), pos(to.Ptr(int64(5)), nil)); code(err) != "AppendPositionConditionNotMet" {
		t.Fatalf("wrong append position: %v", err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("fourth\n")), pos(to.Ptr(int64(19)), nil)); err != nil {
		t.Fatalf("right append position: %v", err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("fifth\n")), pos(nil, to.Ptr(int64(30)))); code(err) != "MaxBlobSizeConditionNotMet" {
		t.Fatalf("over max size: %v", err)
	}
	stale := azcoreETag(etag)
	if _, err := ab.AppendBlock(ctx, rsc([]byte("x")), &appendblob.AppendBlockOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &stale}}}); code(err) != "ConditionNotMet" {
		t.Fatalf("stale If-Match: %v", err)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "first\nsecond\nthird\nfourth\n" {
		t.Fatalf("content after refused appends %q", got)
	}

	bb := cc.NewBlockBlobClient("app.log")
	if _, err := bb.StageBlock(ctx, blockID(1), rsc([]byte("x")), nil); code(err) != "InvalidBlobType" {
		t.Fatalf("Put Block on an append blob: %v", err)
	}
	if _, err := bb.GetBlockList(ctx, blockblob.BlockListTypeAll, nil); code(err) != "InvalidBlobType" {
		t.Fatalf("Get Block List on an append blob: %v", err)
	}
	if _, err := cc.NewAppendBlobClient("missing").AppendBlock(ctx, rsc([]byte("x")), nil); code(err) != "BlobNotFound" {
		t.Fatalf("append to a missing blob: %v", err)
	}
	if _, err := bb.UploadBuffer(ctx, []byte("now a block blob"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("x")), nil); code(err) != "InvalidBlobType" {
		t.Fatalf("append to a block blob: %v", err)
	}
}
