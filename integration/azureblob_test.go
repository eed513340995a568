package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"

	"github.com/blobshare/blobshare/blobstore/azure/azuritetest"
	"github.com/blobshare/blobshare/fs"
)

// serve with --blob-backend azure://: file content lives in an Azurite
// container, and survives a restart of blobshare.
func TestServeOnAzureBlobBackend(t *testing.T) {
	az := azuritetest.Start(t)
	backend := "azure://" + az.Account + "/sharecontent?endpoint=" + az.Endpoint
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The key comes from the environment, as the README recommends.
	t.Setenv("AZURE_STORAGE_KEY", az.Key)
	s := startServe(t, data, "--blob-backend", backend)
	m := &mixed{srv: s, share: serviceClient(t, s).NewShareClient("onazure")}
	if _, err := m.share.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Larger than fs.InlineMax: small files live in SQLite, not in blobs.
	content := []byte(strings.Repeat("content kept in Azure Blob storage. ", 10000))
	if len(content) <= fs.InlineMax {
		t.Fatalf("test content of %d bytes would be stored inline", len(content))
	}
	m.putFile(t, "doc.txt", content)
	stopServe(t, s)

	// The container holds the content as a blob.
	bc, err := azblob.NewClientFromConnectionString(az.ConnectionString, nil)
	if err != nil {
		t.Fatal(err)
	}
	var blobs int
	pager := bc.NewListBlobsFlatPager("sharecontent", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list container: %v", err)
		}
		for _, b := range page.Segment.BlobItems {
			if *b.Properties.ContentLength == int64(len(content)) {
				blobs++
			}
		}
	}
	if blobs != 1 {
		t.Fatalf("container holds %d blobs of the file's size; want 1", blobs)
	}

	s2 := startServe(t, data, "--blob-backend", backend)
	m2 := &mixed{srv: s2, share: serviceClient(t, s2).NewShareClient("onazure")}
	got, err := m2.download(t, "doc.txt", file.HTTPRange{})
	if err != nil || string(got) != string(content) {
		t.Fatalf("after restart read %d bytes, %v; want the %d written", len(got), err, len(content))
	}
}
