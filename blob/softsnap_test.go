package blob_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// TestSDKSoftDeletedSnapshots: under a DeleteRetentionPolicy a snapshot
// deleted by its URL, or with x-ms-delete-snapshots: only, is
// soft-deleted (listed with include=snapshots,deleted only); Undelete
// Blob on the live base blob restores every soft-deleted snapshot with
// its content ("restores the contents and metadata of a soft-deleted
// blob and any associated soft-deleted snapshots"; azblob's
// TestUndelete*BlobSnapshot); deletetype=permanent removes one for good
// under AllowPermanentDelete (TestAppendBlockPermanentDelete,
// TestPageBlockPermanentDelete); a soft-deleted snapshot past its
// retention is gone, and Undelete no longer brings it back.
func TestSDKSoftDeletedSnapshots(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	c := e.client(t)
	svc := c.ServiceClient()
	if _, err := c.CreateContainer(ctx, "snaps", nil); err != nil {
		t.Fatal(err)
	}
	cc := svc.NewContainerClient("snaps")
	policy := &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](1), AllowPermanentDelete: to.Ptr(true)}
	if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: policy}); err != nil {
		t.Fatal(err)
	}
	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, part := range []string{"a", "b", "c", "d"} {
		if _, err := ab.AppendBlock(ctx, rsc([]byte(part)), nil); err != nil {
			t.Fatal(err)
		}
		r, err := ab.CreateSnapshot(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, *r.Snapshot)
	}
	// Two deleted by their URL.
	for _, s := range snaps[:2] {
		sc, _ := ab.WithSnapshot(s)
		if _, err := sc.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true}); !sameList(got, "log@snap", "log@snap", "log") {
		t.Errorf("after deleting two snapshots: %v", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "log@snap", "log@snap", "log@snap deleted", "log@snap deleted", "log") {
		t.Errorf("include=snapshots,deleted: %v", got)
	}
	// Undelete of the live blob restores them with their content.
	if _, err := ab.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "log@snap", "log@snap", "log@snap", "log@snap", "log") {
		t.Errorf("after Undelete of the live blob: %v", got)
	}
	for i, want := range []string{"a", "ab"} {
		sc, _ := ab.WithSnapshot(snaps[i])
		if got := download(t, sc.BlobClient(), nil); string(got) != want {
			t.Errorf("restored snapshot %d holds %q, want %q", i, got, want)
		}
	}

	// x-ms-delete-snapshots: only soft-deletes the snapshots, the blob stays.
	if _, err := ab.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeOnly)}); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true}); !sameList(got, "log") {
		t.Errorf("after delete-snapshots only: %v", got)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); len(got) != 5 || got[4] != "log" {
		t.Errorf("include=snapshots,deleted after delete-snapshots only: %v", got)
	}
	// Permanent delete of one soft-deleted snapshot.
	sc, _ := ab.WithSnapshot(snaps[3])
	if _, err := sc.Delete(ctx, &blob.DeleteOptions{BlobDeleteType: to.Ptr(blob.DeleteTypePermanent)}); err != nil {
		t.Fatalf("permanent delete of a soft-deleted snapshot: %v", err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "log@snap deleted", "log@snap deleted", "log@snap deleted", "log") {
		t.Errorf("after the permanent delete: %v", got)
	}
	if _, err := sc.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a permanently deleted snapshot reads: %v", err)
	}
	// The retention ends the others: Undelete then restores nothing.
	clock.Advance(24*time.Hour + time.Second)
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true, Deleted: true}); !sameList(got, "log") {
		t.Errorf("after the retention: %v", got)
	}
	if _, err := ab.Undelete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cc, container.ListBlobsInclude{Snapshots: true}); !sameList(got, "log") {
		t.Errorf("Undelete after the retention: %v", got)
	}
}
