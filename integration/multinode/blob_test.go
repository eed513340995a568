package multinode

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/blobshare/blobshare/integration/servetest"
)

// startBlobNodes starts n serve processes on a new schema of the test
// cluster and one content store they share (--blob-backend file://DIR:
// nodes on one host), each with its own --data and the Blob, Queue and
// Table endpoints.
func startBlobNodes(t *testing.T, n int) []*servetest.Server {
	t.Helper()
	meta := metaURL(t, pg.Schema(t))
	content := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "content")}).String()
	var nodes []*servetest.Server
	for i := range n {
		s, err := servetest.Start(bin, filepath.Join(t.TempDir(), fmt.Sprint("node", i)),
			"--meta", meta, "--blob-backend", content, "--addr", "off", "--smb", "off")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("node %d: %v\n%s", i, err, s.Stderr)
			}
		})
		nodes = append(nodes, s)
	}
	return nodes
}

// containerClients is an azblob client of container name on each node.
func containerClients(t *testing.T, nodes []*servetest.Server, name string) []*container.Client {
	t.Helper()
	cs := make([]*container.Client, len(nodes))
	for i, n := range nodes {
		svc, err := azblob.NewClientFromConnectionString(connString("BlobEndpoint", n.BlobURL), &azblob.ClientOptions{ClientOptions: noRetry})
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = svc.ServiceClient().NewContainerClient(name)
	}
	return cs
}

// code is the Azure error code of err ("" for none or another error).
func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// TestBlobAcrossNodes: two serve nodes on one PostgreSQL schema and one
// content store. (1) Rounds of eight If-Match Put Blob writers on one
// ETag, spread over both nodes: exactly one succeeds each round, the
// others answer 412 ConditionNotMet, and both nodes then read the
// winner's content. (2) Rounds of eight Acquire Lease calls on one blob,
// spread over both nodes: exactly one gets the lease, the others answer
// 409 LeaseAlreadyPresent, and the lease is released through the other
// node. (3) A blob uploaded in blocks through node A reads back whole
// through node B.
func TestBlobAcrossNodes(t *testing.T) {
	nodes := startBlobNodes(t, 2)
	ctx := context.Background()
	cs := containerClients(t, nodes, "shared")
	if _, err := cs[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[1].Create(ctx, nil); code(err) != string(bloberror.ContainerAlreadyExists) {
		t.Fatalf("create the container again through the other node: %v, want ContainerAlreadyExists", err)
	}

	const writers, rounds = 8, 10
	bbs := func(name string) []*blockblob.Client {
		return []*blockblob.Client{cs[0].NewBlockBlobClient(name), cs[1].NewBlockBlobClient(name)}
	}
	put := bbs("ifmatch")
	r, err := put[0].UploadBuffer(ctx, []byte("start"), nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := *r.ETag
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []int
		var winner azcore.ETag
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				body := fmt.Sprintf("round %d writer %d", round, w)
				r, err := put[w%2].Upload(ctx, streamOf(body), &blockblob.UploadOptions{
					AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, w)
					winner = *r.ETag
				case code(err) != string(bloberror.ConditionNotMet):
					t.Errorf("round %d writer %d (node %d): %v, want success or ConditionNotMet", round, w, w%2, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: writers %v succeeded, want exactly one", round, won)
		}
		want := fmt.Sprintf("round %d writer %d", round, won[0])
		for i, bb := range put {
			if got := download(t, bb.BlobClient()); string(got) != want {
				t.Errorf("round %d: node %d reads %q, want the winner's %q", round, i, got, want)
			}
		}
		etag = winner
	}

	leased := bbs("leased")
	if _, err := leased[0].UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		start := make(chan struct{})
		for w := range writers {
			id := fmt.Sprintf("00000000-0000-0000-%04d-%012d", round, w)
			lc, err := lease.NewBlobClient(leased[w%2], &lease.BlobClientOptions{LeaseID: &id})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				<-start
				_, err := lc.AcquireLease(ctx, 15, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, id)
				case code(err) != string(bloberror.LeaseAlreadyPresent):
					t.Errorf("round %d acquire %s (node %d): %v, want success or LeaseAlreadyPresent", round, id, w%2, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: acquires %v succeeded, want exactly one", round, won)
		}
		for i, bb := range leased {
			p, err := bb.GetProperties(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.LeaseState == nil || *p.LeaseState != lease.StateTypeLeased {
				t.Errorf("round %d: node %d shows lease state %v, want leased", round, i, p.LeaseState)
			}
		}
		// Released through the node the winner did not necessarily use.
		lc, err := lease.NewBlobClient(leased[round%2], &lease.BlobClientOptions{LeaseID: &won[0]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lc.ReleaseLease(ctx, nil); err != nil {
			t.Fatalf("round %d: release through node %d: %v", round, round%2, err)
		}
	}

	// Put Block ×4 and Put Block List through A, read whole through B.
	data := make([]byte, 3<<20+12345)
	rand.Read(data)
	big := bbs("big")
	if _, err := big[0].UploadBuffer(ctx, data, &blockblob.UploadBufferOptions{BlockSize: 1 << 20, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	if got := download(t, big[1].BlobClient()); !bytes.Equal(got, data) {
		t.Errorf("node B reads %d bytes, want the %d node A wrote", len(got), len(data))
	}
	pager := cs[1].NewListBlobsFlatPager(nil)
	var listed []string
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Segment.BlobItems {
			listed = append(listed, *b.Name)
		}
	}
	if fmt.Sprint(listed) != "[big ifmatch leased]" {
		t.Errorf("node B lists %q", listed)
	}
}

func download(t *testing.T, b *blob.Client) []byte {
	t.Helper()
	r, err := b.DownloadStream(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	got, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// streamOf is body as the request body Upload takes.
func streamOf(body string) readSeekCloser { return readSeekCloser{bytes.NewReader([]byte(body))} }

type readSeekCloser struct{ *bytes.Reader }

func (readSeekCloser) Close() error { return nil }
