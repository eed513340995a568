package multinode

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// benchClients is how many clients run at once, whatever the node count:
// the same offered load on 1, 2 and 3 nodes.
const benchClients = 8

// scaling keeps each benchmark's ops/s per node count, to log the ratio
// to one node.
var scaling = struct {
	sync.Mutex
	opsPerSec map[string]map[int]float64
}{opsPerSec: map[string]map[int]float64{}}

// benchNodes runs op b.N times from benchClients goroutines on 1, 2 and 3
// nodes on one PostgreSQL schema; the requests alternate between the
// nodes (request i goes to node i mod n, as a round-robin load balancer
// sends them). It reports ops/s and, at 2 and 3 nodes, the ratio to one
// node. setup prepares the nodes' shared schema through node 0.
func benchNodes(b *testing.B, name string, setup func(b *testing.B, nodes int) func(ctx context.Context, node, i int) error) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			op := setup(b, n)
			var next atomic.Int64
			var wg sync.WaitGroup
			ctx := context.Background()
			b.ResetTimer()
			began := time.Now()
			for range benchClients {
				wg.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						if err := op(ctx, i%n, i); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			perSec := float64(b.N) / time.Since(began).Seconds()
			b.ReportMetric(perSec, "ops/s")
			scaling.Lock()
			defer scaling.Unlock()
			if scaling.opsPerSec[name] == nil {
				scaling.opsPerSec[name] = map[int]float64{}
			}
			scaling.opsPerSec[name][n] = perSec
			if one := scaling.opsPerSec[name][1]; n > 1 && one > 0 {
				b.ReportMetric(perSec/one, "x1node")
			}
		})
	}
}

// BenchmarkQueueNodes: one op is a message's whole life — Put Message,
// Get Messages (one message, visibility 30 s), Delete Message — its three
// requests going to the next nodes in turn.
func BenchmarkQueueNodes(b *testing.B) {
	benchNodes(b, "queue", func(b *testing.B, n int) func(ctx context.Context, node, i int) error {
		nodes, _ := startNodes(b, pg, n, "")
		qs := queueClients(b, nodes, "bench")
		if _, err := qs[0].Create(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context, node, i int) error {
			if _, err := qs[node].EnqueueMessage(ctx, fmt.Sprint("m", i), nil); err != nil {
				return fmt.Errorf("put: %w", err)
			}
			r, err := qs[(node+1)%n].DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(1)), VisibilityTimeout: to.Ptr(int32(30))})
			if err != nil {
				return fmt.Errorf("get: %w", err)
			}
			for _, m := range r.Messages { // none when the other clients took every visible one
				if _, err := qs[(node+2)%n].DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
					return fmt.Errorf("delete: %w", err)
				}
			}
			return nil
		}
	})
}

// BenchmarkTableNodes: one op is an Insert Or Replace Entity (a partition
// per client, a new row each time) then a Get Entity of it through the
// next node.
func BenchmarkTableNodes(b *testing.B) {
	benchNodes(b, "table", func(b *testing.B, n int) func(ctx context.Context, node, i int) error {
		nodes, _ := startNodes(b, pg, n, "")
		cs := tableClients(b, nodes, "bench")
		if _, err := cs[0].CreateTable(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context, node, i int) error {
			pk, rk := fmt.Sprint("p", i%benchClients), fmt.Sprintf("r%08d", i)
			_, err := cs[node].UpsertEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"%s","RowKey":"%s","N":%d}`, pk, rk, i)),
				&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			if err != nil {
				return fmt.Errorf("upsert: %w", err)
			}
			if _, err := cs[(node+1)%n].GetEntity(ctx, pk, rk, nil); err != nil {
				return fmt.Errorf("get: %w", err)
			}
			return nil
		}
	})
}
