package blob_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// TestSDKServicePropertiesDeletePolicy: Set Blob Service Properties
// validates DeleteRetentionPolicy (Enabled required, Days 1 to 365 when
// enabled: 400 InvalidXmlDocument, as azblob's
// TestAccountDeleteRetentionPolicyDaysTooLarge/DaysOmitted/Empty expect)
// and keeps the root elements a document omits
// (TestAccountDeleteRetentionPolicyNil); disabling drops the days.
func TestSDKServicePropertiesDeletePolicy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	svc := e.client(t).ServiceClient()
	p, err := svc.GetProperties(ctx, nil)
	if err != nil || p.DeleteRetentionPolicy == nil || *p.DeleteRetentionPolicy.Enabled {
		t.Fatalf("default: %v %+v", err, p.DeleteRetentionPolicy)
	}
	for _, bad := range []*service.RetentionPolicy{
		{Enabled: to.Ptr(true), Days: to.Ptr[int32](366)},
		{Enabled: to.Ptr(true), Days: to.Ptr[int32](0)},
		{Enabled: to.Ptr(true)},
		{},
	} {
		if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: bad}); code(err) != "InvalidXmlDocument" {
			t.Errorf("DeleteRetentionPolicy %+v: %v, want 400 InvalidXmlDocument", bad, err)
		}
	}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](5)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err = svc.GetProperties(ctx, nil)
	if err != nil || !*p.DeleteRetentionPolicy.Enabled || p.DeleteRetentionPolicy.Days == nil || *p.DeleteRetentionPolicy.Days != 5 {
		t.Fatalf("after documents without DeleteRetentionPolicy: %v %+v, want enabled for 5 days", err, p.DeleteRetentionPolicy)
	}
	if p.HourMetrics == nil || p.Logging == nil {
		t.Errorf("the other elements were lost: %+v", p)
	}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(false)}}); err != nil {
		t.Fatal(err)
	}
	if p, err = svc.GetProperties(ctx, nil); err != nil || *p.DeleteRetentionPolicy.Enabled || p.DeleteRetentionPolicy.Days != nil {
		t.Fatalf("disabled: %v %+v", err, p.DeleteRetentionPolicy)
	}
}

// listNames lists a container with include and returns "name[@snapshot][ deleted]" items.
func listNames(t *testing.T, cc *container.Client, inc container.ListBlobsInclude) []string {
	t.Helper()
	var out []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			s := *it.Name
			if it.Snapshot != nil && *it.Snapshot != "" {
				s += "@snap"
			}
			if it.Deleted != nil && *it.Deleted {
				s += " deleted"
				if it.Properties.DeletedTime == nil || it.Properties.RemainingRetentionDays == nil {
					t.Errorf("deleted %s without DeletedTime or RemainingRetentionDays", s)
				}
			}
			out = append(out, s)
		}
	}
	return out
}

func sameList(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestSDKBlobSoftDelete: with DeleteRetentionPolicy enabled, Delete Blob
// soft-deletes blobs and snapshots (listed with include=deleted, Deleted
// true, a deletion time and the days left), Undelete Blob restores them
// with their content (block, page and append blobs; a blob written since
// keeps its place and the deleted one comes back as a snapshot), a
// soft-deleted snapshot goes for good with deletetype=permanent when
// AllowPermanentDelete is on (409 otherwise), and the retention ends them.
func TestSDKBlobSoftDelete(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	svc := c.ServiceClient()
	if _, err := c.CreateContainer(ctx, "soft", nil); err != nil {
		t.Fatal(err)
	}
	cc := svc.NewContainerClient("soft")
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](2)}}); err != nil {
		t.Fatal(err)
	}

	// A block blob committed from blocks, with a snapshot.
	bb := cc.NewBlockBlobClient("doc")
	for i, part := range []string{"hello ", "world"} {
		if _, err := bb.StageBlock(ctx, blockID(i), rsc([]byte(part)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bb.CommitBlockList(ctx, []string{blockID(0), blockID(1)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CreateSnapshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Fatalf("a soft-deleted blob reads: %v", err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true}); len(got) != 0 {
		t.Errorf("listing without deleted: %v", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "doc@snap deleted", "doc deleted") {
		t.Errorf("include=deleted,snapshots: %v", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Deleted: true}); !sameList(got, "doc deleted") {
		t.Errorf("include=deleted: %v", got)
	}
	if _, err := bb.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, bb.BlobClient(), nil); string(got) != "hello world" {
		t.Errorf("undeleted content %q", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "doc@snap", "doc") {
		t.Errorf("after Undelete: %v", got)
	}
	// The restored committed blocks are usable: recommit one of them.
	if _, err := bb.CommitBlockList(ctx, []string{blockID(1)}, nil); err != nil {
		t.Fatalf("recommitting a restored block: %v", err)
	}
	if got := download(t, bb.BlobClient(), nil); string(got) != "world" {
		t.Errorf("after recommitting a restored block: %q", got)
	}
	// That overwrite kept the version it replaced as a soft-deleted
	// snapshot ("overwriting a blob automatically creates a soft-deleted
	// snapshot of the blob's state prior to the write operation").
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "doc@snap", "doc@snap deleted", "doc") {
		t.Errorf("after an overwrite: %v", got)
	}

	// Deleted, then written again: Undelete keeps the new blob and brings
	// the deleted one back as a snapshot.
	if _, err := bb.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Upload(ctx, rsc([]byte("new")), nil); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "doc@snap deleted", "doc@snap deleted", "doc deleted", "doc") {
		t.Errorf("deleted and written again: %v", got)
	}
	if _, err := bb.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, bb.BlobClient(), nil); string(got) != "new" {
		t.Errorf("Undelete replaced the blob written since: %q", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true}); !sameList(got, "doc@snap", "doc@snap", "doc@snap", "doc") {
		t.Errorf("after Undelete over a new blob: %v", got)
	}
	var versions []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			if it.Snapshot != nil && *it.Snapshot != "" {
				sc, _ := bb.WithSnapshot(*it.Snapshot)
				versions = append(versions, string(download(t, sc.BlobClient(), nil)))
			}
		}
	}
	slices.Sort(versions)
	if !sameList(versions, "hello world", "hello world", "world") {
		t.Errorf("restored snapshots hold %q, want the first snapshot, the overwritten version and the deleted blob", versions)
	}

	// Page and append blobs.
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 8<<20, nil); err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte("p"), 512)
	if _, err := pb.UploadPages(ctx, rsc(page), blob.HTTPRange{Offset: 5 << 20, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, pb.BlobClient(), &blob.HTTPRange{Offset: 5 << 20, Count: 1024}); !bytes.Equal(got, append(append([]byte(nil), page...), make([]byte, 512)...)) {
		t.Errorf("undeleted page blob: %q", got[:16])
	}
	if _, err := pb.UploadPages(ctx, rsc(bytes.Repeat([]byte("q"), 512)), blob.HTTPRange{Offset: 5<<20 + 512, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, pb.BlobClient(), &blob.HTTPRange{Offset: 5 << 20, Count: 1024}); !bytes.Equal(got, append(append([]byte(nil), page...), bytes.Repeat([]byte("q"), 512)...)) {
		t.Errorf("a page written after Undelete: %q", got[510:514])
	}
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("one,")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc([]byte("two")), nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, ab.BlobClient(), nil); string(got) != "one,two" {
		t.Errorf("append blob undeleted and appended to: %q", got)
	}

	// Permanent delete of a soft-deleted snapshot.
	snap, err := bb.CreateSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := bb.WithSnapshot(*snap.Snapshot)
	perm := &blob.DeleteOptions{BlobDeleteType: to.Ptr(blob.DeleteTypePermanent)}
	if _, err := sc.Delete(ctx, perm); code(err) != "OperationNotAllowedInCurrentState" {
		t.Errorf("permanent delete of a live snapshot: %v", err)
	}
	if _, err := cc.NewBlobClient("never").Delete(ctx, perm); code(err) != "BlobNotFound" {
		t.Errorf("permanent delete of a blob that never was: %v", err)
	}
	if _, err := sc.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Delete(ctx, perm); code(err) != "OperationNotAllowedInCurrentState" {
		t.Errorf("permanent delete without AllowPermanentDelete: %v", err)
	}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](2), AllowPermanentDelete: to.Ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Delete(ctx, perm); err != nil {
		t.Errorf("permanent delete of a soft-deleted snapshot: %v", err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "disk", "doc@snap", "doc@snap", "doc@snap", "doc", "log") {
		t.Errorf("after the permanent delete: %v", got)
	}

	// The retention ends a soft-deleted blob. Delete Blob says the
	// deletion was soft: x-ms-delete-type-permanent: false.
	if st, h := rawRequestHeaders(t, e, "DELETE", "/soft/log", nil); st != 202 || h.Get("x-ms-delete-type-permanent") != "false" {
		t.Fatalf("soft Delete Blob: %d, x-ms-delete-type-permanent %q", st, h.Get("x-ms-delete-type-permanent"))
	}
	clock.Advance(47 * time.Hour)
	if got := listNames(t, cc, container.ListBlobsInclude{Deleted: true}); !sameList(got, "disk", "doc", "log deleted") {
		t.Errorf("within the retention: %v", got)
	}
	clock.Advance(2 * time.Hour)
	if got := listNames(t, cc, container.ListBlobsInclude{Deleted: true}); !sameList(got, "disk", "doc") {
		t.Errorf("after the retention: %v", got)
	}
	if _, err := ab.Undelete(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("Undelete after the retention: %v", err)
	}

	// Disabled: deletes are hard again.
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(false)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Deleted: true}); !sameList(got, "doc") {
		t.Errorf("a delete with the policy off: %v", got)
	}
}
