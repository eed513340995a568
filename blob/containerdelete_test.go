package blob_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// deletedContainers lists the soft-deleted containers: name → versions.
func deletedContainers(t *testing.T, svc *service.Client) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	pager := svc.NewListContainersPager(&service.ListContainersOptions{Include: service.ListContainersInclude{Deleted: true}})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.ContainerItems {
			if it.Deleted != nil && *it.Deleted {
				if it.Version == nil || it.Properties.DeletedTime == nil || it.Properties.RemainingRetentionDays == nil {
					t.Errorf("deleted container %s without Version, DeletedTime or RemainingRetentionDays", *it.Name)
				}
				out[*it.Name] = append(out[*it.Name], *it.Version)
			}
		}
	}
	return out
}

// TestSDKContainerSoftDelete follows azblob's TestContainerRestore and
// TestContainerRestoreFailures with container soft delete on: Delete
// Container keeps the container, List Containers include=deleted lists it
// with its version, a new container may take the name meanwhile (its
// blobs do not touch the deleted one's), Restore Container brings back
// the blobs, snapshots and page layout (409 ContainerAlreadyExists while
// the name is taken, 400 MissingRequiredHeader without the name or
// version, 404 for an unknown version), and the retention ends it.
func TestSDKContainerSoftDelete(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, clock.Now)
	e.Svc.SetContainerRetention(3)
	c := e.client(t)
	svc := c.ServiceClient()
	if _, err := c.CreateContainer(ctx, "box", nil); err != nil {
		t.Fatal(err)
	}
	cc := svc.NewContainerClient("box")
	if _, err := cc.NewBlockBlobClient("a").Upload(ctx, rsc([]byte("original")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlockBlobClient("a").CreateSnapshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 1024, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, rsc(make([]byte, 512)), blob.HTTPRange{Offset: 512, Count: 512}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteContainer(ctx, "box", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.GetProperties(ctx, nil); code(err) != "ContainerNotFound" {
		t.Fatalf("a soft-deleted container: %v", err)
	}
	gone := deletedContainers(t, svc)
	if len(gone["box"]) != 1 {
		t.Fatalf("deleted containers: %v", gone)
	}
	first := gone["box"][0]

	// The name is free: a new container's blob of the same name.
	if _, err := c.CreateContainer(ctx, "box", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlockBlobClient("a").Upload(ctx, rsc([]byte("second")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RestoreContainer(ctx, "box", first, nil); code(err) != "ContainerAlreadyExists" {
		t.Errorf("Restore Container over a live one: %v", err)
	}
	if _, err := c.DeleteContainer(ctx, "box", nil); err != nil {
		t.Fatal(err)
	}
	if gone = deletedContainers(t, svc); len(gone["box"]) != 2 {
		t.Fatalf("two deletions of box: %v", gone)
	}
	if _, err := svc.RestoreContainer(ctx, "box", "", nil); code(err) != "MissingRequiredHeader" {
		t.Errorf("Restore Container without a version: %v", err)
	}
	if _, err := svc.RestoreContainer(ctx, "", "", nil); code(err) != "MissingRequiredHeader" {
		t.Errorf("Restore Container without a name: %v", err)
	}
	if _, err := svc.RestoreContainer(ctx, "box", "0123456789ABCDEF", nil); code(err) != "ContainerNotFound" {
		t.Errorf("Restore Container of an unknown version: %v", err)
	}
	if _, err := svc.RestoreContainer(ctx, "box", first, nil); err != nil {
		t.Fatalf("Restore Container: %v", err)
	}
	if got := download(t, cc.NewBlobClient("a"), nil); string(got) != "original" {
		t.Errorf("restored blob: %q", got)
	}
	var names []string
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Snapshots: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			names = append(names, *it.Name)
		}
	}
	if !sameList(names, "a", "a", "disk") {
		t.Errorf("restored blobs: %v", names)
	}
	if _, err := pb.UploadPages(ctx, rsc([]byte(string(make([]byte, 511))+"z")), blob.HTTPRange{Count: 512}, nil); err != nil {
		t.Fatalf("a page write to a restored page blob: %v", err)
	}
	if got := download(t, pb.BlobClient(), nil); len(got) != 1024 || got[511] != 'z' {
		t.Errorf("restored page blob after a write: %d bytes", len(got))
	}
	if gone = deletedContainers(t, svc); len(gone["box"]) != 1 || gone["box"][0] == first {
		t.Errorf("after the restore: %v", gone)
	}
	clock.Advance(3*24*time.Hour + time.Second)
	if gone = deletedContainers(t, svc); len(gone) != 0 {
		t.Errorf("after the retention: %v", gone)
	}

	// Off: a deleted container is gone at once.
	e.Svc.SetContainerRetention(0)
	if _, err := c.DeleteContainer(ctx, "box", nil); err != nil {
		t.Fatal(err)
	}
	if gone = deletedContainers(t, svc); len(gone) != 0 {
		t.Errorf("a delete with container soft delete off: %v", gone)
	}
}
