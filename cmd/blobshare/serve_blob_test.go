package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/integration/servetest"
)

// blobClient is the azblob SDK on a serve's Blob endpoint, without
// retries: each request is answered once, so the races below count what
// the server decided, not what a retry made of it.
func blobClient(t *testing.T, s *servetest.Server) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
		filerest.DevKey+";BlobEndpoint="+s.BlobURL+";",
		&azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func blockBlob(c *azblob.Client, container, name string) *blockblob.Client {
	return c.ServiceClient().NewContainerClient(container).NewBlockBlobClient(name)
}

// startTwo starts two serve processes with Blob on one --data; env is the
// first one's extra environment.
func startTwo(t *testing.T, env []string) (a, b *servetest.Server, data string) {
	t.Helper()
	bin := blobshareBinary(t)
	data = t.TempDir()
	a, err := servetest.StartEnv(bin, data, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop() })
	b, err = servetest.Start(bin, data)
	if err != nil {
		t.Fatalf("a second serve with Blob on the same --data: %v", err)
	}
	t.Cleanup(func() { b.Stop() })
	return a, b, data
}

// httpStatus is the status of an SDK error (0 when it carries none).
func httpStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// race runs n racers at once (racer i talks to clients[i%2]) and returns
// the indexes of those that succeeded; every failure must be one of
// loser's answers.
func race(t *testing.T, n int, loser func(error) bool, do func(i int) (string, error)) (won []int, etags []string) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			etag, err := do(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won, etags = append(won, i), append(etags, etag)
			case !loser(err):
				t.Errorf("racer %d: %v (status %d), want success or a loser's answer", i, err, httpStatus(err))
			}
		})
	}
	close(start)
	wg.Wait()
	return won, etags
}

// TestTwoServesRaceBlobWrites: two real serve processes on one --data
// both serve Blob, and the writes raced across them are exact, as in one
// process: (a) Put Blob and Set Blob Metadata with If-Match on one ETag,
// 8 writers split over the two: exactly one 2xx per round, the others
// 412 ConditionNotMet, and the blob is the winner's; (b) Lease Blob
// acquires, and Lease Container acquires: exactly one 201, the others
// 409 LeaseAlreadyPresent; (c) Put
// Block List with If-None-Match: * on a new name, each writer its own
// staged block: exactly one 201, the others 409 BlobAlreadyExists, and
// the blob holds the winner's block.
func TestTwoServesRaceBlobWrites(t *testing.T) {
	ctx := context.Background()
	a, b, _ := startTwo(t, nil)
	clients := []*azblob.Client{blobClient(t, a), blobClient(t, b)}
	if _, err := clients[0].CreateContainer(ctx, "race", nil); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 8, 12
	bb := func(i int, name string) *blockblob.Client { return blockBlob(clients[i%2], "race", name) }
	if _, err := clients[1].UploadBuffer(ctx, "race", "ifmatch", []byte("round -1"), nil); err != nil {
		t.Fatal(err)
	}

	t.Run("IfMatch", func(t *testing.T) {
		conditionNotMet := func(err error) bool { return bloberror.HasCode(err, bloberror.ConditionNotMet) }
		for round := range rounds {
			props, err := bb(round, "ifmatch").GetProperties(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			cond := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: props.ETag}}
			body := func(i int) []byte { return []byte(fmt.Sprintf("round %d writer %d", round, i)) }
			won, etags := race(t, writers, conditionNotMet, func(i int) (string, error) {
				if i%4 < 2 { // Put Blob from writers 0, 1 (A, B), 4, 5
					r, err := bb(i, "ifmatch").Upload(ctx, streaming.NopCloser(bytes.NewReader(body(i))),
						&blockblob.UploadOptions{AccessConditions: cond})
					if err != nil {
						return "", err
					}
					return string(*r.ETag), nil
				}
				r, err := bb(i, "ifmatch").SetMetadata(ctx, map[string]*string{"writer": to.Ptr(fmt.Sprint(i))},
					&blob.SetMetadataOptions{AccessConditions: cond})
				if err != nil {
					return "", err
				}
				return string(*r.ETag), nil
			})
			if len(won) != 1 {
				t.Fatalf("round %d: %d writers won %v, want exactly 1", round, len(won), won)
			}
			w := won[0]
			got, err := bb(w+1, "ifmatch").DownloadStream(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(got.Body)
			got.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(*got.ETag) != etags[0] {
				t.Errorf("round %d: the blob's ETag %s, want the winner's %s", round, *got.ETag, etags[0])
			}
			if w%4 < 2 && !bytes.Equal(data, body(w)) {
				t.Errorf("round %d: content %q, want the winning Put Blob's %q", round, data, body(w))
			}
			if w%4 >= 2 && (got.Metadata["Writer"] == nil || *got.Metadata["Writer"] != fmt.Sprint(w)) {
				t.Errorf("round %d: metadata %v, want the winning writer %d's", round, got.Metadata, w)
			}
		}
	})

	t.Run("LeaseAcquire", func(t *testing.T) {
		leasePresent := func(err error) bool { return bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) }
		for round := range rounds {
			ids := make([]string, writers)
			won, _ := race(t, writers, leasePresent, func(i int) (string, error) {
				lc, err := lease.NewBlobClient(bb(i, "ifmatch"), nil)
				if err != nil {
					return "", err
				}
				ids[i] = *lc.LeaseID()
				_, err = lc.AcquireLease(ctx, 15, nil)
				return "", err
			})
			if len(won) != 1 {
				t.Fatalf("round %d: %d acquires won %v, want exactly 1", round, len(won), won)
			}
			lc, err := lease.NewBlobClient(bb(round, "ifmatch"), &lease.BlobClientOptions{LeaseID: &ids[won[0]]})
			if err != nil {
				t.Fatal(err)
			}
			// Only the winner's id holds the lease, through either process.
			if _, err := lc.ReleaseLease(ctx, nil); err != nil {
				t.Fatalf("round %d: release with the winner's id: %v", round, err)
			}
		}
	})

	t.Run("ContainerLeaseAcquire", func(t *testing.T) {
		leasePresent := func(err error) bool { return bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) }
		for round := range rounds {
			ids := make([]string, writers)
			won, _ := race(t, writers, leasePresent, func(i int) (string, error) {
				lc, err := lease.NewContainerClient(clients[i%2].ServiceClient().NewContainerClient("race"), nil)
				if err != nil {
					return "", err
				}
				ids[i] = *lc.LeaseID()
				_, err = lc.AcquireLease(ctx, 15, nil)
				return "", err
			})
			if len(won) != 1 {
				t.Fatalf("round %d: %d container lease acquires won %v, want exactly 1", round, len(won), won)
			}
			lc, err := lease.NewContainerClient(clients[(round+1)%2].ServiceClient().NewContainerClient("race"),
				&lease.ContainerClientOptions{LeaseID: &ids[won[0]]})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lc.ReleaseLease(ctx, nil); err != nil {
				t.Fatalf("round %d: release with the winner's id: %v", round, err)
			}
		}
	})

	t.Run("CommitIfNoneMatch", func(t *testing.T) {
		exists := func(err error) bool { return bloberror.HasCode(err, bloberror.BlobAlreadyExists) }
		for round := range rounds {
			name := fmt.Sprintf("commit-%d", round)
			id := func(i int) string { return blockID(fmt.Sprintf("w%02d", i)) }
			for i := range writers {
				if _, err := bb(i, name).StageBlock(ctx, id(i), streaming.NopCloser(strings.NewReader(fmt.Sprint("block of ", i))), nil); err != nil {
					t.Fatal(err)
				}
			}
			star := azcore.ETagAny
			won, _ := race(t, writers, exists, func(i int) (string, error) {
				r, err := bb(i, name).CommitBlockList(ctx, []string{id(i)}, &blockblob.CommitBlockListOptions{
					AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &star}}})
				if err != nil {
					return "", err
				}
				return string(*r.ETag), nil
			})
			if len(won) != 1 {
				t.Fatalf("round %d: %d commits won %v, want exactly 1", round, len(won), won)
			}
			got, err := bb(round+1, name).DownloadStream(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(got.Body)
			got.Body.Close()
			if want := fmt.Sprint("block of ", won[0]); string(data) != want {
				t.Errorf("round %d: content %q, want the winner's %q", round, data, want)
			}
		}
	})
}

// blockID is a base64 block id.
func blockID(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestTwoServesBlobCommitKilled: two serve processes with Blob on one
// --data; the first is held in a Put Blob's commit (a test hook) after
// its intent (the content not committed) or after its content commit
// (the row not written), holding the blob's claim. Meanwhile the second
// never adopts the live first's commit: its write of the blob waits (and
// gives up with the client) and the intent stays the first's. Then the
// first is SIGKILLed: the second resolves the dead owner's intent — the
// blob is the old whole content (killed after the intent) or the new
// whole content (killed after the content commit), read through the
// second at once — then writes the blob itself; a blob the first stored
// before is intact.
func TestTwoServesBlobCommitKilled(t *testing.T) {
	for _, tc := range []struct {
		stage string
		want  string // the blob after the kill, before anyone writes it
	}{
		{"intent", "old content"},
		{"content", "new content, paused in its commit"},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			ctx := context.Background()
			a, b, data := startTwo(t, []string{commitPauseEnv + "=" + tc.stage + " box/held"})
			ca, cb := blobClient(t, a), blobClient(t, b)
			if _, err := cb.CreateContainer(ctx, "box", nil); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{"held": "old content", "other": "stored through the first"} {
				client := ca
				if name == "held" {
					client = cb // the first pauses every commit of box/held
				}
				if _, err := client.UploadBuffer(ctx, "box", name, []byte(body), nil); err != nil {
					t.Fatal(err)
				}
			}

			// The first's Put Blob of box/held, paused in its commit.
			putDone := make(chan error, 1)
			go func() {
				_, err := ca.UploadBuffer(ctx, "box", "held", []byte("new content, paused in its commit"), nil)
				putDone <- err
			}()
			if !a.Stderr.WaitFor("blob commit paused", 30*time.Second) {
				t.Fatalf("the first serve never paused its commit:\n%s", a.Stderr)
			}
			db := openBlobDB(t, data)
			owner := intentOwner(t, db, "box", "held")
			if owner == "" {
				t.Fatal("no intent of the paused commit")
			}

			// The live first's commit is not adopted: the second's write
			// waits for the claim until its client gives up.
			wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			_, err := cb.UploadBuffer(wctx, "box", "held", []byte("the second's, too early"), nil)
			cancel()
			if err == nil {
				t.Fatal("the second serve wrote a blob whose claim a live process holds")
			}
			if got := intentOwner(t, db, "box", "held"); got != owner {
				t.Fatalf("the paused commit's intent now belongs to %q, want the live first's %q", got, owner)
			}
			if tc.stage == "intent" {
				if got := download(t, cb, "box", "held"); got != "old content" {
					t.Fatalf("read through the second while the first holds its commit: %q, want the old content", got)
				}
			}

			if _, err := a.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := <-putDone; err == nil {
				t.Error("the killed serve's Put Blob was acknowledged")
			}
			if got := download(t, cb, "box", "held"); got != tc.want {
				t.Fatalf("after the kill: %q, want %q whole", got, tc.want)
			}
			if got := download(t, cb, "box", "other"); got != "stored through the first" {
				t.Fatalf("a blob the killed serve stored: %q", got)
			}
			if _, err := cb.UploadBuffer(ctx, "box", "held", []byte("the second's"), nil); err != nil {
				t.Fatalf("write after the kill: %v", err)
			}
			if got := intentOwner(t, db, "box", "held"); got != "" {
				t.Errorf("the dead owner's intent is left (owner %q)", got)
			}
			if got := download(t, cb, "box", "held"); got != "the second's" {
				t.Errorf("after the second's write: %q", got)
			}
		})
	}
}

// download reads a whole blob.
func download(t *testing.T, c *azblob.Client, container, name string) string {
	t.Helper()
	r, err := c.DownloadStream(context.Background(), container, name, nil)
	if err != nil {
		t.Fatalf("download %s/%s: %v (status %d)", container, name, err, httpStatus(err))
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openBlobDB opens the data directory's blob.db beside the running serves.
func openBlobDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlstore.FileName)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// intentOwner is the owner of the blob's commit intent ("" for none).
func intentOwner(t *testing.T, db *sql.DB, container, name string) string {
	t.Helper()
	var owner string
	err := db.QueryRow(`SELECT owner FROM bs_intents WHERE container = ? AND name = ?`, container, name).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return owner
}
