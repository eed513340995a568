package blob_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestSDKContainerACL: Set Container ACL stores the public access level
// and up to five stored access policies (new ETag); Get returns them as
// sent; a sixth policy is refused.
func TestSDKContainerACL(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "shared", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("shared")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	policy := func(id, perm string) *container.SignedIdentifier {
		return &container.SignedIdentifier{ID: to.Ptr(id), AccessPolicy: &container.AccessPolicy{
			Start: to.Ptr(start), Expiry: to.Ptr(start.Add(24 * time.Hour)), Permission: to.Ptr(perm)}}
	}
	before, _ := cc.GetProperties(ctx, nil)
	set, err := cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{
		Access: to.Ptr(container.PublicAccessTypeContainer), ContainerACL: []*container.SignedIdentifier{policy("readers", "rl"), policy("writers", "rw")}})
	if err != nil {
		t.Fatal(err)
	}
	if *set.ETag == *before.ETag {
		t.Error("Set Container ACL kept the ETag")
	}
	got, err := cc.GetAccessPolicy(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.BlobPublicAccess == nil || *got.BlobPublicAccess != container.PublicAccessTypeContainer || len(got.SignedIdentifiers) != 2 ||
		*got.SignedIdentifiers[0].ID != "readers" || *got.SignedIdentifiers[1].AccessPolicy.Permission != "rw" ||
		!got.SignedIdentifiers[0].AccessPolicy.Expiry.Equal(start.Add(24*time.Hour)) {
		t.Fatalf("ACL read back: %+v", got)
	}
	var six []*container.SignedIdentifier
	for i := range 6 {
		six = append(six, policy(fmt.Sprint("p", i), "r"))
	}
	if _, err := cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: six}); code(err) != "InvalidXmlDocument" {
		t.Fatalf("six policies: %v", err)
	}
	// Clearing: no header, no policies → private, empty.
	if _, err := cc.SetAccessPolicy(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = cc.GetAccessPolicy(ctx, nil)
	if got.BlobPublicAccess != nil || len(got.SignedIdentifiers) != 0 {
		t.Fatalf("cleared ACL: %v %d", got.BlobPublicAccess, len(got.SignedIdentifiers))
	}
}
