package integration

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// TestServeBlobEndpoint: `serve` announces blob=URL on its serving line
// and answers the azblob SDK, unchanged, there with the devstore
// connection string; the blob survives a restart on the same --data.
func TestServeBlobEndpoint(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	s := startServe(t, data)
	if s.BlobURL == "" || s.BlobURL == "off" {
		t.Fatalf("serving line has no blob URL: %q", s.BlobURL)
	}
	content := bytes.Repeat([]byte("0123456789abcdef"), 300_000) // 4.8 MB: two content-store blocks
	put := func(url string) *azblob.Client {
		c, err := azblob.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"+
			"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint="+url+";",
			&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := put(s.BlobURL)
	if _, err := c.CreateContainer(ctx, "photos", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "photos", "a/b.jpg", content, &azblob.UploadBufferOptions{BlockSize: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	stopServe(t, s)

	s = startServe(t, data)
	resp, err := put(s.BlobURL).DownloadStream(ctx, "photos", "a/b.jpg", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("after restart: %d bytes, err %v", len(got), err)
	}
}

// TestServeBlobOff: --blob-addr off serves no Blob endpoint and says so.
func TestServeBlobOff(t *testing.T) {
	s := startServe(t, t.TempDir(), "--blob-addr", "off")
	if s.BlobURL != "off" {
		t.Fatalf("blob = %q, want off", s.BlobURL)
	}
}
