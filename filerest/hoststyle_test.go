package filerest_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
)

// A production-style URL (the account in the host, the path starting at
// the share) reaches the same files as the path-style one, for requests
// and for a copy source in that form.
func TestProductionStyleURL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u, err := url.Parse(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, u.Host) // every host is this server
	}}
	t.Cleanup(tr.CloseIdleConnections)
	opts := e.clientOptions()
	opts.Transport = &http.Client{Transport: tr}
	prod, err := service.NewClientWithSharedKeyCredential("http://"+filerest.DevAccount+".file.core.windows.net/", e.cred,
		&service.ClientOptions{ClientOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	sh := prod.NewShareClient("hosts")
	if _, err := sh.Create(ctx, nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	if _, err := sh.NewDirectoryClient("dir").Create(ctx, nil); err != nil {
		t.Fatalf("create directory: %v", err)
	}
	data := []byte("production style")
	src := sh.NewDirectoryClient("dir").NewFileClient("a b.txt")
	if _, err := src.Create(ctx, int64(len(data)), nil); err != nil {
		t.Fatalf("create file: %v", err)
	}
	if err := src.UploadBuffer(ctx, data, nil); err != nil {
		t.Fatalf("upload: %v", err)
	}
	// The path-style client reads what the production-style one wrote.
	got := make([]byte, len(data))
	if _, err := e.file("hosts", "dir/a b.txt").DownloadBuffer(ctx, got, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("path-style download: %q, %v", got, err)
	}
	// Copy File with a production-style source URL.
	dst := sh.NewRootDirectoryClient().NewFileClient("copy")
	if _, err := dst.StartCopyFromURL(ctx, src.URL(), nil); err != nil {
		t.Fatalf("copy from %s: %v", src.URL(), err)
	}
	if _, err := e.file("hosts", "copy").DownloadBuffer(ctx, got, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copied file: %q, %v", got, err)
	}
	pager := prod.NewListSharesPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Shares) != 1 || *page.Shares[0].Name != "hosts" {
		t.Fatalf("list shares: %+v, %v", page.Shares, err)
	}
	if want := "http://" + filerest.DevAccount + ".file.core.windows.net/"; page.ServiceEndpoint == nil || *page.ServiceEndpoint != want {
		t.Errorf("ServiceEndpoint = %v, want %s", page.ServiceEndpoint, want)
	}
}
