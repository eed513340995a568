package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
)

// withReadSAS returns rawURL, a blob (or snapshot) URL in cc, with a
// container SAS granting read appended: the source of a From-URL
// operation carries its own authorization, as on Azure.
func withReadSAS(t testing.TB, cc *container.Client, rawURL string) string {
	t.Helper()
	return withSAS(t, cc, rawURL, sas.ContainerPermissions{Read: true})
}

func withSAS(t testing.TB, cc *container.Client, rawURL string, perm sas.ContainerPermissions) string {
	t.Helper()
	signed, err := cc.GetSASURL(perm, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, query, _ := strings.Cut(signed, "?")
	if strings.Contains(rawURL, "?") {
		return rawURL + "&" + query
	}
	return rawURL + "?" + query
}

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
	sync, err := c.ServiceClient().NewContainerClient("dst").NewBlobClient("sync.txt").CopyFromURL(ctx, withReadSAS(t, c.ServiceClient().NewContainerClient("src"), srcBlob.URL()),
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
		SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{SourceIfMatch: &stale}}); code(err) != "SourceConditionNotMet" {
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
	if _, err := cc.NewBlobClient("log-copy").CopyFromURL(ctx, withReadSAS(t, cc, ab.URL()), nil); err != nil {
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
	if _, err := cc.NewBlobClient("disk-copy").CopyFromURL(ctx, withReadSAS(t, cc, pb.URL()), nil); err != nil {
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
	if _, err := dst.StageBlockFromURL(ctx, blockID(0), withReadSAS(t, cc, src.URL()), &blockblob.StageBlockFromURLOptions{Range: blob.HTTPRange{Offset: 2, Count: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.StageBlockFromURL(ctx, blockID(1), withReadSAS(t, cc, src.URL()), nil); err != nil {
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
	if _, err := ab.AppendBlockFromURL(ctx, withReadSAS(t, cc, src.URL()), &appendblob.AppendBlockFromURLOptions{Range: blob.HTTPRange{Offset: 8, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "89" {
		t.Fatalf("append from URL: %q", got)
	}
	if _, err := dst.StageBlockFromURL(ctx, blockID(2), withReadSAS(t, cc, e.URL+"/urls/missing"), nil); code(err) != "BlobNotFound" {
		t.Fatalf("missing source: %v", err)
	}
}

// TestFromURLSourceAuthorization: the source of a From-URL operation is
// read with its own authorization, as Azure documents for Copy Blob From
// URL and Put Block From URL ("either public or authorized with a shared
// access signature"), even within the account: without a SAS that grants
// read, or with a SAS that does not verify, the answer is 403
// CannotVerifyCopySource; a source in a public container needs none.
// Copy Blob proper still reads a source of its own account with the
// request's Shared Key.
func TestFromURLSourceAuthorization(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "priv", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(ctx, "pub", &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeBlob)}); err != nil {
		t.Fatal(err)
	}
	priv := c.ServiceClient().NewContainerClient("priv")
	pub := c.ServiceClient().NewContainerClient("pub")
	for _, cc := range []*container.Client{priv, pub} {
		if _, err := cc.NewBlockBlobClient("src").UploadBuffer(ctx, []byte("0123456789"), nil); err != nil {
			t.Fatal(err)
		}
	}
	src := priv.NewBlobClient("src").URL()
	acctSAS, err := c.ServiceClient().GetSASURL(sas.AccountResourceTypes{Object: true}, sas.AccountPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, acctQuery, _ := strings.Cut(acctSAS, "?")
	badSig := withReadSAS(t, priv, src)
	i := strings.Index(badSig, "sig=") + len("sig=")
	badSig = badSig[:i] + "AAAA" + badSig[i+4:]

	dst := priv.NewBlockBlobClient("dst")
	stage := func(source string) error {
		_, err := dst.StageBlockFromURL(ctx, blockID(0), source, nil)
		return err
	}
	for _, tc := range []struct {
		name, source string
		want         string // "" for success
	}{
		{"no SAS", src, "CannotVerifyCopySource"},
		{"container SAS with read", withReadSAS(t, priv, src), ""},
		{"account SAS with read on objects", src + "?" + acctQuery, ""},
		{"SAS without read", withSAS(t, priv, src, sas.ContainerPermissions{Write: true}), "CannotVerifyCopySource"},
		{"SAS with a wrong signature", badSig, "CannotVerifyCopySource"},
		{"public container, no SAS", pub.NewBlobClient("src").URL(), ""},
	} {
		err := stage(tc.source)
		if got := code(err); got != tc.want {
			t.Errorf("Put Block From URL, %s: error code %q (%v), want %q", tc.name, got, err, tc.want)
		}
		if tc.want != "" && status(err) != http.StatusForbidden {
			t.Errorf("Put Block From URL, %s: status %d, want 403", tc.name, status(err))
		}
	}

	// Every From-URL operation checks; nothing is written when it fails.
	ab := priv.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlockFromURL(ctx, src, nil); code(err) != "CannotVerifyCopySource" {
		t.Errorf("Append Block From URL without a SAS: %v", err)
	}
	pb := priv.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 1024, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPagesFromURL(ctx, src, 0, 0, 512, nil); code(err) != "CannotVerifyCopySource" {
		t.Errorf("Put Page From URL without a SAS: %v", err)
	}
	if _, err := priv.NewBlobClient("sync").CopyFromURL(ctx, src, nil); code(err) != "CannotVerifyCopySource" {
		t.Errorf("Copy Blob From URL without a SAS: %v", err)
	}
	if _, err := priv.NewBlobClient("sync").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a refused Copy Blob From URL left a blob: %v", err)
	}
	if st, got, _ := rawRequest(t, e, "PUT", "/priv/dst?comp=block&blockid="+blockID(1),
		map[string]string{"x-ms-copy-source": src, "x-ms-copy-source-authorization": "Bearer token"}, ""); st != 403 || got != "CannotVerifyCopySource" {
		t.Errorf("x-ms-copy-source-authorization (OAuth): %d %s, want 403 CannotVerifyCopySource", st, got)
	}

	// Copy Blob (asynchronous in Azure) within the account needs no SAS
	// with Shared Key ...
	if _, err := priv.NewBlobClient("async").StartCopyFromURL(ctx, src, nil); err != nil {
		t.Errorf("Copy Blob within the account without a SAS: %v", err)
	}
	// ... but a SAS for the destination does not reach the source.
	if _, err := c.CreateContainer(ctx, "mine", nil); err != nil {
		t.Fatal(err)
	}
	mineURL, err := c.ServiceClient().NewContainerClient("mine").GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Create: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := container.NewClientWithNoCredential(mineURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mine.NewBlobClient("stolen").StartCopyFromURL(ctx, src, nil); code(err) != "CannotVerifyCopySource" {
		t.Errorf("Copy Blob under a destination SAS from a private source without its own SAS: %v", err)
	}
	if _, err := mine.NewBlobClient("stolen").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("the refused copy left a blob: %v", err)
	}
	if _, err := mine.NewBlobClient("granted").StartCopyFromURL(ctx, withReadSAS(t, priv, src), nil); err != nil {
		t.Errorf("Copy Blob under a destination SAS from a source with its own SAS: %v", err)
	}
}

// TestSDKPutBlobFromURL: Put Blob From URL (blockblob UploadBlobFromURL)
// makes a block blob of the source's bytes, answering 201 with the MD5:
// the source's properties by default or the request's with
// CopySourceBlobProperties false, the request's metadata, the source's
// tags with CopySourceTags COPY; the source needs its own SAS, and a
// wrong x-ms-source-content-md5 is 400 Md5Mismatch, writing nothing.
func TestSDKPutBlobFromURL(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "pbfu", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("pbfu")
	content := bytes.Repeat([]byte("from url "), 1_000_000) // 9 MB: more than one content-store block
	src := cc.NewBlockBlobClient("src")
	if _, err := src.UploadBuffer(ctx, content, &blockblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain"), BlobContentLanguage: to.Ptr("en")},
		Metadata:    map[string]*string{"origin": to.Ptr("src")},
		Tags:        map[string]string{"stage": "raw"},
	}); err != nil {
		t.Fatal(err)
	}
	srcURL := withReadSAS(t, cc, src.URL())

	dst := cc.NewBlockBlobClient("dst")
	resp, err := dst.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{
		Metadata:       map[string]*string{"origin": to.Ptr("request")},
		CopySourceTags: to.Ptr(blockblob.BlobCopySourceTagsCopy),
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(content)
	if !bytes.Equal(resp.ContentMD5, sum[:]) {
		t.Errorf("Content-MD5 %x, want %x", resp.ContentMD5, sum)
	}
	if got := download(t, dst.BlobClient(), nil); !bytes.Equal(got, content) {
		t.Fatalf("content: %d bytes, want %d", len(got), len(content))
	}
	p, err := dst.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.ContentType != "text/plain" || *p.ContentLanguage != "en" {
		t.Errorf("properties %q %q, want the source's", *p.ContentType, *p.ContentLanguage)
	}
	if len(p.Metadata) != 1 || *p.Metadata["Origin"] != "request" {
		t.Errorf("metadata %v, want the request's", p.Metadata)
	}
	if tags, err := dst.GetTags(ctx, nil); err != nil || len(tags.BlobTagSet) != 1 || *tags.BlobTagSet[0].Value != "raw" {
		t.Errorf("tags: %v %+v, want the source's", err, tags.BlobTagSet)
	}

	own := cc.NewBlockBlobClient("own")
	if _, err := own.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{
		CopySourceBlobProperties: to.Ptr(false),
		HTTPHeaders:              &blob.HTTPHeaders{BlobContentType: to.Ptr("application/x-own")},
	}); err != nil {
		t.Fatal(err)
	}
	if p, err := own.GetProperties(ctx, nil); err != nil || *p.ContentType != "application/x-own" || p.ContentLanguage != nil {
		t.Errorf("with CopySourceBlobProperties false: %v, type %v, language %v", err, p.ContentType, p.ContentLanguage)
	}

	bad := cc.NewBlockBlobClient("bad")
	if _, err := bad.UploadBlobFromURL(ctx, src.URL(), nil); code(err) != "CannotVerifyCopySource" {
		t.Errorf("source without a SAS: %v", err)
	}
	wrong := md5.Sum([]byte("something else"))
	if _, err := bad.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{SourceContentMD5: wrong[:]}); code(err) != "Md5Mismatch" {
		t.Errorf("wrong x-ms-source-content-md5: %v", err)
	}
	if _, err := bad.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a refused Put Blob From URL left a blob: %v", err)
	}
}

// TestSDKPutBlobFromURLHeaders: Put Blob From URL sets the request's
// x-ms-blob-content-* over the source's properties (azblob's
// TestPutBlobFromURLWithHeaders) and takes the source's tier unless it
// sends one or x-ms-copy-source-blob-properties is false
// (TestPutBlobFromUrlWithCPK).
func TestSDKPutBlobFromURLHeaders(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "pbfh", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("pbfh")
	src := cc.NewBlockBlobClient("src")
	if _, err := src.Upload(ctx, rsc([]byte("source")), &blockblob.UploadOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain"), BlobContentLanguage: to.Ptr("en")},
		Tier:        to.Ptr(blob.AccessTierCool),
	}); err != nil {
		t.Fatal(err)
	}
	srcURL := withReadSAS(t, cc, src.URL())
	dst := cc.NewBlockBlobClient("dst")
	if _, err := dst.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/x-request"), BlobCacheControl: to.Ptr("no-cache")},
	}); err != nil {
		t.Fatal(err)
	}
	p, err := dst.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.ContentType != "text/x-request" || p.CacheControl == nil || *p.CacheControl != "no-cache" || p.ContentLanguage == nil || *p.ContentLanguage != "en" {
		t.Errorf("properties: type %v cache %v language %v, want the request's over the source's", *p.ContentType, p.CacheControl, p.ContentLanguage)
	}
	if p.AccessTier == nil || *p.AccessTier != "Cool" {
		t.Errorf("tier %v, want the source's Cool", p.AccessTier)
	}
	own := cc.NewBlockBlobClient("own")
	if _, err := own.UploadBlobFromURL(ctx, srcURL, &blockblob.UploadBlobFromURLOptions{CopySourceBlobProperties: to.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if p, err := own.GetProperties(ctx, nil); err != nil || *p.AccessTier == "Cool" {
		t.Errorf("with CopySourceBlobProperties false: %v tier %v, want not the source's", err, p.AccessTier)
	}
}
