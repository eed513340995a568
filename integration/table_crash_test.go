package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/blobshare/blobshare/integration/servetest"
)

// tableClient is an aztables client for serve's Table endpoint, without
// retries (a request the kill cut off must fail, not be resent).
func tableClient(t *testing.T, tableURL, name string) *aztables.Client {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+devKey+";TableEndpoint="+tableURL+";",
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc.NewClient(name)
}

// TestTableBatchesSurviveSIGKILL: serve is killed with SIGKILL while 6
// workers submit change sets of 20 inserts, each into a partition of its
// own. After a restart on the same --data every partition holds all 20
// entities or none (a batch is wholly applied or wholly absent), and
// every change set answered 202 is there.
func TestTableBatchesSurviveSIGKILL(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, first) })
	c := tableClient(t, first.TableURL, "crash")
	if _, err := c.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const workers, size, killAfter = 6, 20, 150
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	killNow := make(chan struct{})
	var once sync.Once
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				pk := fmt.Sprintf("w%d-%05d", w, i)
				acts := make([]aztables.TransactionAction, size)
				for j := range acts {
					acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
						Entity: []byte(fmt.Sprintf(`{"PartitionKey":"%s","RowKey":"%03d","Payload":"%0200d"}`, pk, j, j))}
				}
				if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
					return // the kill
				}
				mu.Lock()
				acked[pk] = true
				if len(acked) == killAfter {
					once.Do(func() { close(killNow) })
				}
				mu.Unlock()
			}
		}()
	}
	allGone := make(chan struct{})
	go func() { wg.Wait(); close(allGone) }()
	select {
	case <-killNow:
	case <-allGone:
		first.Kill()
		t.Fatalf("every worker failed before %d batches were acknowledged:\n%s", killAfter, first.Stderr)
	}
	if _, err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	second, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, second) })
	counts := map[string]int{}
	pager := tableClient(t, second.TableURL, "crash").NewListEntitiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range p.Entities {
			var e struct{ PartitionKey string }
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			counts[e.PartitionKey]++
		}
	}
	for pk, n := range counts {
		if n != size {
			t.Errorf("partition %s holds %d of its batch's %d entities after the kill", pk, n, size)
		}
	}
	for pk := range acked {
		if counts[pk] != size {
			t.Errorf("batch %s was answered 202 before the kill but holds %d entities after the restart", pk, counts[pk])
		}
	}
	t.Logf("%d batches acknowledged before the kill, %d present after the restart", len(acked), len(counts))
	if len(counts) < len(acked) || len(counts) > len(acked)+workers {
		t.Errorf("%d batches present, %d acknowledged: at most one unanswered batch per worker may be present", len(counts), len(acked))
	}
}
