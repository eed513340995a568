package blob_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestSDKAccessTierOnWrites: x-ms-access-tier on Put Blob, Put Block
// List, Copy Blob, Copy Blob From URL and Put Blob From URL is stored
// and reported (tier, no x-ms-access-tier-inferred, a change time), on
// Get Blob Properties, Get Blob and List Blobs; an invalid tier is 400
// and writes nothing. Set Blob Tier takes ?snapshot=, and an archived
// snapshot cannot be rehydrated (azblob's TestBlockBlobSetTierOnSnapshots).
func TestSDKAccessTierOnWrites(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "tiers", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("tiers")
	put := cc.NewBlockBlobClient("put")
	if _, err := put.Upload(ctx, rsc([]byte("data")), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTierCool)}); err != nil {
		t.Fatal(err)
	}
	list := cc.NewBlockBlobClient("list")
	if _, err := list.StageBlock(ctx, blockID(0), rsc([]byte("data")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := list.CommitBlockList(ctx, []string{blockID(0)}, &blockblob.CommitBlockListOptions{Tier: to.Ptr(blob.AccessTierCold)}); err != nil {
		t.Fatal(err)
	}
	src := withReadSAS(t, cc, put.URL())
	if _, err := cc.NewBlobClient("copy").StartCopyFromURL(ctx, put.URL(), &blob.StartCopyFromURLOptions{Tier: to.Ptr(blob.AccessTierCold)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlobClient("syncopy").CopyFromURL(ctx, src, &blob.CopyFromURLOptions{Tier: to.Ptr(blob.AccessTierHot)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlockBlobClient("fromurl").UploadBlobFromURL(ctx, src, &blockblob.UploadBlobFromURLOptions{Tier: to.Ptr(blob.AccessTierArchive)}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"put": "Cool", "list": "Cold", "copy": "Cold", "syncopy": "Hot", "fromurl": "Archive"}
	for name, tier := range want {
		p, err := cc.NewBlobClient(name).GetProperties(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.AccessTier == nil || *p.AccessTier != tier || p.AccessTierInferred != nil || p.AccessTierChangeTime == nil {
			t.Errorf("%s: tier %v inferred %v change time %v, want %s, no inferred header, a change time", name, p.AccessTier, p.AccessTierInferred, p.AccessTierChangeTime, tier)
		}
	}
	d, err := put.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Body.Close()
	if d.AccessTier == nil || *d.AccessTier != "Cool" || d.AccessTierChangeTime == nil {
		t.Errorf("Get Blob: tier %v change time %v, want Cool and a change time", d.AccessTier, d.AccessTierChangeTime)
	}
	pager := cc.NewListBlobsFlatPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			p := it.Properties
			if p.AccessTier == nil || string(*p.AccessTier) != want[*it.Name] || p.AccessTierInferred != nil || p.AccessTierChangeTime == nil {
				t.Errorf("List Blobs %s: tier %v inferred %v change time %v", *it.Name, p.AccessTier, p.AccessTierInferred, p.AccessTierChangeTime)
			}
		}
	}
	if _, err := cc.NewBlockBlobClient("bad").Upload(ctx, rsc([]byte("x")), &blockblob.UploadOptions{Tier: to.Ptr(blob.AccessTier("Lukewarm"))}); status(err) != http.StatusBadRequest {
		t.Errorf("Put Blob with tier Lukewarm: %v, want 400", err)
	}
	if _, err := cc.NewBlobClient("bad").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a Put Blob refused for its tier left a blob: %v", err)
	}

	// Set Blob Tier on snapshots.
	base := cc.NewBlockBlobClient("snap")
	if _, err := base.Upload(ctx, rsc([]byte("v1")), nil); err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for range 2 {
		r, err := base.CreateSnapshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, *r.Snapshot)
	}
	s0, _ := base.WithSnapshot(snaps[0])
	if _, err := s0.SetTier(ctx, blob.AccessTierArchive, nil); err != nil {
		t.Fatalf("Set Blob Tier on a snapshot: %v", err)
	}
	for i, snap := range snaps {
		sc, _ := base.WithSnapshot(snap)
		p, err := sc.GetProperties(ctx, nil)
		wantTier := map[int]string{0: "Archive", 1: "Hot"}[i]
		if err != nil || *p.AccessTier != wantTier {
			t.Errorf("snapshot %d: %v tier %v, want %s", i, err, p.AccessTier, wantTier)
		}
	}
	if p, err := base.GetProperties(ctx, nil); err != nil || *p.AccessTier != "Hot" {
		t.Errorf("base blob after tiering a snapshot: %v %v", err, p.AccessTier)
	}
	if _, err := s0.SetTier(ctx, blob.AccessTierCool, nil); code(err) != "BlobArchived" {
		t.Errorf("rehydrating an archived snapshot: %v, want 409 BlobArchived", err)
	}
}
