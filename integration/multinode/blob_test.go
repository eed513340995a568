package multinode

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/internal/pgtest"
)

// startBlobNodes starts n serve processes on a new schema of cluster c
// and one content store they share (--blob-backend file://DIR:
// nodes on one host), each with its own --data and the Blob, Queue and
// Table endpoints; env(i) is node i's extra environment (nil: none),
// params are added to the --meta URL's query. It returns them with the
// schema's connection string.
func startBlobNodes(t *testing.T, c *pgtest.Cluster, n int, env func(i int) []string, params string) ([]*servetest.Server, string) {
	t.Helper()
	conn := c.Schema(t)
	meta := metaURL(t, conn) + params
	content := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "content")}).String()
	var nodes []*servetest.Server
	for i := range n {
		var e []string
		if env != nil {
			e = env(i)
		}
		s, err := servetest.StartEnv(bin, filepath.Join(t.TempDir(), fmt.Sprint("node", i)), e,
			"--meta", meta, "--blob-backend", content, "--addr", "off", "--smb", "off")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			select {
			case <-s.Done: // the test killed it
				return
			default:
			}
			if err := s.Stop(); err != nil {
				t.Errorf("node %d: %v\n%s", i, err, s.Stderr)
			}
		})
		nodes = append(nodes, s)
	}
	return nodes, conn
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
	nodes, _ := startBlobNodes(t, pg, 2, nil, "")
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

// TestBlobNodeKilledInCommit: node A is held in a Put Blob's commit (the
// serve's test hook) after its content commit, before its row, holding
// the blob's claim and its commit intent. Node B does not adopt the live
// A's commit: its write of the blob waits until its client gives up, and
// the intent stays A's. A is SIGKILLed: its database session ends, so B
// judges it dead at once — B's read of the blob resolves the dead node's
// intent and returns A's new content whole, B's write then succeeds and
// leaves no intent behind.
func TestBlobNodeKilledInCommit(t *testing.T) {
	nodes, conn := startBlobNodes(t, pg, 2, func(i int) []string {
		if i == 0 {
			return []string{"BLOBSHARE_TEST_PAUSE_BLOB_COMMIT=content box/held"}
		}
		return nil
	}, "")
	a := nodes[0]
	ctx := context.Background()
	cs := containerClients(t, nodes, "box")
	if _, err := cs[1].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	held := []*blockblob.Client{cs[0].NewBlockBlobClient("held"), cs[1].NewBlockBlobClient("held")}
	if _, err := held[1].UploadBuffer(ctx, []byte("old content"), nil); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	intentOwner := func() string {
		t.Helper()
		var owner string
		err := db.QueryRow(ctx, `SELECT owner FROM bs_intents WHERE container = 'box' AND name = 'held'`).Scan(&owner)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		return owner
	}

	const paused = "new content, paused in its commit"
	putDone := make(chan error, 1)
	go func() {
		_, err := held[0].UploadBuffer(ctx, []byte(paused), nil)
		putDone <- err
	}()
	if !a.Stderr.WaitFor("blob commit paused", 30*time.Second) {
		t.Fatalf("node A never paused its commit:\n%s", a.Stderr)
	}
	owner := intentOwner()
	if owner == "" {
		t.Fatal("no intent of the paused commit")
	}
	wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	_, err = held[1].UploadBuffer(wctx, []byte("B's, too early"), nil)
	cancel()
	if err == nil {
		t.Fatal("node B wrote a blob whose claim a live node holds")
	}
	if got := intentOwner(); got != owner {
		t.Fatalf("the paused commit's intent now belongs to %q, want the live A's %q", got, owner)
	}

	if _, err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-putDone; err == nil {
		t.Error("the killed node's Put Blob was acknowledged")
	}
	began := time.Now()
	if got := download(t, held[1].BlobClient()); string(got) != paused {
		t.Fatalf("read through B after the kill: %q, want A's committed content %q whole", got, paused)
	}
	if _, err := held[1].UploadBuffer(ctx, []byte("B's"), nil); err != nil {
		t.Fatalf("B's write after the kill: %v", err)
	}
	t.Logf("after the SIGKILL, B read the resolved blob and wrote it in %v", time.Since(began))
	if got := intentOwner(); got != "" {
		t.Errorf("the dead node's intent is left (owner %q)", got)
	}
	if got := download(t, held[1].BlobClient()); string(got) != "B's" {
		t.Errorf("after B's write: %q", got)
	}
}

// TestBlobDatabaseRestart: six If-Match writers increment a counter blob
// through two nodes while their PostgreSQL (the test's own) is stopped
// (pg_ctl stop -m fast, then -m immediate) and started again. While it is
// down requests answer 503 ServerBusy or 412 (a lost If-Match race),
// nothing else, and none hangs; afterwards both nodes serve the blob's
// writers again by themselves — no node is taken for dead because the
// restart ended its session (pgdb.NodeAlive's incarnation rule), and no
// claim is left held by a release that failed while the database was down
// — and the counter holds every acknowledged increment, plus at most the
// ones answered 503 whose commit went through unacknowledged.
func TestBlobDatabaseRestart(t *testing.T) {
	c := pgtest.Private(t)
	nodes, _ := startBlobNodes(t, c, 2, nil, "")
	ctx := context.Background()
	cs := containerClients(t, nodes, "restart")
	if _, err := cs[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	counter := []*blockblob.Client{cs[0].NewBlockBlobClient("counter"), cs[1].NewBlockBlobClient("counter")}
	if _, err := counter[0].UploadBuffer(ctx, []byte("0"), nil); err != nil {
		t.Fatal(err)
	}
	var out outcomes
	var acked, ambiguous atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		bb := counter[w%2]
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch increment(ctx, bb, &out) {
				case http.StatusOK:
					acked.Add(1)
				case http.StatusServiceUnavailable:
					ambiguous.Add(1)
				}
			}
		})
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) {
				out.mu.Lock()
				defer out.mu.Unlock()
				t.Fatalf("%s: not within %v (answers by status %v)", what, d, out.byStatus)
			}
			time.Sleep(5 * time.Millisecond) // the load runs on its own: nothing to wait on
		}
	}
	busy := func() int {
		out.mu.Lock()
		defer out.mu.Unlock()
		return out.byStatus[http.StatusServiceUnavailable]
	}
	waitFor("20 increments before the first stop", 30*time.Second, func() bool { return acked.Load() >= 20 })
	for _, mode := range []string{"fast", "immediate"} {
		before := busy()
		if err := c.Halt(mode); err != nil {
			t.Fatal(err)
		}
		down := time.Now()
		waitFor("requests answered 503 while stopped ("+mode+")", 20*time.Second, func() bool { return busy() >= before+10 })
		time.Sleep(time.Until(down.Add(time.Second))) // at least a second without the database
		if err := c.Resume(); err != nil {
			t.Fatal(err)
		}
		up, ackedBefore := time.Now(), acked.Load()
		waitFor("20 increments after the "+mode+" stop", 30*time.Second, func() bool { return acked.Load() >= ackedBefore+20 })
		t.Logf("%s stop: down %v, 20 increments %v after the start", mode, up.Sub(down).Round(time.Millisecond), time.Since(up).Round(time.Millisecond))
	}
	stopLoad()

	out.mu.Lock()
	for _, err := range out.unexpected {
		t.Errorf("unexpected answer: %v", err)
	}
	t.Logf("answers by status: %v", out.byStatus)
	out.mu.Unlock()
	for i, bb := range counter {
		got, err := strconv.Atoi(string(download(t, bb.BlobClient())))
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := acked.Load(), acked.Load()+ambiguous.Load(); int64(got) < lo || int64(got) > hi {
			t.Errorf("node %d reads counter %d, want between the %d acknowledged increments and %d (plus those answered 503)", i, got, lo, hi)
		}
	}
}

// TestBlobContentStoreRecorded: the first Blob node on a database records
// its content store there; a node started without --blob-backend uses it
// (it reads what the first wrote), and one naming another content store is
// refused with one line naming both.
func TestBlobContentStoreRecorded(t *testing.T) {
	meta := metaURL(t, pg.Schema(t))
	shared := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "content")}).String()
	start := func(i int, extra ...string) (*servetest.Server, error) {
		args := append([]string{"--meta", meta, "--addr", "off", "--smb", "off"}, extra...)
		s, err := servetest.Start(bin, filepath.Join(t.TempDir(), fmt.Sprint("node", i)), args...)
		if err == nil {
			t.Cleanup(func() {
				if err := s.Stop(); err != nil {
					t.Errorf("node %d: %v\n%s", i, err, s.Stderr)
				}
			})
		}
		return s, err
	}
	first, err := start(0, "--blob-backend", shared)
	if err != nil {
		t.Fatal(err)
	}
	second, err := start(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs := containerClients(t, []*servetest.Server{first, second}, "box")
	if _, err := cs[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[0].NewBlockBlobClient("b").UploadBuffer(ctx, []byte("written on the first node"), nil); err != nil {
		t.Fatal(err)
	}
	if got := download(t, cs[1].NewBlobClient("b")); string(got) != "written on the first node" {
		t.Errorf("the node without --blob-backend reads %q", got)
	}
	other := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "other")}).String()
	_, err = start(2, "--blob-backend", other)
	if err == nil || !strings.Contains(err.Error(), "--blob-backend "+other+" is another content store than the database's ("+shared) {
		t.Errorf("a node naming another content store: %v, want one line naming both", err)
	}
}

// increment reads the counter blob bb and writes it back one higher with
// If-Match on the ETag read, each request recorded in out, and returns
// the write's status; 0 when the read failed (after a client's backoff
// on 503: spare the shared cores while the database is down).
func increment(ctx context.Context, bb *blockblob.Client, out *outcomes) int {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	r, err := bb.DownloadStream(rctx, nil)
	var n int
	if err == nil {
		var body []byte
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		if err == nil {
			n, err = strconv.Atoi(string(body))
		}
	}
	cancel()
	if st := out.add(err); st != http.StatusOK {
		if st == http.StatusServiceUnavailable {
			time.Sleep(10 * time.Millisecond)
		}
		return 0
	}
	rctx, cancel = context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err = bb.Upload(rctx, streamOf(fmt.Sprint(n+1)), &blockblob.UploadOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: r.ETag}}})
	return out.add(err, http.StatusPreconditionFailed)
}
