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
)

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
	if err != nil && st != http.StatusServiceUnavailable {
		ok := false
		for _, e := range expected {
			ok = ok || st == e
		}
		if !ok {
			o.unexpected = append(o.unexpected, err)
		}
	}
	return st
}

// TestDatabaseOutage: two nodes serve Table and Queue clients while the
// database drops every connection of theirs and refuses new ones for a
// while (as a restart or a failover looks to them), then comes back.
// While it is away requests answer 503 ServerBusy — never another 5xx,
// never a 4xx that blames the request — and do not hang; afterwards each
// node serves again by itself. Nothing is half applied: every batch is
// wholly present or wholly absent, every acknowledged batch and message is
// there, and the If-Match counter holds every acknowledged increment
// (and at most those plus the ones whose answer was lost in the outage).
func TestDatabaseOutage(t *testing.T) {
	nodes := startNodes(t, 2, "&application_name=blobshare-node")
	ctx := context.Background()
	// The admin connection is to another database: a database cannot
	// refuse connections while the session changing that is in it.
	admin, err := pgx.Connect(ctx, strings.Replace(pg.ConnString(), "dbname=postgres", "dbname=template1", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	t.Cleanup(func() { admin.Exec(context.Background(), `ALTER DATABASE postgres ALLOW_CONNECTIONS true`) })

	tables, queues := tableClients(t, nodes, "outage"), queueClients(t, nodes, "outage")
	if _, err := tables[0].CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := queues[0].Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tables[0].AddEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"n","N":0}`), nil); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var o outcomes
	var incOK, incLost atomic.Int64 // acknowledged increments; 503s on the update itself
	var unavailable atomic.Int64
	successes := make([]atomic.Int64, len(nodes))
	var mu sync.Mutex
	acked := map[string]bool{}  // queue messages acknowledged
	batches := map[int]string{} // batch → "ok" or "503"
	var wg sync.WaitGroup
	worker := func(f func(w int)) {
		for w := range 2 * len(nodes) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					f(w)
				}
			}()
		}
	}
	// The counter: read, then update with If-Match.
	worker(func(w int) {
		c := tables[w%len(nodes)]
		got, err := c.GetEntity(ctx, "c", "n", nil)
		if st := o.add(err); err != nil {
			if st == http.StatusServiceUnavailable {
				unavailable.Add(1)
			}
			return
		}
		var e struct{ N int }
		if err := json.Unmarshal(got.Value, &e); err != nil {
			t.Error(err)
			return
		}
		_, err = c.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"c","RowKey":"n","N":%d}`, e.N+1)),
			&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
		switch o.add(err, http.StatusPreconditionFailed) {
		case http.StatusOK:
			incOK.Add(1)
			successes[w%len(nodes)].Add(1)
		case http.StatusServiceUnavailable:
			incLost.Add(1)
			unavailable.Add(1)
		}
	})
	// Batches of ten entities, each in a partition of its own.
	var nextBatch atomic.Int64
	worker(func(w int) {
		b := int(nextBatch.Add(1))
		acts := make([]aztables.TransactionAction, 10)
		for i := range acts {
			acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: []byte(fmt.Sprintf(`{"PartitionKey":"b%06d","RowKey":"%02d"}`, b, i))}
		}
		_, err := tables[w%len(nodes)].SubmitTransaction(ctx, acts, nil)
		st := o.add(err)
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StatusOK:
			batches[b] = "ok"
		case http.StatusServiceUnavailable:
			batches[b] = "503"
			unavailable.Add(1)
		}
	})
	// Queue messages.
	var nextMsg atomic.Int64
	worker(func(w int) {
		text := fmt.Sprint("m", nextMsg.Add(1))
		_, err := queues[w%len(nodes)].EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
		if st := o.add(err); st == http.StatusOK {
			mu.Lock()
			acked[text] = true
			mu.Unlock()
		} else if st == http.StatusServiceUnavailable {
			unavailable.Add(1)
		}
	})

	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("%s: not within %v (answers so far %v)", what, d, o.byStatus)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("20 increments before the outage", 30*time.Second, func() bool { return incOK.Load() >= 20 })

	// The outage: no new connections, every connection of the nodes cut.
	if _, err := admin.Exec(ctx, `ALTER DATABASE postgres ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'blobshare-node'`); err != nil {
		t.Fatal(err)
	}
	outageStart := time.Now()
	waitFor("requests answered 503 during the outage", 20*time.Second, func() bool { return unavailable.Load() >= 10 })
	time.Sleep(time.Until(outageStart.Add(time.Second))) // at least a second without the database
	before := make([]int64, len(nodes))
	for i := range nodes {
		before[i] = successes[i].Load()
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE postgres ALLOW_CONNECTIONS true`); err != nil {
		t.Fatal(err)
	}
	waitFor("every node serving again", 30*time.Second, func() bool {
		for i := range nodes {
			if successes[i].Load() <= before[i] {
				return false
			}
		}
		return true
	})
	close(stop)
	wg.Wait()

	for i, err := range o.unexpected {
		if i == 5 {
			t.Errorf("… and %d more unexpected answers", len(o.unexpected)-5)
			break
		}
		t.Errorf("unexpected answer: %v", err)
	}
	if len(o.unexpected) > 0 {
		for i, n := range nodes {
			logged := 0
			for line := range strings.Lines(n.Stderr.String()) {
				if strings.Contains(line, "request failed") && !strings.Contains(line, "database unavailable") && logged < 3 {
					t.Logf("node %d logged: %s", i, strings.TrimSpace(line))
					logged++
				}
			}
		}
	}
	// The counter.
	got, err := tables[1].GetEntity(ctx, "c", "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ N int64 }
	if err := json.Unmarshal(got.Value, &e); err != nil {
		t.Fatal(err)
	}
	if e.N < incOK.Load() || e.N > incOK.Load()+incLost.Load() {
		t.Errorf("counter %d after %d acknowledged increments and %d answered 503", e.N, incOK.Load(), incLost.Load())
	}
	// The batches: whole or absent, acknowledged ones whole.
	for b, outcome := range batches {
		n := batchEntities(t, tables[0], b)
		if n != 0 && n != 10 || outcome == "ok" && n != 10 {
			t.Errorf("batch %d (%s) has %d of its 10 entities", b, outcome, n)
		}
	}
	// The messages: every acknowledged one is there.
	seen := map[string]bool{}
	for {
		r, err := queues[0].DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(3600))})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			break
		}
		for _, m := range r.Messages {
			seen[*m.MessageText] = true
		}
	}
	lost := 0
	for text := range acked {
		if !seen[text] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged messages lost", lost, len(acked))
	}
	t.Logf("answers %v; %d increments acknowledged (%d lost to 503), %d batches, %d messages acknowledged",
		o.byStatus, incOK.Load(), incLost.Load(), len(batches), len(acked))
}

// TestNodeKilled: a node is SIGKILLed while clients on both nodes submit
// batches and If-Match increments: every batch either node acknowledged
// is whole, no batch is half there, the counter holds every acknowledged
// increment, and the surviving node serves on.
func TestNodeKilled(t *testing.T) {
	nodes := startNodes(t, 2, "")
	ctx := context.Background()
	tables := tableClients(t, nodes, "killed")
	if _, err := tables[0].CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tables[0].AddEntity(ctx, []byte(`{"PartitionKey":"c","RowKey":"n","N":0}`), nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	batches := map[int]bool{} // batch → acknowledged
	var incOK, nextBatch atomic.Int64
	var survivorOK atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := w % len(nodes)
			c := tables[node]
			for {
				select {
				case <-stop:
					return
				default:
				}
				if w%2 == 0 {
					b := int(nextBatch.Add(1))
					acts := make([]aztables.TransactionAction, 20)
					for i := range acts {
						acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
							Entity: []byte(fmt.Sprintf(`{"PartitionKey":"b%06d","RowKey":"%02d"}`, b, i))}
					}
					_, err := c.SubmitTransaction(ctx, acts, nil)
					mu.Lock()
					batches[b] = err == nil
					mu.Unlock()
					if err == nil && node == 1 {
						survivorOK.Add(1)
					}
					continue
				}
				got, err := c.GetEntity(ctx, "c", "n", nil)
				if err != nil {
					continue // the killed node's clients see refused connections
				}
				var e struct{ N int }
				if json.Unmarshal(got.Value, &e) != nil {
					continue
				}
				_, err = c.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"c","RowKey":"n","N":%d}`, e.N+1)),
					&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
				if err == nil {
					incOK.Add(1)
					if node == 1 {
						survivorOK.Add(1)
					}
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for nextBatch.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := nodes[0].Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-nodes[0].Done
	after := survivorOK.Load()
	for survivorOK.Load() < after+20 && time.Now().Before(deadline.Add(30*time.Second)) {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if survivorOK.Load() < after+20 {
		t.Fatalf("the surviving node answered %d requests after the kill, want 20", survivorOK.Load()-after)
	}
	whole, absent := 0, 0
	for b, ok := range batches {
		n := batchEntities(t, tables[1], b)
		switch {
		case n == 20:
			whole++
		case n == 0 && !ok:
			absent++
		default:
			t.Errorf("batch %d (acknowledged: %v) has %d of its 20 entities", b, ok, n)
		}
	}
	got, err := tables[1].GetEntity(ctx, "c", "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ N int64 }
	if err := json.Unmarshal(got.Value, &e); err != nil {
		t.Fatal(err)
	}
	if e.N < incOK.Load() {
		t.Errorf("counter %d after %d acknowledged increments", e.N, incOK.Load())
	}
	t.Logf("%d batches whole, %d absent (unacknowledged); counter %d after %d acknowledged increments", whole, absent, e.N, incOK.Load())
}

// batchEntities is how many entities batch b's partition holds.
func batchEntities(t *testing.T, c *aztables.Client, b int) int {
	t.Helper()
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr(fmt.Sprintf("PartitionKey eq 'b%06d'", b))})
	n := 0
	for pager.More() {
		p, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Entities)
	}
	return n
}
