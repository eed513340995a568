package blob_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestSDKPutBlockListConditionsSeeUncommittedBlob: a blob that has only
// staged blocks exists for Put Block List's conditions, with the
// Last-Modified of its first Put Block: an If-Modified-Since after it is
// 412 ConditionNotMet and commits nothing, one before it commits; an
// If-None-Match: * still commits (only a committed blob fails it).
func TestSDKPutBlockListConditionsSeeUncommittedBlob(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "staged", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("staged")
	staged := time.Unix(clock.Now().Unix(), 0)
	since := func(d time.Duration) *blockblob.CommitBlockListOptions {
		at := staged.Add(d)
		return &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfModifiedSince: &at}}}
	}
	cases := []struct {
		name     string
		opts     *blockblob.CommitBlockListOptions
		wantCode string // "" commits
	}{
		{"ifmodifiedsince-later", since(10 * time.Second), "ConditionNotMet"},
		{"ifmodifiedsince-earlier", since(-10 * time.Second), ""},
		{"ifnonematch-star", &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}}, ""},
	}
	for _, tc := range cases {
		bb := cc.NewBlockBlobClient(tc.name)
		if _, err := bb.StageBlock(ctx, blockID(0), rsc([]byte("staged")), nil); err != nil {
			t.Fatal(err)
		}
		_, err := bb.CommitBlockList(ctx, []string{blockID(0)}, tc.opts)
		if code(err) != tc.wantCode {
			t.Errorf("%s: Put Block List: %v, want %q", tc.name, err, tc.wantCode)
		}
		_, perr := bb.GetProperties(ctx, nil)
		if committed := perr == nil; committed != (tc.wantCode == "") {
			t.Errorf("%s: committed %v (%v), want %v", tc.name, committed, perr, tc.wantCode == "")
		}
	}
}

// TestSDKBlockIDLengthAfterCommit: the block ids of one blob's staged
// blocks must decode to one length (400 InvalidBlobOrBlock), but the
// committed blocks do not count: after a commit of 4-byte ids, blocks of
// 3-byte ids are staged and committed (azblob's
// TestBlobPutBlockListModifyBlob, recorded against Azure).
func TestSDKBlockIDLengthAfterCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ids", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("ids").NewBlockBlobClient("b")
	four := base64.StdEncoding.EncodeToString([]byte{0, 0, 0, 1})
	if _, err := bb.StageBlock(ctx, four, rsc([]byte("old")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{four}, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"0001", "0011"} { // 3 bytes each
		if _, err := bb.StageBlock(ctx, id, rsc([]byte("new ")), nil); err != nil {
			t.Fatalf("Put Block %s after a commit of 4-byte ids: %v", id, err)
		}
	}
	if _, err := bb.StageBlock(ctx, four, rsc([]byte("x")), nil); code(err) != "InvalidBlobOrBlock" {
		t.Errorf("Put Block of a 4-byte id among 3-byte staged ids: %v, want InvalidBlobOrBlock", err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{"0001", "0011"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, bb.BlobClient(), nil); string(got) != "new new " {
		t.Errorf("content %q, want %q", got, "new new ")
	}
}
