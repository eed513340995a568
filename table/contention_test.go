package table_test

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

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// readCounter reads the counter entity's N and ETag.
func readCounter(ctx context.Context, c *aztables.Client) (int64, azcore.ETag, error) {
	r, err := c.GetEntity(ctx, "p", "counter", nil)
	if err != nil {
		return 0, "", err
	}
	var e struct{ N int64 }
	if err := json.Unmarshal(r.Value, &e); err != nil {
		return 0, "", err
	}
	return e.N, r.ETag, nil
}

func is412(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed
}

// TestContentionCounter: 16 workers read-modify-write one counter with
// If-Match, retrying on 412: the final count equals the number of
// successful updates (no lost update).
func TestContentionCounter(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "counter", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("counter")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"counter","N":0}`), nil); err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 8
	var ok, conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				n, etag, err := readCounter(ctx, c)
				if err != nil {
					errs <- err
					return
				}
				_, err = c.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"counter","N":%d}`, n+1)),
					&aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
				switch {
				case err == nil:
					ok.Add(1)
					done++
				case is412(err):
					conflicts.Add(1)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, _, err := readCounter(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if n != ok.Load() || n != workers*each {
		t.Fatalf("counter %d after %d successful updates (%d × %d wanted), %d conflicts", n, ok.Load(), workers, each, conflicts.Load())
	}
	t.Logf("%d updates, %d answered 412 and were retried", n, conflicts.Load())
}

// TestContentionBatches: batches (insert a marker + update the counter
// with If-Match) race single If-Match updates of the same counter on one
// partition. A batch is all or nothing: the markers equal the successful
// batches, and the counter equals successful batches plus successful
// single updates.
func TestContentionBatches(t *testing.T) {
	ctx := context.Background()
	svc := newEnv(t, nil).service(t)
	if _, err := svc.CreateTable(ctx, "racing", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("racing")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"counter","N":0}`), nil); err != nil {
		t.Fatal(err)
	}
	const batchers, singles, each = 8, 8, 5
	var batchOK, singleOK, failedBatches atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, batchers+singles)
	for w := range batchers + singles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt, done := 0, 0; done < each; attempt++ {
				n, etag, err := readCounter(ctx, c)
				if err != nil {
					errs <- err
					return
				}
				next := []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"counter","N":%d}`, n+1))
				if w >= batchers {
					_, err = c.UpdateEntity(ctx, next, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
					switch {
					case err == nil:
						singleOK.Add(1)
						done++
					case !is412(err):
						errs <- err
						return
					}
					continue
				}
				marker := []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":"marker-%d-%d"}`, w, attempt))
				_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
					{ActionType: aztables.TransactionTypeAdd, Entity: marker},
					{ActionType: aztables.TransactionTypeUpdateReplace, Entity: next, IfMatch: &etag},
				}, nil)
				var re *azcore.ResponseError
				switch {
				case err == nil:
					batchOK.Add(1)
					done++
				case errors.As(err, &re) && re.StatusCode == http.StatusAccepted:
					// The change set failed: it must be the 412 of op 1.
					body := readAll(t, re.RawResponse)
					if !strings.Contains(body, "412 Precondition Failed") || !strings.Contains(body, `"value":"1:`) {
						errs <- fmt.Errorf("a failed batch answered:\n%s", body)
						return
					}
					failedBatches.Add(1)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	markers := 0
	for pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey ge 'marker-' and RowKey lt 'marker.'")}); pager.More(); {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		markers += len(p.Entities)
	}
	n, _, err := readCounter(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if int64(markers) != batchOK.Load() || n != batchOK.Load()+singleOK.Load() || n != (batchers+singles)*each {
		t.Fatalf("markers %d, successful batches %d (%d failed), counter %d, successful single updates %d",
			markers, batchOK.Load(), failedBatches.Load(), n, singleOK.Load())
	}
	t.Logf("%d batches applied, %d failed whole; %d single updates", batchOK.Load(), failedBatches.Load(), singleOK.Load())
}
