package multinode

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/jackc/pgx/v5"
)

// takeoverLine is a node's log line for a Blob claim it took over.
var takeoverLine = regexp.MustCompile(`msg="blob claim taken over from a dead owner"[^\n]* from=(\S+)`)

// reregisteredLine is a node's log line for leaving an id (old=) for a
// new one.
var reregisteredLine = regexp.MustCompile(`msg="node lost its session or its heartbeat expired; registered again under a new id" old=(\S+) node=\S+`)

// TestBlobNodeCut: under If-Match writers of one blob on two nodes, every
// database connection of node 1 (its pool's, its session-lock
// connection, its listener) is terminated while the database runs on.
// The others judge node 1 dead at once (its lock is free), so node 1
// fences itself and comes back under a new id, never its old one
// (status shows it alive, the old id dead); no update is lost, nothing
// answers a 5xx but 503 ServerBusy, every claim taken over is one of an
// id node 1 left (nothing of a live node), and node 1 serves writes
// again. (A backend's termination lands asynchronously, so a connection
// node 1 opened right after the cut may be cut too: it then leaves that
// id as well.)
func TestBlobNodeCut(t *testing.T) {
	const app = "blobshare-cut-node"
	nodes, conn := startBlobNodes(t, pg, 2, func(i int) []string {
		if i == 1 {
			return []string{"PGAPPNAME=" + app}
		}
		return nil
	}, "")
	meta := metaURL(t, conn)
	ctx := context.Background()
	idOf := func(listed []statusNode, pid int) (statusNode, bool) {
		i := slices.IndexFunc(listed, func(s statusNode) bool { return s.PID == pid && s.Alive })
		if i < 0 {
			return statusNode{}, false
		}
		return listed[i], true
	}
	listed := statusNodes(t, meta)
	n0, ok0 := idOf(listed, nodes[0].Pid())
	n1, ok1 := idOf(listed, nodes[1].Pid())
	if !ok0 || !ok1 {
		t.Fatalf("before the cut: %+v", listed)
	}
	oldID := n1.ID

	cs := containerClients(t, nodes, "cut")
	if _, err := cs[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	counter := []*blockblob.Client{cs[0].NewBlockBlobClient("counter"), cs[1].NewBlockBlobClient("counter")}
	if _, err := counter[0].UploadBuffer(ctx, []byte("0"), nil); err != nil {
		t.Fatal(err)
	}
	var out outcomes
	var acked, ambiguous atomic.Int64
	var ackedBy [2]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		node := w % 2
		bb := counter[node]
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
					ackedBy[node].Add(1)
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
	waitFor("20 increments on each node before the cut", 30*time.Second, func() bool {
		return ackedBy[0].Load() >= 20 && ackedBy[1].Load() >= 20
	})

	admin, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var cut int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&cut); err != nil {
		t.Fatal(err)
	}
	if cut < 2 { // at least the session-lock connection and one of the pool's
		t.Fatalf("terminated %d connections of node 1, want its lock connection and its pool's", cut)
	}
	cutAt := time.Now()
	var n1New statusNode
	waitFor("node 1 registered again under a new id", 20*time.Second, func() bool {
		listed := statusNodes(t, meta)
		s, ok := idOf(listed, nodes[1].Pid())
		old := slices.IndexFunc(listed, func(s statusNode) bool { return s.ID == oldID && s.Alive })
		n1New = s
		return ok && s.ID != oldID && old < 0
	})
	t.Logf("node 1 cut (%d connections), back as %s (was %s) %v later", cut, n1New.ID, oldID, time.Since(cutAt).Round(time.Millisecond))
	// It learnt of the cut from its lock connection (fenced), not from
	// a heartbeat 2 s later, and left the cut id.
	for _, want := range []string{`msg="node lost its session lock connection; fenced until it registers again" node=` + oldID,
		`msg="node lost its session or its heartbeat expired; registered again under a new id" old=` + oldID + ` node=`} {
		if !nodes[1].Stderr.WaitFor(want, 5*time.Second) { // logged right after the registration status saw
			t.Errorf("node 1's log has no %s:\n%s", want, nodes[1].Stderr)
		}
	}
	after := ackedBy[1].Load()
	waitFor("20 increments by node 1 after it came back", 30*time.Second, func() bool { return ackedBy[1].Load() >= after+20 })
	stopLoad()

	out.mu.Lock()
	for _, err := range out.unexpected {
		t.Errorf("unexpected answer: %v", err)
	}
	t.Logf("answers by status: %v; acknowledged %d (node 0 %d, node 1 %d), 503 on the write %d",
		out.byStatus, acked.Load(), ackedBy[0].Load(), ackedBy[1].Load(), ambiguous.Load())
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

	// Every claim taken over was one of an id node 1 left (the cut one,
	// or one that a termination still on its way also cut: it may leave
	// several): never node 0's, never node 1's id now.
	final, ok := idOf(statusNodes(t, meta), nodes[1].Pid())
	if !ok {
		t.Fatal("node 1 is not alive after the load")
	}
	left := map[string]bool{}
	for _, m := range reregisteredLine.FindAllStringSubmatch(nodes[1].Stderr.String(), -1) {
		left[m[1]] = true
	}
	if !left[oldID] || left[final.ID] || left[n0.ID] {
		t.Errorf("node 1 left the ids %v and is now %s; want the cut id %s among them, and neither its id now nor node 0's %s", left, final.ID, oldID, n0.ID)
	}
	takeovers := 0
	for i, n := range nodes {
		for _, m := range takeoverLine.FindAllStringSubmatch(n.Stderr.String(), -1) {
			takeovers++
			if !left[m[1]] {
				t.Errorf("node %d took over a claim of %s, a live node (node 1 left %v; node 0 is %s, node 1 now %s)", i, m[1], left, n0.ID, final.ID)
			}
		}
	}
	t.Logf("claims of ids node 1 left (%d of them) taken over: %d", len(left), takeovers)

	// status lists node 1's new id alive and, the load over, no claim
	// held (releases that failed during the cut are retried within a
	// second).
	waitFor("no Blob claim held after the load", 10*time.Second, func() bool {
		return strings.Contains(status(t, meta), "No Blob claims held.")
	})
	if text := status(t, meta); !strings.Contains(text, final.ID) || !strings.Contains(text, oldID) {
		t.Errorf("status text after the cut:\n%s", text)
	}
}
