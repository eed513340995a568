package blob_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	blobshare "github.com/blobshare/blobshare/blob"
)

// hostDialer is an HTTP client that sends every request, whatever its
// host, to addr: the SDK addresses https://ACCOUNT.blob.core.windows.net
// as it would Azure, over plain HTTP here.
func hostDialer(t *testing.T, serverURL string) policy.Transporter {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, u.Host)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// A production-style URL (the account in the host, the path starting at
// the container) reaches the same blobs as the path-style one, with
// SharedKey, a service SAS and a copy source in that form.
func TestProductionStyleURL(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hostDialer(t, e.URL), Retry: policy.RetryOptions{MaxRetries: -1}}}
	cred, err := azblob.NewSharedKeyCredential(blobshare.DevAccount, blobshare.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := azblob.NewClientWithSharedKeyCredential("http://"+blobshare.DevAccount+".blob.core.windows.net/", cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prod.CreateContainer(ctx, "hosts", nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	data := []byte("production style")
	if _, err := prod.UploadBuffer(ctx, "hosts", "dir/a b.txt", data, nil); err != nil {
		t.Fatalf("upload: %v", err)
	}

	// The path-style client sees what the production-style one wrote.
	got := make([]byte, len(data))
	if _, err := e.client(t).DownloadBuffer(ctx, "hosts", "dir/a b.txt", got, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("path-style download: %q, %v", got, err)
	}
	var names []string
	pager := prod.NewListBlobsFlatPager("hosts", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	if len(names) != 1 || names[0] != "dir/a b.txt" {
		t.Fatalf("listed %q, want [dir/a b.txt]", names)
	}

	// A service SAS signed for the production-style URL reads the blob.
	src := prod.ServiceClient().NewContainerClient("hosts").NewBlobClient("dir/a b.txt")
	sasURL, err := src.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := blob.NewClientWithNoCredential(sasURL, &blob.ClientOptions{ClientOptions: opts.ClientOptions})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := anon.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("download with a production-style SAS: %v", err)
	}
	resp.Body.Close()

	// A production-style copy source, authorized by its SAS.
	dst := prod.ServiceClient().NewContainerClient("hosts").NewBlobClient("copy")
	if _, err := dst.CopyFromURL(ctx, sasURL, nil); err != nil {
		t.Fatalf("copy from a production-style URL: %v", err)
	}
	if _, err := e.client(t).DownloadBuffer(ctx, "hosts", "copy", got, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copied blob: %q, %v", got, err)
	}

	// Another account's host is not this account.
	other, err := azblob.NewClientWithNoCredential("http://other.blob.core.windows.net/", opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.ServiceClient().NewContainerClient("hosts").GetProperties(ctx, nil)
	if !bloberror.HasCode(err, bloberror.InvalidURI) {
		t.Fatalf("another account's host: %v, want InvalidUri", err)
	}
}
