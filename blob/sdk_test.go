package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// code returns the Azure error code of err ("" if none).
func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// status returns the HTTP status of err (0 if none).
func status(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func rsc(b []byte) io.ReadSeekCloser { return streamingNop{bytes.NewReader(b)} }

type streamingNop struct{ *bytes.Reader }

func (streamingNop) Close() error { return nil }

func blockID(i int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%06d", i))
}

// TestSDKContainers drives Create (with public access and metadata), Get
// Properties, Set Metadata, List Containers (prefix, paging,
// include=metadata) and Delete through azblob, unchanged.
func TestSDKContainers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	svc := c.ServiceClient()

	if _, err := c.CreateContainer(ctx, "docs", &azblob.CreateContainerOptions{
		Metadata: map[string]*string{"owner": to.Ptr("alice")}, Access: to.Ptr(container.PublicAccessTypeBlob)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(ctx, "docs", nil); code(err) != "ContainerAlreadyExists" {
		t.Fatalf("second create: %v", err)
	}
	for _, n := range []string{"alpha", "alpha-2", "beta"} {
		if _, err := c.CreateContainer(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateContainer(ctx, "Bad_Name", nil); code(err) != "InvalidResourceName" {
		t.Fatalf("bad name: %v", err)
	}

	cc := svc.NewContainerClient("docs")
	props, err := cc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if props.BlobPublicAccess == nil || *props.BlobPublicAccess != container.PublicAccessTypeBlob {
		t.Errorf("public access %v", props.BlobPublicAccess)
	}
	if props.Metadata["Owner"] == nil && props.Metadata["owner"] == nil {
		t.Errorf("metadata %v", props.Metadata)
	}
	if props.ETag == nil || props.LastModified == nil || *props.LeaseState != "available" {
		t.Errorf("properties %+v", props)
	}
	before := *props.ETag
	set, err := cc.SetMetadata(ctx, &container.SetMetadataOptions{Metadata: map[string]*string{"team": to.Ptr("blue")}})
	if err != nil {
		t.Fatal(err)
	}
	if *set.ETag == before {
		t.Error("Set Metadata kept the ETag")
	}
	props, _ = cc.GetProperties(ctx, nil)
	if len(props.Metadata) != 1 || props.Metadata["Team"] == nil && props.Metadata["team"] == nil {
		t.Errorf("metadata after set %v", props.Metadata)
	}

	var names []string
	pages := 0
	pager := c.NewListContainersPager(&azblob.ListContainersOptions{MaxResults: to.Ptr(int32(3)), Include: azblob.ListContainersInclude{Metadata: true}})
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range resp.ContainerItems {
			names = append(names, *it.Name)
			if *it.Name == "docs" && (it.Metadata["team"] == nil || *it.Metadata["team"] != "blue") {
				t.Errorf("docs metadata in listing: %v", it.Metadata)
			}
		}
	}
	if got := strings.Join(names, " "); got != "alpha alpha-2 beta docs" || pages != 2 {
		t.Fatalf("listed %q in %d pages", got, pages)
	}
	pager = c.NewListContainersPager(&azblob.ListContainersOptions{Prefix: to.Ptr("alp")})
	resp, err := pager.NextPage(ctx)
	if err != nil || len(resp.ContainerItems) != 2 {
		t.Fatalf("prefix listing: %v %d", err, len(resp.ContainerItems))
	}

	if _, err := c.DeleteContainer(ctx, "docs", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.GetProperties(ctx, nil); code(err) != "ContainerNotFound" {
		t.Fatalf("after delete: %v", err)
	}
	// Azure accepts a second delete while the container is being
	// deleted (202; see blobsvc.ContainerDeleteWindow).
	if _, err := c.DeleteContainer(ctx, "docs", nil); err != nil {
		t.Fatalf("second delete right after the first: %v", err)
	}

	// Service properties are stored and returned; account information.
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(3))}}); err != nil {
		t.Fatal(err)
	}
	sp, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp.DeleteRetentionPolicy == nil || sp.DeleteRetentionPolicy.Days == nil || *sp.DeleteRetentionPolicy.Days != 3 {
		t.Errorf("service properties not kept: %+v", sp.DeleteRetentionPolicy)
	}
	if info, err := svc.GetAccountInfo(ctx, nil); err != nil || info.SKUName == nil {
		t.Errorf("account info: %v %+v", err, info)
	}
}

// TestSDKBlockBlobs drives Put Blob, Get Blob (whole, ranges), Get/Set
// Properties, Get/Set Metadata, Put Block, Put Block List (latest,
// committed, uncommitted), Get Block List and Delete through azblob.
func TestSDKBlockBlobs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "data", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("data")
	bb := cc.NewBlockBlobClient("dir/hello.txt")

	content := []byte("hello, blob world")
	up, err := bb.Upload(ctx, rsc(content), &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")},
		Metadata:    map[string]*string{"kind": to.Ptr("greeting")},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(content)
	if !bytes.Equal(up.ContentMD5, sum[:]) {
		t.Errorf("upload MD5 %x", up.ContentMD5)
	}
	got := download(t, bb.BlobClient(), nil)
	if !bytes.Equal(got, content) {
		t.Fatalf("download %q", got)
	}
	if part := download(t, bb.BlobClient(), &blob.HTTPRange{Offset: 7, Count: 4}); string(part) != "blob" {
		t.Fatalf("range download %q", part)
	}
	if tail := download(t, bb.BlobClient(), &blob.HTTPRange{Offset: 12}); string(tail) != "world" {
		t.Fatalf("open range download %q", tail)
	}
	if _, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: 100, Count: 5}}); code(err) != "InvalidRange" {
		t.Fatalf("range past the end: %v", err)
	}

	props, err := bb.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *props.ContentLength != int64(len(content)) || *props.ContentType != "text/plain" || *props.BlobType != blob.BlobTypeBlockBlob ||
		props.Metadata["Kind"] == nil && props.Metadata["kind"] == nil || props.CreationTime == nil {
		t.Errorf("properties %+v", props)
	}
	etag := *props.ETag
	sp, err := bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/markdown"), BlobCacheControl: to.Ptr("no-cache")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *sp.ETag == etag {
		t.Error("Set Properties kept the ETag")
	}
	if _, err := bb.SetMetadata(ctx, map[string]*string{"a": to.Ptr("1"), "b": to.Ptr("2")}, nil); err != nil {
		t.Fatal(err)
	}
	props, _ = bb.GetProperties(ctx, nil)
	if *props.ContentType != "text/markdown" || *props.CacheControl != "no-cache" || len(props.Metadata) != 2 {
		t.Errorf("after set: type %v cache %v md %v", *props.ContentType, props.CacheControl, props.Metadata)
	}

	// Blocks: stage three, commit two (latest), then recommit with one
	// committed and one new uncommitted block.
	big := cc.NewBlockBlobClient("big.bin")
	parts := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 2000), bytes.Repeat([]byte("c"), 3000)}
	for i, p := range parts {
		if _, err := big.StageBlock(ctx, blockID(i), rsc(p), nil); err != nil {
			t.Fatal(err)
		}
	}
	bl, err := big.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bl.UncommittedBlocks) != 3 || len(bl.CommittedBlocks) != 0 {
		t.Fatalf("block list before commit: %d uncommitted %d committed", len(bl.UncommittedBlocks), len(bl.CommittedBlocks))
	}
	if _, err := big.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("uncommitted blob visible: %v", err)
	}
	if _, err := big.CommitBlockList(ctx, []string{blockID(0), blockID(2)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, big.BlobClient(), nil); !bytes.Equal(got, append(append([]byte{}, parts[0]...), parts[2]...)) {
		t.Fatalf("committed content: %d bytes", len(got))
	}
	bl, _ = big.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
	if len(bl.CommittedBlocks) != 2 || len(bl.UncommittedBlocks) != 0 || *bl.CommittedBlocks[1].Size != 3000 {
		t.Fatalf("block list after commit: %+v", bl.BlockList)
	}
	// Re-stage id 0 with new data: Committed(0) must still take the old
	// data, Latest(0) the new.
	if _, err := big.StageBlock(ctx, blockID(0), rsc([]byte("NEW")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := big.StageBlock(ctx, blockID(3), rsc([]byte("tail")), nil); err != nil {
		t.Fatal(err)
	}
	commitRaw(t, e, "data", "big.bin", `<BlockList><Committed>`+blockID(0)+`</Committed><Uncommitted>`+blockID(3)+`</Uncommitted><Latest>`+blockID(0)+`</Latest></BlockList>`, 201)
	want := string(parts[0]) + "tail" + "NEW"
	if got := download(t, big.BlobClient(), nil); string(got) != want {
		t.Fatalf("mixed commit: %d bytes, want %d", len(got), len(want))
	}
	// A block that is not where the list says: 400 InvalidBlockList.
	if _, err := big.CommitBlockList(ctx, []string{blockID(9)}, nil); code(err) != "InvalidBlockList" {
		t.Fatalf("unknown block: %v", err)
	}
	commitRaw(t, e, "data", "big.bin", `<BlockList><Uncommitted>`+blockID(2)+`</Uncommitted></BlockList>`, 400)

	// Flat and hierarchical listings.
	for _, n := range []string{"dir/a", "dir/sub/b", "dir/sub/c", "top"} {
		if _, err := cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte(n), nil); err != nil {
			t.Fatal(err)
		}
	}
	var flat []string
	fp := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(2)), Include: container.ListBlobsInclude{Metadata: true}})
	for fp.More() {
		resp, err := fp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range resp.Segment.BlobItems {
			flat = append(flat, *it.Name)
			if *it.Name == "dir/hello.txt" && len(it.Metadata) != 2 {
				t.Errorf("metadata in listing: %v", it.Metadata)
			}
		}
	}
	if got := strings.Join(flat, " "); got != "big.bin dir/a dir/hello.txt dir/sub/b dir/sub/c top" {
		t.Fatalf("flat listing %q", got)
	}
	var hier []string
	hp := cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("dir/"), MaxResults: to.Ptr(int32(1))})
	for hp.More() {
		resp, err := hp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.Segment.BlobPrefixes {
			hier = append(hier, "P:"+*p.Name)
		}
		for _, it := range resp.Segment.BlobItems {
			hier = append(hier, *it.Name)
		}
	}
	if got := strings.Join(hier, " "); got != "dir/a dir/hello.txt P:dir/sub/" {
		t.Fatalf("hierarchical listing %q", got)
	}

	if _, err := bb.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := cc.NewBlockBlobClient("x").Upload(ctx, rsc(nil), nil); err != nil {
		t.Fatalf("empty blob: %v", err)
	}
	if got := download(t, cc.NewBlobClient("x"), nil); len(got) != 0 {
		t.Fatalf("empty blob read %q", got)
	}
	if _, err := c.ServiceClient().NewContainerClient("nope").NewBlockBlobClient("x").UploadBuffer(ctx, []byte("x"), nil); code(err) != "ContainerNotFound" {
		t.Fatalf("upload to missing container: %v", err)
	}
}

func download(t *testing.T, b *blob.Client, rng *blob.HTTPRange) []byte {
	t.Helper()
	o := &blob.DownloadStreamOptions{}
	if rng != nil {
		o.Range = *rng
	}
	resp, err := b.DownloadStream(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSDKAccountInfoAnywhere: Get Account Information answers on the
// account, a container and a blob URL (azblob has it on every client;
// AzCopy asks it of each destination blob before a service-side copy),
// with Shared Key and with a SAS of the blob it names.
func TestSDKAccountInfoAnywhere(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "info", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("info")
	bc := cc.NewBlobClient("dir/doc")
	if _, err := c.ServiceClient().GetAccountInfo(ctx, nil); err != nil {
		t.Errorf("on the account: %v", err)
	}
	if info, err := cc.GetAccountInfo(ctx, nil); err != nil || info.SKUName == nil {
		t.Errorf("on a container: %v", err)
	}
	if info, err := bc.GetAccountInfo(ctx, nil); err != nil || info.AccountKind == nil {
		t.Errorf("on a blob (that need not exist): %v", err)
	}
	signed, err := bc.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := blob.NewClientWithNoCredential(signed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.GetAccountInfo(ctx, nil); err != nil {
		t.Errorf("on a blob with its SAS: %v", err)
	}
	// The SAS still has to cover what the URL names.
	other, err := blob.NewClientWithNoCredential(cc.NewBlobClient("other").URL()+"?"+strings.SplitN(signed, "?", 2)[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.GetAccountInfo(ctx, nil); status(err) != 403 {
		t.Errorf("on another blob with this blob's SAS: %v, want 403", err)
	}
}
