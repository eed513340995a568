package multinode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// requestTimeout is the clients' timeout: a request still unanswered
// after it hangs, which the fault tests count as a failure.
const requestTimeout = 20 * time.Second

// statusOf is an SDK error's HTTP status (0 for no response).
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// outcomes counts answers by status; unexpected keeps the others.
type outcomes struct {
	mu         sync.Mutex
	byStatus   map[int]int
	unexpected []error
}

// add records an answer and returns its status: success, 503 ServerBusy
// and the expected statuses are fine, anything else (another 5xx, a 503
// with another code, no answer within requestTimeout) is unexpected.
func (o *outcomes) add(err error, expected ...int) int {
	st := http.StatusOK
	if err != nil {
		st = statusOf(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byStatus == nil {
		o.byStatus = map[int]int{}
	}
	o.byStatus[st]++
	if err == nil {
		return st
	}
	var re *azcore.ResponseError
	if st == http.StatusServiceUnavailable {
		if errors.As(err, &re) && re.ErrorCode != storagehttp.CodeServerBusy {
			o.unexpected = append(o.unexpected, fmt.Errorf("503 with code %q, want %s: %w", re.ErrorCode, storagehttp.CodeServerBusy, err))
		}
		return st
	}
	for _, e := range expected {
		if st == e {
			return st
		}
	}
	o.unexpected = append(o.unexpected, err)
	return st
}

// load is a mixed Table and Queue workload on every node, recording what
// was acknowledged so that a fault test can check afterwards that nothing
// acknowledged was lost and nothing was half applied:
//   - If-Match increments of one counter entity (read, then update);
//   - batches of ten entities, each batch in a partition of its own;
//   - queue puts, and gets (visibility one hour) each followed by a
//     delete with the pop receipt through the other node.
type load struct {
	t      *testing.T
	nodes  []*servetest.Server
	tables []*aztables.Client
	queues []*azqueue.QueueClient

	stop chan struct{}
	wg   sync.WaitGroup
	o    outcomes

	slowest        atomic.Int64 // the longest request loop turn, in ns
	incOK, incLost atomic.Int64 // acknowledged increments; 503s on the update itself
	unavailable    atomic.Int64
	successes      []atomic.Int64 // per node

	mu        sync.Mutex
	batches   map[int]string  // batch → "ok" or "503"
	put       map[string]bool // message ids whose put was acknowledged
	delivered map[string]int  // message id → times a get handed it out
	deleted   map[string]bool // message ids whose delete was acknowledged
}

// startLoad creates table and queue name and runs the workload, two
// workers of each kind per node, until finish.
func startLoad(t *testing.T, nodes []*servetest.Server, name string) *load {
	t.Helper()
	l := &load{t: t, nodes: nodes, tables: tableClients(t, nodes, name), queues: queueClients(t, nodes, name),
		stop: make(chan struct{}), successes: make([]atomic.Int64, len(nodes)),
		batches: map[int]string{}, put: map[string]bool{}, delivered: map[string]int{}, deleted: map[string]bool{}}
	ctx := context.Background()
	if _, err := l.tables[0].CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.queues[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.tables[0].AddEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"n","N":0}`), nil); err != nil {
		t.Fatal(err)
	}
	l.run(l.increment)
	var nextBatch atomic.Int64
	l.run(func(ctx context.Context, w int) { l.batch(ctx, w, int(nextBatch.Add(1))) })
	var nextMsg atomic.Int64
	l.run(func(ctx context.Context, w int) { l.putMessage(ctx, w, fmt.Sprint("m", nextMsg.Add(1))) })
	l.run(l.getMessages)
	return l
}

// run starts two workers per node looping f until finish, each request
// under requestTimeout.
func (l *load) run(f func(ctx context.Context, w int)) {
	for w := range 2 * len(l.nodes) {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				began := time.Now()
				f(ctx, w)
				cancel()
				storeMax(&l.slowest, int64(time.Since(began)))
			}
		})
	}
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old; old = a.Load() {
		if a.CompareAndSwap(old, v) {
			return
		}
	}
}

func (l *load) answered(err error, expected ...int) int {
	st := l.o.add(err, expected...)
	if st == http.StatusServiceUnavailable {
		l.unavailable.Add(1)
	}
	return st
}

func (l *load) increment(ctx context.Context, w int) {
	node := w % len(l.nodes)
	c := l.tables[node]
	got, err := c.GetEntity(ctx, "c", "n", nil)
	if l.answered(err); err != nil {
		return
	}
	var e struct{ N int }
	if err := json.Unmarshal(got.Value, &e); err != nil {
		l.t.Error(err)
		return
	}
	_, err = c.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"c","RowKey":"n","N":%d}`, e.N+1)),
		&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
	switch l.answered(err, http.StatusPreconditionFailed) {
	case http.StatusOK:
		l.incOK.Add(1)
		l.successes[node].Add(1)
	case http.StatusServiceUnavailable:
		l.incLost.Add(1)
	}
}

func (l *load) batch(ctx context.Context, w, b int) {
	acts := make([]aztables.TransactionAction, 10)
	for i := range acts {
		acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: []byte(fmt.Sprintf(`{"PartitionKey":"b%06d","RowKey":"%02d"}`, b, i))}
	}
	_, err := l.tables[w%len(l.nodes)].SubmitTransaction(ctx, acts, nil)
	st := l.answered(err)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StatusOK:
		l.batches[b] = "ok"
	case http.StatusServiceUnavailable:
		l.batches[b] = "503"
	}
}

func (l *load) putMessage(ctx context.Context, w int, text string) {
	r, err := l.queues[w%len(l.nodes)].EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
	if l.answered(err) == http.StatusOK && len(r.Messages) == 1 {
		l.mu.Lock()
		l.put[*r.Messages[0].MessageID] = true
		l.mu.Unlock()
	}
}

func (l *load) getMessages(ctx context.Context, w int) {
	get, del := l.queues[w%len(l.nodes)], l.queues[(w+1)%len(l.nodes)]
	r, err := get.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(4)), VisibilityTimeout: to.Ptr(int32(3600))})
	if l.answered(err) != http.StatusOK {
		return
	}
	if len(r.Messages) == 0 {
		time.Sleep(5 * time.Millisecond) // an empty queue: let the puts get ahead
		return
	}
	for _, m := range r.Messages {
		l.mu.Lock()
		l.delivered[*m.MessageID]++
		l.mu.Unlock()
		_, err := del.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
		if l.answered(err) == http.StatusOK {
			l.mu.Lock()
			l.deleted[*m.MessageID] = true
			l.mu.Unlock()
		}
	}
}

// waitFor waits for cond, failing the test (after stopping the load) when
// it does not hold within d.
func (l *load) waitFor(what string, d time.Duration, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			l.finish()
			l.t.Fatalf("%s: not within %v (answers so far %v)", what, d, l.o.byStatus)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servedSince waits until every node has acknowledged an increment
// beyond the counts in before (taken with served).
func (l *load) servedSince(what string, before []int64) {
	l.t.Helper()
	l.waitFor(what, 30*time.Second, func() bool {
		for i := range l.nodes {
			if l.successes[i].Load() <= before[i] {
				return false
			}
		}
		return true
	})
}

// served is every node's count of acknowledged increments so far.
func (l *load) served() []int64 {
	before := make([]int64, len(l.nodes))
	for i := range l.nodes {
		before[i] = l.successes[i].Load()
	}
	return before
}

// finish stops the workers and reports the unexpected answers. Safe to
// call twice.
func (l *load) finish() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	l.wg.Wait()
	for i, err := range l.o.unexpected {
		if i == 5 {
			l.t.Errorf("… and %d more unexpected answers", len(l.o.unexpected)-5)
			break
		}
		l.t.Errorf("unexpected answer: %v", err)
	}
	if len(l.o.unexpected) > 0 {
		for i, n := range l.nodes {
			logged := 0
			for line := range strings.Lines(n.Stderr.String()) {
				if strings.Contains(line, "request failed") && !strings.Contains(line, "database unavailable") && logged < 3 {
					l.t.Logf("node %d logged: %s", i, strings.TrimSpace(line))
					logged++
				}
			}
		}
	}
}

// check verifies, after finish, on the database of conn (the nodes'
// schema): the counter holds every acknowledged increment (and at most
// those plus the ones whose answer was a 503), every batch is whole or
// absent and every acknowledged one whole; every acknowledged put is
// either still stored or was deleted with an acknowledged delete, no
// acknowledged delete left its message, and no get handed a message out
// twice (the visibility timeout, an hour, outlasts the test).
func (l *load) check(conn string) {
	t := l.t
	t.Helper()
	ctx := context.Background()
	got, err := l.tables[len(l.nodes)-1].GetEntity(ctx, "c", "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ N int64 }
	if err := json.Unmarshal(got.Value, &e); err != nil {
		t.Fatal(err)
	}
	if e.N < l.incOK.Load() || e.N > l.incOK.Load()+l.incLost.Load() {
		t.Errorf("counter %d after %d acknowledged increments and %d answered 503", e.N, l.incOK.Load(), l.incLost.Load())
	}
	for b, outcome := range l.batches {
		n := batchEntities(t, l.tables[0], b)
		if n != 0 && n != 10 || outcome == "ok" && n != 10 {
			t.Errorf("batch %d (%s) has %d of its 10 entities", b, outcome, n)
		}
	}
	// The messages, read from the database itself: a get whose answer
	// was lost in the outage hid its messages for an hour from any get.
	db, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	rows, err := db.Query(ctx, `SELECT id FROM mq_messages`)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	inDB := map[string]bool{}
	for _, id := range stored {
		inDB[id] = true
	}
	lost, undeleted, twice := 0, 0, 0
	for id := range l.put {
		if !inDB[id] && !l.deleted[id] {
			lost++
		}
	}
	for id := range l.deleted {
		if inDB[id] {
			undeleted++
		}
	}
	for id, n := range l.delivered {
		if n > 1 {
			twice++
			t.Errorf("message %s handed out %d times within its visibility timeout", id, n)
		}
	}
	if lost > 0 || undeleted > 0 {
		t.Errorf("%d of %d acknowledged puts lost; %d of %d acknowledged deletes left their message", lost, len(l.put), undeleted, len(l.deleted))
	}
	t.Logf("answers %v; %d increments acknowledged (%d lost to 503), %d batches, %d puts, %d gets, %d deletes acknowledged; slowest turn %v",
		l.o.byStatus, l.incOK.Load(), l.incLost.Load(), len(l.batches), len(l.put), len(l.delivered), len(l.deleted),
		time.Duration(l.slowest.Load()).Round(time.Millisecond))
}
