package blob_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// TestLogsSystemContainer: every account has the system container $logs
// (azblob's TestListContainersSystem): List Containers lists it with
// include=system only; it can be read and listed; Create Container on it
// is 409 ContainerAlreadyExists and Delete Container 403
// AuthorizationFailure, leaving it in place.
func TestLogsSystemContainer(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "user", nil); err != nil {
		t.Fatal(err)
	}
	list := func(o *service.ListContainersOptions) []string {
		var names []string
		pager := c.ServiceClient().NewListContainersPager(o)
		for pager.More() {
			resp, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range resp.ContainerItems {
				names = append(names, *it.Name)
			}
		}
		return names
	}
	if got := list(nil); len(got) != 1 || got[0] != "user" {
		t.Errorf("List Containers: %v, want [user] ($logs only with include=system)", got)
	}
	if got := list(&service.ListContainersOptions{Include: service.ListContainersInclude{System: true}}); len(got) != 2 || got[0] != "$logs" || got[1] != "user" {
		t.Errorf("List Containers include=system: %v, want [$logs user]", got)
	}
	if got := list(&service.ListContainersOptions{Include: service.ListContainersInclude{Deleted: true}}); len(got) != 1 || got[0] != "user" {
		t.Errorf("List Containers include=deleted: %v, want [user]", got)
	}
	logs := c.ServiceClient().NewContainerClient("$logs")
	if _, err := logs.GetProperties(ctx, nil); err != nil {
		t.Errorf("Get Container Properties of $logs: %v", err)
	}
	if resp, err := logs.NewListBlobsFlatPager(nil).NextPage(ctx); err != nil || len(resp.Segment.BlobItems) != 0 {
		t.Errorf("List Blobs in $logs: %v", err)
	}
	if _, err := logs.Create(ctx, nil); code(err) != "ContainerAlreadyExists" {
		t.Errorf("Create Container $logs: %v, want ContainerAlreadyExists", err)
	}
	if _, err := logs.Delete(ctx, nil); code(err) != "AuthorizationFailure" || status(err) != 403 {
		t.Errorf("Delete Container $logs: %v, want 403 AuthorizationFailure", err)
	}
	if _, err := logs.GetProperties(ctx, nil); err != nil {
		t.Errorf("$logs after a refused delete: %v", err)
	}
}
