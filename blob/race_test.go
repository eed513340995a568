package blob_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
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

// TestConcurrentLeaseAcquire: eight clients try to acquire the same
// blob's lease at once with their own ids; exactly one gets it, the
// others 409 LeaseAlreadyPresent, and the winner's id is the blob's lease.
func TestConcurrentLeaseAcquire(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "ctr", "contended", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	const clients = 8
	errs := make([]error, clients)
	ids := make([]string, clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		ids[i] = fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			bc := e.client(t).ServiceClient().NewContainerClient("ctr").NewBlobClient("contended")
			lc, err := lease.NewBlobClient(bc, &lease.BlobClientOptions{LeaseID: &ids[i]})
			if err != nil {
				errs[i] = err
				return
			}
			<-start
			_, errs[i] = lc.AcquireLease(ctx, 30, nil)
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("clients %d and %d both hold the lease", winner, i)
		case err == nil:
			winner = i
		case code(err) != "LeaseAlreadyPresent":
			t.Fatalf("client %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody got the lease")
	}
	bc := c.ServiceClient().NewContainerClient("ctr").NewBlobClient("contended")
	if _, err := bc.SetMetadata(ctx, nil, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &ids[winner]}}}); err != nil {
		t.Fatalf("the winner's write: %v", err)
	}
}
