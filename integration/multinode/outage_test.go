package multinode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/jackc/pgx/v5"
)

// TestDatabaseOutage: two nodes serve Table and Queue clients (load) while
// the database drops every connection of theirs and refuses new ones for
// a while (as a failover looks to them), then comes back. While it is
// away requests answer 503 ServerBusy — never another 5xx, never a 4xx
// that blames the request — and do not hang; afterwards each node serves
// again by itself. Nothing is half applied and nothing acknowledged is
// lost (load.check).
func TestDatabaseOutage(t *testing.T) {
	nodes, conn := startNodes(t, pg, 2, "&application_name=blobshare-node")
	ctx := context.Background()
	// The admin connection is to another database: a database cannot
	// refuse connections while the session changing that is in it.
	admin, err := pgx.Connect(ctx, strings.Replace(pg.ConnString(), "dbname=postgres", "dbname=template1", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	t.Cleanup(func() { admin.Exec(context.Background(), `ALTER DATABASE postgres ALLOW_CONNECTIONS true`) })

	l := startLoad(t, nodes, "outage")
	l.waitFor("20 increments before the outage", 30*time.Second, func() bool { return l.incOK.Load() >= 20 })

	// The outage: no new connections, every connection of the nodes cut.
	if _, err := admin.Exec(ctx, `ALTER DATABASE postgres ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'blobshare-node'`); err != nil {
		t.Fatal(err)
	}
	outageStart := time.Now()
	l.waitFor("requests answered 503 during the outage", 20*time.Second, func() bool { return l.unavailable.Load() >= 10 })
	time.Sleep(time.Until(outageStart.Add(time.Second))) // at least a second without the database
	before := l.served()
	if _, err := admin.Exec(ctx, `ALTER DATABASE postgres ALLOW_CONNECTIONS true`); err != nil {
		t.Fatal(err)
	}
	l.servedSince("every node serving again", before)
	l.finish()
	l.check(conn)
}

// TestNodeKilled: a node is SIGKILLed while clients on both nodes submit
// batches and If-Match increments: every batch either node acknowledged
// is whole, no batch is half there, the counter holds every acknowledged
// increment, and the surviving node serves on.
func TestNodeKilled(t *testing.T) {
	nodes, _ := startNodes(t, pg, 2, "")
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
