package blob_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	blobsrv "github.com/blobshare/blobshare/blob"
)

// TestServiceSASScope: a container SAS can neither create the container
// nor read or write its properties and metadata nor lease it ("You cannot
// grant permissions to read or write container properties or metadata,
// nor to lease a container, with a container SAS"): 403
// AuthorizationFailure, as azblob's TestSASContainerClient and
// TestSASContainerClient2 expect. A directory SAS (sr=d with sdd) reaches
// the blob named as its directory and the blobs under it, only them
// (azblob's TestDirectorySASAllPermissions creates foo and foo/test with
// a SAS for the directory foo).
func TestServiceSASScope(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	owner := e.client(t)
	if _, err := owner.CreateContainer(ctx, "scoped", nil); err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(time.Hour)
	cc := owner.ServiceClient().NewContainerClient("scoped")
	all := sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, Delete: true, List: true}
	u, err := cc.GetSASURL(all, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := container.NewClientWithNoCredential(u, &container.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.GetProperties(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Errorf("Get Container Properties with a container SAS: %v", err)
	}
	if _, err := sc.SetMetadata(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Errorf("Set Container Metadata with a container SAS: %v", err)
	}
	if _, err := sc.Create(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Errorf("Create Container with a container SAS: %v", err)
	}
	if _, err := sc.Delete(ctx, nil); code(err) != "AuthorizationFailure" {
		t.Errorf("Delete Container with a container SAS: %v", err)
	}
	if _, err := sc.NewListBlobsFlatPager(nil).NextPage(ctx); err != nil {
		t.Errorf("List Blobs with a container SAS: %v", err)
	}

	// Directory SAS.
	cred, err := azblob.NewSharedKeyCredential(blobsrv.DevAccount, blobsrv.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: expiry, ContainerName: "scoped",
		Directory: "dir/sub", Permissions: (&sas.BlobPermissions{Read: true, Write: true, Create: true}).String()}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	if got := qp.SignedDirectoryDepth(); got != "2" {
		t.Fatalf("sdd %q", got)
	}
	blobAt := func(name string) *blockblob.Client {
		c, err := blockblob.NewClientWithNoCredential(cc.URL()+"/"+name+"?"+qp.Encode(), &blockblob.ClientOptions{ClientOptions: noRetry})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	in := blobAt("dir/sub/file.txt")
	if _, err := in.Upload(ctx, rsc([]byte("inside")), nil); err != nil {
		t.Fatalf("directory SAS write under its directory: %v", err)
	}
	if got := download(t, in.BlobClient(), nil); string(got) != "inside" {
		t.Errorf("directory SAS read: %q", got)
	}
	if _, err := blobAt("dir/sub/deeper/x").Upload(ctx, rsc([]byte("x")), nil); err != nil {
		t.Errorf("directory SAS write deeper under its directory: %v", err)
	}
	if _, err := blobAt("dir/sub").Upload(ctx, rsc([]byte("named as the directory")), nil); err != nil {
		t.Errorf("directory SAS write of the blob named as its directory: %v", err)
	}
	for _, outside := range []string{"dir/other.txt", "dir/subx/file.txt", "other/sub/file.txt", "dir", "dir/su"} {
		if _, err := blobAt(outside).Upload(ctx, rsc([]byte("x")), nil); status(err) != http.StatusForbidden {
			t.Errorf("directory SAS for dir/sub writing %s: %v, want 403", outside, err)
		}
	}
	bad := strings.Replace(qp.Encode(), "sdd=2", "sdd=1", 1)
	if c, err := blockblob.NewClientWithNoCredential(cc.URL()+"/dir/sub/file.txt?"+bad, &blockblob.ClientOptions{ClientOptions: noRetry}); err != nil {
		t.Fatal(err)
	} else if _, err := c.GetProperties(ctx, nil); status(err) != http.StatusForbidden {
		t.Errorf("directory SAS with a wrong sdd: %v, want 403", err)
	}
	if _, err := owner.ServiceClient().NewContainerClient("scoped").NewBlobClient("dir/other.txt").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a refused write left a blob: %v", err)
	}
}
