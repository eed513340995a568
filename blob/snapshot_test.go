package blob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
)

// TestSDKSnapshots: Snapshot Blob keeps the version it was taken of
// (content, properties, metadata) while the blob moves on; snapshots are
// read with ?snapshot=, listed with include=snapshots (before their blob),
// deleted one by one or with x-ms-delete-snapshots include / only; a blob
// with snapshots refuses a plain delete; snapshot times are unique on a
// clock that stands still; a lease id on Snapshot Blob is optional but
// must match; writes to a snapshot are refused.
func TestSDKSnapshots(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock() // never advanced: two snapshots share a clock reading
	e := newEnv(t, clk.Now)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "snaps", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("snaps")
	bb := cc.NewBlockBlobClient("doc")
	if _, err := bb.UploadBuffer(ctx, []byte("version one"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.SetMetadata(ctx, map[string]*string{"v": to.Ptr("1")}, nil); err != nil {
		t.Fatal(err)
	}
	props, _ := bb.GetProperties(ctx, nil)
	s1, err := bb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *s1.ETag != *props.ETag {
		t.Errorf("snapshot ETag %s, blob's %s", *s1.ETag, *props.ETag)
	}
	after, _ := bb.GetProperties(ctx, nil)
	if *after.ETag != *props.ETag {
		t.Errorf("Snapshot Blob changed the blob's ETag")
	}
	s2, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{Metadata: map[string]*string{"snap": to.Ptr("two")}})
	if err != nil {
		t.Fatal(err)
	}
	if *s1.Snapshot == *s2.Snapshot {
		t.Fatalf("two snapshots share the time %s", *s1.Snapshot)
	}
	if _, err := bb.UploadBuffer(ctx, []byte("version two"), nil); err != nil {
		t.Fatal(err)
	}

	snap1, err := bb.WithSnapshot(*s1.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if got := download(t, snap1.BlobClient(), nil); string(got) != "version one" {
		t.Fatalf("snapshot content %q", got)
	}
	if got := download(t, bb.BlobClient(), nil); string(got) != "version two" {
		t.Fatalf("blob content %q", got)
	}
	sp, err := snap1.GetProperties(ctx, nil)
	if err != nil || sp.Metadata["V"] == nil && sp.Metadata["v"] == nil {
		t.Fatalf("snapshot properties: %v %v", err, sp.Metadata)
	}
	snap2, _ := bb.WithSnapshot(*s2.Snapshot)
	if sp2, _ := snap2.GetProperties(ctx, nil); len(sp2.Metadata) != 1 || sp2.Metadata["snap"] == nil && sp2.Metadata["Snap"] == nil {
		t.Fatalf("snapshot with its own metadata: %v", sp2.Metadata)
	}
	if _, err := snap1.SetMetadata(ctx, nil, nil); code(err) != "InvalidQueryParameterValue" {
		t.Fatalf("write to a snapshot: %v", err)
	}
	missing, _ := bb.WithSnapshot("2001-01-01T00:00:00.0000000Z")
	if _, err := missing.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("missing snapshot: %v", err)
	}

	// Listing: snapshots first, oldest first, then the blob.
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
	resp, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, it := range resp.Segment.BlobItems {
		s := ""
		if it.Snapshot != nil {
			s = *it.Snapshot
		}
		listed = append(listed, *it.Name+"@"+s)
	}
	if want := "doc@" + *s1.Snapshot + " doc@" + *s2.Snapshot + " doc@"; strings.Join(listed, " ") != want {
		t.Fatalf("listed %q, want %q", listed, want)
	}
	plain, _ := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	if len(plain.Segment.BlobItems) != 1 {
		t.Fatalf("listing without snapshots: %d items", len(plain.Segment.BlobItems))
	}

	// Copy from a snapshot.
	if _, err := cc.NewBlobClient("restored").CopyFromURL(ctx, withReadSAS(t, cc, snap1.URL()), nil); err != nil {
		t.Fatalf("copy from a snapshot: %v", err)
	}
	if got := download(t, cc.NewBlobClient("restored"), nil); string(got) != "version one" {
		t.Fatalf("restored %q", got)
	}

	// Leases: optional on Snapshot Blob, but must match when sent.
	lc, _ := lease.NewBlobClient(bb, &lease.BlobClientOptions{LeaseID: to.Ptr(idA)})
	if _, err := lc.AcquireLease(ctx, -1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CreateSnapshot(ctx, nil); err != nil {
		t.Fatalf("snapshot of a leased blob without the id: %v", err)
	}
	if _, err := bb.CreateSnapshot(ctx, &blob.CreateSnapshotOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: to.Ptr(idB)}}}); code(err) != "LeaseIdMismatchWithBlobOperation" {
		t.Fatalf("snapshot with another lease id: %v", err)
	}
	if _, err := lc.ReleaseLease(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// Deletion.
	if _, err := bb.Delete(ctx, nil); code(err) != "SnapshotsPresent" {
		t.Fatalf("delete of a blob with snapshots: %v", err)
	}
	if _, err := snap1.Delete(ctx, nil); err != nil {
		t.Fatalf("delete one snapshot: %v", err)
	}
	if _, err := snap1.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("deleted snapshot: %v", err)
	}
	if _, err := bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)}); err != nil {
		t.Fatalf("delete snapshots only: %v", err)
	}
	if _, err := snap2.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("snapshot after delete only: %v", err)
	}
	if _, err := bb.GetProperties(ctx, nil); err != nil {
		t.Fatalf("blob after delete only: %v", err)
	}
	if _, err := bb.CreateSnapshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatalf("delete with snapshots: %v", err)
	}
	left, _ := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}}).NextPage(ctx)
	if len(left.Segment.BlobItems) != 1 || *left.Segment.BlobItems[0].Name != "restored" {
		t.Fatalf("left after delete include: %d items", len(left.Segment.BlobItems))
	}
}
