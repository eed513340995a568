package blob_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/blobshare/blobshare/blobsvc"
)

// TestSDKBlobTags: tags set on upload (x-ms-tags) and by Set Blob Tags
// are returned by Get Blob Tags, counted in Get Blob Properties and listed
// with include=tags; Set Blob Tags leaves the ETag alone; invalid tags
// are 400 InvalidTag.
func TestSDKBlobTags(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "tagged", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("tagged")
	bb := cc.NewBlockBlobClient("doc")
	up, err := bb.UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{Tags: map[string]string{"project": "alpha", "stage": "draft 1"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := bb.GetTags(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.BlobTagSet) != 2 || *got.BlobTagSet[0].Key != "project" || *got.BlobTagSet[1].Value != "draft 1" {
		t.Fatalf("tags after upload: %+v", got.BlobTagSet)
	}
	if _, err := bb.SetTags(ctx, map[string]string{"project": "beta"}, nil); err != nil {
		t.Fatal(err)
	}
	props, _ := bb.GetProperties(ctx, nil)
	if props.TagCount == nil || *props.TagCount != 1 {
		t.Fatalf("tag count %v", props.TagCount)
	}
	if *props.ETag != *up.ETag {
		t.Errorf("Set Blob Tags changed the ETag")
	}
	resp, err := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Tags: true}}).NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it := resp.Segment.BlobItems[0]
	if it.BlobTags == nil || len(it.BlobTags.BlobTagSet) != 1 || *it.BlobTags.BlobTagSet[0].Value != "beta" {
		t.Fatalf("listed tags: %+v", it.BlobTags)
	}
	if _, err := bb.SetTags(ctx, map[string]string{"bad*key": "v"}, nil); code(err) != "InvalidTag" {
		t.Fatalf("bad tag key: %v", err)
	}
	if _, err := bb.SetTags(ctx, map[string]string{"k": strings.Repeat("v", 257)}, nil); code(err) != "InvalidTag" {
		t.Fatalf("long tag value: %v", err)
	}
	eleven := map[string]string{}
	for _, k := range strings.Split("a b c d e f g h i j k", " ") {
		eleven[k] = "v"
	}
	if _, err := bb.SetTags(ctx, eleven, nil); code(err) != "InvalidTag" {
		t.Fatalf("eleven tags: %v", err)
	}
	if _, err := cc.NewBlockBlobClient("other").UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{Tags: map[string]string{"a#": "b"}}); code(err) != "InvalidTag" {
		t.Fatalf("bad x-ms-tags: %v", err)
	}
}

// TestSDKSetBlobTier: the tier is stored and reported (no longer
// inferred); an archived blob refuses reads with 409 BlobArchived until
// set back and rehydrated (rehydrate_test.go); a tier of another blob
// type is 400.
func TestSDKSetBlobTier(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "tiers", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("tiers").NewBlockBlobClient("b")
	if _, err := bb.UploadBuffer(ctx, []byte("data"), nil); err != nil {
		t.Fatal(err)
	}
	props, _ := bb.GetProperties(ctx, nil)
	if *props.AccessTier != "Hot" || !*props.AccessTierInferred {
		t.Fatalf("default tier %v inferred %v", *props.AccessTier, *props.AccessTierInferred)
	}
	if _, err := bb.SetTier(ctx, blob.AccessTierCool, nil); err != nil {
		t.Fatal(err)
	}
	props, _ = bb.GetProperties(ctx, nil)
	if *props.AccessTier != "Cool" || props.AccessTierInferred != nil || props.AccessTierChangeTime == nil {
		t.Fatalf("after Set Blob Tier: %v inferred %v (want no header)", *props.AccessTier, props.AccessTierInferred)
	}
	if _, err := bb.SetTier(ctx, blob.AccessTierArchive, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.DownloadStream(ctx, nil); code(err) != "BlobArchived" {
		t.Fatalf("read of an archived blob: %v", err)
	}
	if _, err := bb.SetTier(ctx, blob.AccessTierHot, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(blobsvc.DefaultRehydrateTime)
	if got := download(t, bb.BlobClient(), nil); string(got) != "data" {
		t.Fatalf("after rehydration %q", got)
	}
	if _, err := bb.SetTier(ctx, blob.AccessTierP10, nil); code(err) != "InvalidHeaderValue" {
		t.Fatalf("page tier on a block blob: %v", err)
	}
}

// TestSDKIfTags: x-ms-if-tags guards reads and writes by the blob's tags
// (412 ConditionNotMet when false, 400 when malformed).
func TestSDKIfTags(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "iftags", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("iftags").NewBlockBlobClient("b")
	if _, err := bb.UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{Tags: map[string]string{"state": "draft", "rev": "2"}}); err != nil {
		t.Fatal(err)
	}
	when := func(expr string) *blob.AccessConditions {
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: &expr}}
	}
	if _, err := bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: when(`"state" = 'draft' AND "rev" >= '2'`)}); err != nil {
		t.Fatalf("matching read: %v", err)
	}
	if _, err := bb.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: when(`"state" = 'final'`)}); status(err) != 412 {
		t.Fatalf("non-matching read: %v", err)
	}
	if _, err := bb.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: when(`"state" = 'final'`)}); code(err) != "ConditionNotMet" {
		t.Fatalf("non-matching write: %v", err)
	}
	if _, err := bb.UploadBuffer(ctx, []byte("y"), &blockblob.UploadBufferOptions{AccessConditions: when(`"state" = 'draft'`)}); err != nil {
		t.Fatalf("matching overwrite: %v", err)
	}
	if _, err := bb.Delete(ctx, &blob.DeleteOptions{AccessConditions: when(`"state" = 'draft' AND`)}); code(err) != "InvalidHeaderValue" {
		t.Fatalf("malformed expression: %v", err)
	}
}

// TestSDKFindBlobsByTags: Find Blobs by Tags over the account and in one
// container, with @container, paging by marker, and a malformed where.
func TestSDKFindBlobsByTags(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	for _, ct := range []string{"one", "two"} {
		if _, err := c.CreateContainer(ctx, ct, nil); err != nil {
			t.Fatal(err)
		}
		for i, state := range []string{"draft", "final", "draft"} {
			if _, err := c.UploadBuffer(ctx, ct, fmt.Sprint("doc", i), []byte("x"), &blockblob.UploadBufferOptions{Tags: map[string]string{"state": state}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(items []*service.FilterBlobItem) string {
		var out []string
		for _, it := range items {
			out = append(out, *it.ContainerName+"/"+*it.Name)
		}
		return strings.Join(out, " ")
	}
	resp, err := c.ServiceClient().FilterBlobs(ctx, `"state" = 'draft'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(resp.Blobs); got != "one/doc0 one/doc2 two/doc0 two/doc2" {
		t.Fatalf("found %q", got)
	}
	resp, _ = c.ServiceClient().FilterBlobs(ctx, `"@container" = 'two' AND "state" = 'final'`, nil)
	if got := names(resp.Blobs); got != "two/doc1" {
		t.Fatalf("with @container: %q", got)
	}
	page, err := c.ServiceClient().FilterBlobs(ctx, `"state" = 'draft'`, &service.FilterBlobsOptions{MaxResults: to.Ptr(int32(3))})
	if err != nil || len(page.Blobs) != 3 || page.NextMarker == nil || *page.NextMarker == "" {
		t.Fatalf("first page: %v %d", err, len(page.Blobs))
	}
	rest, err := c.ServiceClient().FilterBlobs(ctx, `"state" = 'draft'`, &service.FilterBlobsOptions{Marker: page.NextMarker})
	if err != nil || names(rest.Blobs) != "two/doc2" {
		t.Fatalf("second page: %v %q", err, names(rest.Blobs))
	}
	cresp, err := c.ServiceClient().NewContainerClient("one").FilterBlobs(ctx, `"state" = 'final'`, nil)
	if err != nil || len(cresp.Blobs) != 1 || *cresp.Blobs[0].Name != "doc1" {
		t.Fatalf("in a container: %v %+v", err, cresp.Blobs)
	}
	if _, err := c.ServiceClient().FilterBlobs(ctx, `"state" = `, nil); code(err) != "InvalidQueryParameterValue" {
		t.Fatalf("malformed where: %v", err)
	}

	// AND without spaces, and only the tags the expression names
	// answered (azblob's TestFilterBlobsWithTags).
	if _, err := c.UploadBuffer(ctx, "one", "tagged", []byte("x"), &blockblob.UploadBufferOptions{
		Tags: map[string]string{"tag1": "firsttag", "tag2": "secondtag", "tag3": "thirdtag", "tag key": "tag value"}}); err != nil {
		t.Fatal(err)
	}
	resp, err = c.ServiceClient().FilterBlobs(ctx, `"tag1"='firsttag'AND"tag2"='secondtag'`, nil)
	if err != nil || names(resp.Blobs) != "one/tagged" {
		t.Fatalf("AND without spaces: %v %q", err, names(resp.Blobs))
	}
	if set := resp.Blobs[0].Tags.BlobTagSet; len(set) != 2 || *set[0].Key != "tag1" || *set[0].Value != "firsttag" || *set[1].Key != "tag2" || *set[1].Value != "secondtag" {
		t.Errorf("tags answered: %v, want tag1 and tag2 only", set)
	}
}
