package blob_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// TestConcurrentIfMatchOneWinner: eight clients update the same blob at
// once, each conditioned on the ETag they all read; exactly one succeeds
// and the others get 412 ConditionNotMet, and the blob holds the winner's
// content.
func TestConcurrentIfMatchOneWinner(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadBuffer(ctx, "ctr", "counter", []byte("0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := *up.ETag
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bb := e.client(t).ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("counter")
			<-start
			_, errs[i] = bb.UploadBuffer(ctx, []byte{byte('A' + i)}, &blockblob.UploadBufferOptions{
				AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case code(err) != "ConditionNotMet":
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	if got := download(t, c.ServiceClient().NewContainerClient("ctr").NewBlobClient("counter"), nil); string(got) != string(rune('A'+winner)) {
		t.Fatalf("content %q, winner %d", got, winner)
	}
}

// TestDownloadDuringOverwrite: a Get Blob streaming while a Put Blob
// replaces the blob returns the old version whole; the next read sees
// the new one.
func TestDownloadDuringOverwrite(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	v1 := bytes.Repeat([]byte("1"), 9<<20) // three content-store blocks
	v2 := bytes.Repeat([]byte("2"), 5<<20)
	bb := c.ServiceClient().NewContainerClient("ctr").NewBlockBlobClient("big")
	if _, err := bb.Upload(ctx, rsc(v1), nil); err != nil {
		t.Fatal(err)
	}
	resp, err := bb.DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 1<<20)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Upload(ctx, rsc(v2), nil); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(head, rest...); !bytes.Equal(got, v1) {
		t.Fatalf("download across an overwrite: %d bytes, not the old version whole", len(got))
	}
	if got := download(t, bb.BlobClient(), nil); !bytes.Equal(got, v2) {
		t.Fatalf("next download: %d bytes, not the new version", len(got))
	}
}
