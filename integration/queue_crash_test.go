package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/blobshare/blobshare/integration/servetest"
)

// queueClient is an azqueue client for serve's Queue endpoint, without
// retries (a request the kill cut off must fail, not be resent to the
// next server).
func queueClient(t *testing.T, queueURL, name string) *azqueue.QueueClient {
	t.Helper()
	svc, err := azqueue.NewServiceClientFromConnectionString(
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+devKey+";QueueEndpoint="+queueURL+";",
		&azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc.NewQueueClient(name)
}

// TestQueueSurvivesSIGKILL: serve is killed with SIGKILL while 8 workers
// put messages and 4 take them (hidden for an hour). After a restart on
// the same --data:
//   - every put that was answered 201 is there: visible, or taken before
//     the kill (its receipt still deletes it), or — at most one per taker
//     whose get the kill cut off — hidden by that get, which the queue's
//     approximate count shows;
//   - no message taken before the kill is delivered again (it is still
//     within its visibility timeout);
//   - nothing appears that nobody put.
func TestQueueSurvivesSIGKILL(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := servetest.Start(blobshareBin, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, first) })
	q := queueClient(t, first.QueueURL, "crashq")
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}

	const putters, takers, killAfter = 8, 4, 400
	var mu sync.Mutex
	acked := map[string]string{}         // id → text of every put answered 201
	sent := map[string]bool{}            // text of every put sent
	taken := map[string]string{}         // id → receipt of every get answered before the kill
	takenUntil := map[string]time.Time{} // id → its next-visible time
	inflightGets := 0                    // gets that got no answer
	var wg, putWG sync.WaitGroup
	killNow := make(chan struct{})
	var once sync.Once
	for p := range putters {
		wg.Add(1)
		putWG.Add(1)
		go func() {
			defer wg.Done()
			defer putWG.Done()
			for i := 0; ; i++ {
				text := fmt.Sprintf("p%d-%d", p, i)
				mu.Lock()
				sent[text] = true
				mu.Unlock()
				r, err := q.EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: to.Ptr(int32(-1))})
				if err != nil {
					return // the kill
				}
				mu.Lock()
				acked[*r.Messages[0].MessageID] = text
				if len(acked) == killAfter {
					once.Do(func() { close(killNow) })
				}
				mu.Unlock()
			}
		}()
	}
	for range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(1)), VisibilityTimeout: to.Ptr(int32(3600))})
				mu.Lock()
				if err != nil {
					inflightGets++
					mu.Unlock()
					return
				}
				for _, m := range r.Messages {
					taken[*m.MessageID] = *m.PopReceipt
					takenUntil[*m.MessageID] = *m.TimeNextVisible
				}
				mu.Unlock()
			}
		}()
	}
	puttersGone := make(chan struct{})
	go func() { putWG.Wait(); close(puttersGone) }()
	select {
	case <-killNow:
	case <-puttersGone:
		first.Kill()
		wg.Wait()
		t.Fatalf("every putter failed before %d puts were acknowledged:\n%s", killAfter, first.Stderr)
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
	q = queueClient(t, second.QueueURL, "crashq")

	// Drain what is visible now.
	visible := map[string]string{}
	for {
		r, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(3600))})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			break
		}
		for _, m := range r.Messages {
			id := *m.MessageID
			if until, ok := takenUntil[id]; ok {
				t.Errorf("message %s delivered after the restart while invisible until %v", id, until)
			}
			if !sent[*m.MessageText] {
				t.Errorf("message %s has text %q that nobody put", id, *m.MessageText)
			}
			visible[id] = *m.MessageText
		}
	}
	// Every message taken before the kill is still there, still with the
	// receipt its taker holds.
	for id, receipt := range taken {
		if _, err := q.DeleteMessage(ctx, id, receipt, nil); err != nil {
			t.Errorf("message %s taken before the kill: delete with its receipt after the restart: %v", id, err)
		}
	}
	props, err := q.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hiddenByCutGets := *props.ApproximateMessagesCount - int32(len(visible))
	var missing []string
	for id, text := range acked {
		if _, ok := visible[id]; ok {
			continue
		}
		if _, ok := taken[id]; ok {
			continue
		}
		missing = append(missing, id+" "+text)
	}
	t.Logf("%d puts acknowledged (%d sent), %d taken before the kill, %d visible after the restart, %d hidden by %d gets the kill cut off",
		len(acked), len(sent), len(taken), len(visible), hiddenByCutGets, inflightGets)
	if len(acked) < killAfter || len(taken) == 0 {
		t.Fatalf("the load did not run: %d acknowledged puts, %d takes", len(acked), len(taken))
	}
	if hiddenByCutGets < 0 || int(hiddenByCutGets) > inflightGets {
		t.Errorf("%d messages neither visible nor taken after the restart; at most %d gets were cut off", hiddenByCutGets, inflightGets)
	}
	if len(missing) > int(hiddenByCutGets) {
		t.Errorf("%d acknowledged puts missing after the restart, more than the %d messages hidden by cut-off gets: %v",
			len(missing), hiddenByCutGets, missing)
	}
}
