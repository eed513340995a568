package blob_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	blobsrv "github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/storagehttp"
)

var noRetry = azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}

// TestSAS: account SAS, container service SAS and blob service SAS made
// by the SDK's sas package are accepted within their permissions and
// scope and refused outside them.
func TestSAS(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	owner := e.client(t)
	for _, n := range []string{"open", "other"} {
		if _, err := owner.CreateContainer(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := owner.UploadBuffer(ctx, "open", "doc", []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(time.Hour)

	// Account SAS: read and list on containers and objects.
	acctURL, err := owner.ServiceClient().GetSASURL(sas.AccountResourceTypes{Container: true, Object: true},
		sas.AccountPermissions{Read: true, List: true}, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := azblob.NewClientWithNoCredential(acctURL, &azblob.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ac.DownloadStream(ctx, "open", "doc", nil)
	if err != nil {
		t.Fatalf("account SAS read: %v", err)
	}
	resp.Body.Close()
	if _, err := ac.NewListBlobsFlatPager("open", nil).NextPage(ctx); err != nil {
		t.Fatalf("account SAS list: %v", err)
	}
	if _, err := ac.UploadBuffer(ctx, "open", "new", []byte("x"), nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("account SAS write without w: %v", err)
	}
	if _, err := ac.NewListContainersPager(nil).NextPage(ctx); code(err) != "AuthorizationResourceTypeMismatch" {
		t.Fatalf("account SAS service listing without srt=s: %v", err)
	}

	// Container SAS: read, write, list within "open" only.
	cURL, err := owner.ServiceClient().NewContainerClient("open").GetSASURL(sas.ContainerPermissions{Read: true, Write: true, List: true}, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := container.NewClientWithNoCredential(cURL, &container.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewBlockBlobClient("bysas").UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Fatalf("container SAS write: %v", err)
	}
	if _, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx); err != nil {
		t.Fatalf("container SAS list: %v", err)
	}
	if _, err := cc.NewBlobClient("doc").Delete(ctx, nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("container SAS delete without d: %v", err)
	}

	// Blob SAS: read of that blob only.
	bURL, err := owner.ServiceClient().NewContainerClient("open").NewBlobClient("doc").GetSASURL(sas.BlobPermissions{Read: true}, expiry, nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, err := blob.NewClientWithNoCredential(bURL, &blob.ClientOptions{ClientOptions: noRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bc.GetProperties(ctx, nil); err != nil {
		t.Fatalf("blob SAS read: %v", err)
	}
	if _, err := bc.SetMetadata(ctx, nil, nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("blob SAS write: %v", err)
	}

	// An expired SAS.
	old, err := owner.ServiceClient().NewContainerClient("open").NewBlobClient("doc").GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(-time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := blob.NewClientWithNoCredential(old, &blob.ClientOptions{ClientOptions: noRetry})
	if _, err := oc.GetProperties(ctx, nil); status(err) != http.StatusForbidden {
		t.Fatalf("expired SAS: %v", err)
	}
}

// TestSharedKeyLite: a SharedKeyLite-signed request is accepted, a wrong
// Lite signature is not.
func TestSharedKeyLite(t *testing.T) {
	e := newEnv(t, nil)
	sg, _ := storagehttp.NewSigner(blobsrv.DevAccount, blobsrv.DevKey)
	send := func(sign func(*http.Request) string) int {
		req, _ := http.NewRequest("PUT", e.URL+"/lite?restype=container", http.NoBody)
		req.Header.Set("x-ms-version", "2025-01-05")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Authorization", "SharedKeyLite "+blobsrv.DevAccount+":"+sign(req))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := send(func(r *http.Request) string { return sg.Sign(storagehttp.StringToSign(blobsrv.DevAccount, r)) }); st != 403 {
		t.Fatalf("Lite header with a full SharedKey signature: %d", st)
	}
	if st := send(func(r *http.Request) string { return sg.Sign(storagehttp.LiteStringToSign(blobsrv.DevAccount, r)) }); st != 201 {
		t.Fatalf("SharedKeyLite: %d", st)
	}
}

// TestSASStoredPolicy: a service SAS naming a stored access policy (si)
// takes its permissions and expiry from the container's ACL; an unknown
// policy, an expired one, or a field in both SAS and policy is refused.
func TestSASStoredPolicy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	owner := e.client(t)
	if _, err := owner.CreateContainer(ctx, "pol", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.UploadBuffer(ctx, "pol", "doc", []byte("hi"), nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	cc := owner.ServiceClient().NewContainerClient("pol")
	if _, err := cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &container.AccessPolicy{Expiry: to.Ptr(now.Add(time.Hour)), Permission: to.Ptr("rl")}},
		{ID: to.Ptr("old"), AccessPolicy: &container.AccessPolicy{Expiry: to.Ptr(now.Add(-time.Hour)), Permission: to.Ptr("r")}},
		{ID: to.Ptr("open"), AccessPolicy: &container.AccessPolicy{Permission: to.Ptr("r")}},
	}}); err != nil {
		t.Fatal(err)
	}
	cred, err := azblob.NewSharedKeyCredential(blobsrv.DevAccount, blobsrv.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(v sas.BlobSignatureValues) *container.Client {
		t.Helper()
		v.Protocol, v.ContainerName = sas.ProtocolHTTPSandHTTP, "pol"
		qp, err := v.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		c, err := container.NewClientWithNoCredential(e.URL+"/pol?"+qp.Encode(), &container.ClientOptions{ClientOptions: noRetry})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	readers := client(sas.BlobSignatureValues{Identifier: "readers"})
	if _, err := readers.NewBlobClient("doc").GetProperties(ctx, nil); err != nil {
		t.Fatalf("read under the policy: %v", err)
	}
	if _, err := readers.NewListBlobsFlatPager(nil).NextPage(ctx); err != nil {
		t.Fatalf("list under the policy: %v", err)
	}
	if _, err := readers.NewBlockBlobClient("new").UploadBuffer(ctx, []byte("x"), nil); code(err) != "AuthorizationPermissionMismatch" {
		t.Fatalf("write under a read policy: %v", err)
	}
	if _, err := client(sas.BlobSignatureValues{Identifier: "old"}).NewBlobClient("doc").GetProperties(ctx, nil); status(err) != http.StatusForbidden {
		t.Fatalf("expired policy: %v", err)
	}
	if _, err := client(sas.BlobSignatureValues{Identifier: "nosuch"}).NewBlobClient("doc").GetProperties(ctx, nil); status(err) != http.StatusForbidden {
		t.Fatalf("unknown policy: %v", err)
	}
	// The policy without an expiry: the SAS brings it.
	withExpiry := client(sas.BlobSignatureValues{Identifier: "open", ExpiryTime: now.Add(time.Hour)})
	if _, err := withExpiry.NewBlobClient("doc").GetProperties(ctx, nil); err != nil {
		t.Fatalf("policy plus the SAS's expiry: %v", err)
	}
	// A field in both: refused.
	both := client(sas.BlobSignatureValues{Identifier: "readers", ExpiryTime: now.Add(time.Hour)})
	if _, err := both.NewBlobClient("doc").GetProperties(ctx, nil); status(err) != http.StatusForbidden {
		t.Fatalf("expiry in both SAS and policy: %v", err)
	}
}
