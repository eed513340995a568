package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
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

	// include=copy lists the copy's properties.
	listed, err := c.ServiceClient().NewContainerClient("dst").NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Include: container.ListBlobsInclude{Copy: true}}).NextPage(ctx)
	if err != nil || len(listed.Segment.BlobItems) != 1 {
		t.Fatalf("listing with include=copy: %v", err)
	}
	if lp := listed.Segment.BlobItems[0].Properties; lp.CopyID == nil || *lp.CopyID != *resp.CopyID || *lp.CopyStatus != blob.CopyStatusTypeSuccess {
		t.Fatalf("copy properties in the listing: %+v", lp)
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

// TestSDKCopyKeepsBlobType: copies of append and page blobs are append
// and page blobs with the same bytes (and page ranges).
func TestSDKCopyKeepsBlobType(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "kinds", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("kinds")
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("one\n")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlobClient("log-copy").CopyFromURL(ctx, ab.URL(), nil); err != nil {
		t.Fatal(err)
	}
	logCopy := cc.NewAppendBlobClient("log-copy")
	if _, err := logCopy.AppendBlock(ctx, rsc([]byte("two\n")), nil); err != nil {
		t.Fatalf("append to the copy of an append blob: %v", err)
	}
	if got := download(t, logCopy.BlobClient(), nil); string(got) != "one\ntwo\n" {
		t.Fatalf("append copy %q", got)
	}

	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 8192, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, rsc(bytes.Repeat([]byte("p"), 512)), blob.HTTPRange{Offset: 1024, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlobClient("disk-copy").CopyFromURL(ctx, pb.URL(), nil); err != nil {
		t.Fatal(err)
	}
	diskCopy := cc.NewPageBlobClient("disk-copy")
	props, err := diskCopy.GetProperties(ctx, nil)
	if err != nil || *props.BlobType != blob.BlobTypePageBlob || *props.ContentLength != 8192 {
		t.Fatalf("page copy: %v %v", err, props.BlobType)
	}
	resp, err := diskCopy.NewGetPageRangesPager(nil).NextPage(ctx)
	if err != nil || len(resp.PageList.PageRange) != 1 || *resp.PageList.PageRange[0].Start != 1024 {
		t.Fatalf("page ranges of the copy: %v %+v", err, resp.PageList.PageRange)
	}
	want := make([]byte, 8192)
	copy(want[1024:], bytes.Repeat([]byte("p"), 512))
	if got := download(t, diskCopy.BlobClient(), nil); !bytes.Equal(got, want) {
		t.Fatalf("page copy content differs")
	}
}

// TestRangeContentMD5: x-ms-range-get-content-md5 returns the MD5 of the
// range served (at most 4 MiB), and is refused without a bounded range.
func TestRangeContentMD5(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "md5s", nil); err != nil {
		t.Fatal(err)
	}
	data := []byte("0123456789abcdef")
	if _, err := c.UploadBuffer(ctx, "md5s", "b", data, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := c.ServiceClient().NewContainerClient("md5s").NewBlobClient("b").DownloadStream(ctx, &blob.DownloadStreamOptions{
		Range: blob.HTTPRange{Offset: 4, Count: 6}, RangeGetContentMD5: to.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := md5.Sum(data[4:10])
	if string(got) != "456789" || !bytes.Equal(resp.ContentMD5, sum[:]) {
		t.Fatalf("range %q md5 %x, want %x", got, resp.ContentMD5, sum)
	}
	if st, code, _ := rawRequest(t, e, "GET", "/md5s/b", map[string]string{"x-ms-range-get-content-md5": "true"}, ""); st != 400 || code != "OutOfRangeInput" {
		t.Fatalf("md5 without a range: %d %s", st, code)
	}
}

// TestSDKFromURL: Put Block From URL (with a source range) and Append
// Block From URL copy bytes of another blob of the account.
func TestSDKFromURL(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "urls", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("urls")
	src := cc.NewBlockBlobClient("src")
	if _, err := src.UploadBuffer(ctx, []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	dst := cc.NewBlockBlobClient("dst")
	if _, err := dst.StageBlockFromURL(ctx, blockID(0), src.URL(), &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 2, Count: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.StageBlockFromURL(ctx, blockID(1), src.URL(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.CommitBlockList(ctx, []string{blockID(0), blockID(1)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, dst.BlobClient(), nil); string(got) != "2340123456789" {
		t.Fatalf("blocks from URL: %q", got)
	}
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlockFromURL(ctx, src.URL(), &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 8, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "89" {
		t.Fatalf("append from URL: %q", got)
	}
	if _, err := dst.StageBlockFromURL(ctx, blockID(2), e.URL+"/urls/missing", nil); code(err) != "BlobNotFound" {
		t.Fatalf("missing source: %v", err)
	}
}
