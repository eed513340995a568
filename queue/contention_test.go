package queue_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Contention parameters. Times are on the injected clock: a worker whose
// get answers nothing advances it by clockStep, and so does every
// tickEvery-th get in the run, so invisible messages come back both while
// the queue is busy and when every visible one is taken — messages held
// by slow workers reappear under other workers while they are still
// held.
const (
	contentionWorkers  = 16
	contentionMessages = 2000
	contentionBatch    = 4
	contentionVis      = 3 * time.Second // get visibility timeout
	contentionUpdVis   = 2 * time.Second // update visibility timeout
	clockStep          = time.Second
	tickEvery          = 32
	killedWorkers      = 3 // workers 0…2 die holding a batch
	stallingWorkers    = 4 // workers 3…6 stall past their timeout now and then
)

// receiptInfo is what the ledger knows of one pop receipt.
type receiptInfo struct {
	gen      int64  // dequeue count of the get that began its chain
	consumed string // "update" or "delete" once an operation succeeded with it
	next     string // the receipt an update with this one answered
	text     string // the text that update wrote
}

// msgLedger records, for one message, every receipt any worker was
// issued and every operation that succeeded with one.
type msgLedger struct {
	put      string           // the text put
	gens     map[int64]string // dequeue count → receipt of that get
	gotText  map[int64]string // dequeue count → text that get answered
	receipts map[string]*receiptInfo
	deletes  int
	delGen   int64
}

// ledger is the test's record of the run, shared by the workers.
type ledger struct {
	mu   sync.Mutex
	msgs map[string]*msgLedger
	errs []string
}

func (l *ledger) failf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

// got records a get's answer. A dequeue count seen twice means two
// workers were given the message in the same round: it was visible
// twice. It returns a receipt of an earlier round, if one is known
// (workers record after the service answered, so the ledger's order is
// not the service's: what depends on order is checked after the run).
func (l *ledger) got(m *azqueue.DequeuedMessage) (stale string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ml := l.msgs[*m.MessageID]
	if ml == nil {
		l.errs = append(l.errs, fmt.Sprintf("got unknown message %s", *m.MessageID))
		return ""
	}
	dc := *m.DequeueCount
	if prev, dup := ml.gens[dc]; dup {
		l.errs = append(l.errs, fmt.Sprintf("message %s given twice with dequeue count %d (receipts %s, %s)", *m.MessageID, dc, prev, *m.PopReceipt))
	}
	ml.gens[dc] = *m.PopReceipt
	ml.gotText[dc] = *m.MessageText
	ml.receipts[*m.PopReceipt] = &receiptInfo{gen: dc}
	return ml.gens[dc-1]
}

// succeeded records an operation that the service accepted with receipt;
// the same receipt accepted twice is a stale receipt that worked.
func (l *ledger) succeeded(id, receipt, op, newReceipt, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ml := l.msgs[id]
	ri := ml.receipts[receipt]
	if ri == nil {
		l.errs = append(l.errs, fmt.Sprintf("message %s: %s accepted receipt %s that nobody was issued", id, op, receipt))
		return
	}
	if ri.consumed != "" {
		l.errs = append(l.errs, fmt.Sprintf("message %s: %s accepted receipt %s already used by a successful %s", id, op, receipt, ri.consumed))
	}
	ri.consumed = op
	switch op {
	case "update":
		ml.receipts[newReceipt] = &receiptInfo{gen: ri.gen}
		ri.next, ri.text = newReceipt, text
	case "delete":
		ml.deletes++
		ml.delGen = ri.gen
	}
}

// TestContention: 16 workers on 2,000 messages with a short visibility
// timeout, through the azqueue SDK. Three workers die holding messages,
// four stall past their timeout now and then and come back with their old
// receipts, everyone updates some messages before deleting them and
// probes receipts it knows are stale. At the end every message was
// deleted exactly once, with the receipt of its last get (or an update
// of it); each get handed a message to one worker with the next dequeue
// count; no receipt was accepted twice; every stale probe got 404
// MessageNotFound.
func TestContention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clk := newFakeClock()
	e := newEnv(t, clk.Now)
	svc := e.service(t)
	if _, err := svc.CreateQueue(ctx, "contended", nil); err != nil {
		t.Fatal(err)
	}
	q := svc.NewQueueClient("contended")

	l := &ledger{msgs: make(map[string]*msgLedger, contentionMessages)}
	var putWG sync.WaitGroup
	ids := make(chan [2]string, contentionMessages)
	for w := range contentionWorkers {
		putWG.Add(1)
		go func() {
			defer putWG.Done()
			for i := w; i < contentionMessages; i += contentionWorkers {
				r, err := q.EnqueueMessage(ctx, fmt.Sprintf("m%04d", i), nil)
				if err != nil {
					l.failf("put %d: %v", i, err)
					return
				}
				ids <- [2]string{*r.Messages[0].MessageID, fmt.Sprintf("m%04d", i)}
			}
		}()
	}
	putWG.Wait()
	close(ids)
	for id := range ids {
		l.msgs[id[0]] = &msgLedger{put: id[1], gens: map[int64]string{}, gotText: map[int64]string{}, receipts: map[string]*receiptInfo{}}
	}
	if len(l.errs) > 0 || len(l.msgs) != contentionMessages {
		t.Fatalf("puts: %d acknowledged, errors %v", len(l.msgs), l.errs)
	}

	var deleted, staleProbes, lostRaces, stalls, gets atomic.Int64
	done := make(chan struct{})
	var closeDone sync.Once
	noteDeleted := func() {
		if deleted.Add(1) == contentionMessages {
			closeDone.Do(func() { close(done) })
		}
	}
	// probeStale sends delete and update with a receipt known to be stale;
	// both must be 404 MessageNotFound.
	probeStale := func(id, receipt string) {
		staleProbes.Add(1)
		if _, err := q.DeleteMessage(ctx, id, receipt, nil); code(err) != "MessageNotFound" {
			l.failf("delete %s with stale receipt %s: %v", id, receipt, err)
			if err == nil {
				l.succeeded(id, receipt, "delete", "", "")
				noteDeleted()
			}
		}
		if _, err := q.UpdateMessage(ctx, id, receipt, "stale", &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))}); code(err) != "MessageNotFound" {
			l.failf("update %s with stale receipt %s: %v", id, receipt, err)
		}
	}
	// finish updates (sometimes) and deletes one message; a 404 means the
	// message reappeared and another worker took it.
	finish := func(rng *rand.Rand, id, receipt string) {
		if rng.IntN(4) == 0 {
			text := fmt.Sprintf("updated-%d", rng.Uint32())
			up, err := q.UpdateMessage(ctx, id, receipt, text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(contentionUpdVis / time.Second))})
			switch code(err) {
			case "":
				l.succeeded(id, receipt, "update", *up.PopReceipt, text)
				probeStale(id, receipt) // the receipt the update replaced
				receipt = *up.PopReceipt
			case "MessageNotFound":
				lostRaces.Add(1)
				return
			default:
				l.failf("update %s: %v", id, err)
				return
			}
		}
		_, err := q.DeleteMessage(ctx, id, receipt, nil)
		switch code(err) {
		case "":
			l.succeeded(id, receipt, "delete", "", "")
			noteDeleted()
			if rng.IntN(8) == 0 {
				probeStale(id, receipt) // deleted: nothing is current any more
			}
		case "MessageNotFound":
			lostRaces.Add(1)
		default:
			l.failf("delete %s: %v", id, err)
		}
	}

	var wg sync.WaitGroup
	for w := range contentionWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 18))
			killAfter := -1
			if w < killedWorkers {
				killAfter = 5 + rng.IntN(20)
			}
			stalling := w >= killedWorkers && w < killedWorkers+stallingWorkers
			for batch := 0; ; batch++ {
				select {
				case <-done:
					return
				default:
				}
				if ctx.Err() != nil {
					l.failf("worker %d: %v", w, ctx.Err())
					return
				}
				resp, err := q.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{
					NumberOfMessages:  to.Ptr(int32(1 + rng.IntN(contentionBatch))),
					VisibilityTimeout: to.Ptr(int32(contentionVis / time.Second)),
				})
				if err != nil {
					l.failf("worker %d get: %v", w, err)
					return
				}
				if len(resp.Messages) == 0 || gets.Add(1)%tickEvery == 0 {
					clk.Advance(clockStep)
				}
				if len(resp.Messages) == 0 {
					continue
				}
				for _, m := range resp.Messages {
					if stale := l.got(m); stale != "" {
						probeStale(*m.MessageID, stale)
					}
				}
				if batch == killAfter {
					return // dies holding the batch: it must come back to others
				}
				if stalling && rng.IntN(3) == 0 {
					// Stall until the batch's timeout has passed (the other
					// workers' empty gets move the clock), then carry on
					// with the old receipts: each works only if nobody got
					// the message in between.
					stalls.Add(1)
					last := *resp.Messages[0].TimeNextVisible
					if !clk.waitUntil(ctx, last.Add(clockStep), done) {
						return
					}
				}
				for _, m := range resp.Messages {
					finish(rng, *m.MessageID, *m.PopReceipt)
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range l.errs {
		t.Error(e)
	}

	if t.Failed() {
		t.FailNow()
	}

	// Every message deleted exactly once, by the holder of its latest
	// round's receipt; dequeue counts 1…n without gaps.
	for id, ml := range l.msgs {
		if ml.deletes != 1 {
			t.Errorf("message %s deleted %d times", id, ml.deletes)
			continue
		}
		n := int64(len(ml.gens))
		for dc := int64(1); dc <= n; dc++ {
			if _, ok := ml.gens[dc]; !ok {
				t.Errorf("message %s: dequeue counts seen %v, a gap at %d", id, keys(ml.gens), dc)
				break
			}
		}
		if ml.delGen != n {
			t.Errorf("message %s deleted with a receipt of round %d after round %d had begun", id, ml.delGen, n)
		}
		// Each get answers the text of the last update before it: the
		// end of the update chain of the latest earlier round that had
		// one (an update with round k's receipt precedes get k+1, which
		// kills that receipt).
		want := ml.put
		for dc := int64(1); dc <= n; dc++ {
			if got := ml.gotText[dc]; got != want {
				t.Errorf("message %s: get %d answered %q, want %q", id, dc, got, want)
				break
			}
			for r := ml.receipts[ml.gens[dc]]; r != nil && r.next != ""; r = ml.receipts[r.next] {
				want = r.text
			}
		}
	}
	props, err := q.GetProperties(ctx, nil)
	if err != nil || *props.ApproximateMessagesCount != 0 {
		t.Fatalf("approximate count after the run: %v %v", err, props.ApproximateMessagesCount)
	}
	clk.Advance(8 * 24 * time.Hour)
	if p, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))}); err != nil || len(p.Messages) != 0 {
		t.Fatalf("peek after the run: %v %d messages", err, len(p.Messages))
	}
	redelivered := 0
	for _, ml := range l.msgs {
		if len(ml.gens) > 1 {
			redelivered++
		}
	}
	t.Logf("%d messages, %d redelivered; %d stalls, %d operations lost to a newer receipt, %d stale probes refused, clock moved %v",
		contentionMessages, redelivered, stalls.Load(), lostRaces.Load(), staleProbes.Load(), clk.Now().Sub(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	if redelivered == 0 || lostRaces.Load() == 0 || stalls.Load() == 0 {
		t.Fatalf("the run did not contend (redelivered %d, lost races %d, stalls %d): the test shows nothing", redelivered, lostRaces.Load(), stalls.Load())
	}
}

func keys(m map[int64]string) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
