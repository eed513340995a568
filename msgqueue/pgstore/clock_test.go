package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
)

const qn = "jobs"

// gateways opens n stores on one fresh schema on the database's clock,
// each with a Service whose own clock is skewed by skews[i], and creates
// qn.
func gateways(t *testing.T, skews ...time.Duration) ([]*Store, []*msgqueue.Service) {
	t.Helper()
	conn := pg.Schema(t)
	var stores []*Store
	var svcs []*msgqueue.Service
	for _, skew := range skews {
		s, err := Open(context.Background(), conn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
		svcs = append(svcs, msgqueue.New(s, func() time.Time { return time.Now().Add(skew) }))
	}
	if _, err := svcs[0].CreateQueue(context.Background(), qn, nil); err != nil {
		t.Fatal(err)
	}
	return stores, svcs
}

// dbNow is the database's clock.
func dbNow(t *testing.T, s *Store) time.Time {
	t.Helper()
	var now time.Time
	if err := s.pool.QueryRow(context.Background(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// TestDatabaseClockAcrossSkewedGateways: two gateways whose clocks are an
// hour ahead and an hour behind agree on visibility, because every
// decision reads the database's clock: a message put on the fast one is
// visible at once on the slow one; hidden by a get on the slow one it is
// hidden on the fast one; an update to visibility 0 shows it everywhere; a
// put hidden for an hour on the slow one is hidden on the fast one; and
// the stored times start at the database's now.
func TestDatabaseClockAcrossSkewedGateways(t *testing.T) {
	ctx := context.Background()
	stores, svc := gateways(t, time.Hour, -time.Hour)
	fast, slow := svc[0], svc[1]
	before := dbNow(t, stores[0])
	m, err := fast.Put(ctx, qn, "from the fast gateway", msgqueue.PutOptions{TTL: time.Minute, TTLSet: true})
	if err != nil {
		t.Fatal(err)
	}
	after := dbNow(t, stores[0])
	var ins, exp, vis int64
	if err := stores[0].pool.QueryRow(ctx, `SELECT inserted, expires, next_visible FROM mq_messages WHERE id = $1`, m.ID).Scan(&ins, &exp, &vis); err != nil {
		t.Fatal(err)
	}
	if ins < before.UnixMilli() || ins > after.UnixMilli() || exp-ins != time.Minute.Milliseconds() || vis != ins {
		t.Fatalf("stored inserted %d expires %d next visible %d; database clock was %d…%d, TTL 60000 ms",
			ins, exp, vis, before.UnixMilli(), after.UnixMilli())
	}
	if p, err := slow.Peek(ctx, qn, 32); err != nil || len(p) != 1 {
		t.Fatalf("slow gateway peeks %d messages, %v; want the one put on the fast gateway", len(p), err)
	}
	g, err := slow.Get(ctx, qn, 1, 30*time.Second)
	if err != nil || len(g) != 1 {
		t.Fatalf("slow gateway's get: %+v, %v", g, err)
	}
	if p, err := fast.Peek(ctx, qn, 32); err != nil || len(p) != 0 {
		t.Fatalf("fast gateway peeks %+v, %v while the message is hidden for 30 s", p, err)
	}
	if got, err := fast.Get(ctx, qn, 32, time.Second); err != nil || len(got) != 0 {
		t.Fatalf("fast gateway gets %+v, %v while the message is hidden", got, err)
	}
	if _, err := fast.Update(ctx, qn, m.ID, g[0].PopReceipt, 0, nil); err != nil {
		t.Fatalf("update to visibility 0 on the fast gateway: %v", err)
	}
	if p, err := slow.Peek(ctx, qn, 32); err != nil || len(p) != 1 {
		t.Fatalf("slow gateway peeks %d, %v after the update to visibility 0", len(p), err)
	}
	if _, err := slow.Put(ctx, qn, "hidden an hour", msgqueue.PutOptions{VisibilityTimeout: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if p, err := fast.Peek(ctx, qn, 32); err != nil || len(p) != 1 || p[0].ID != m.ID {
		t.Fatalf("fast gateway peeks %+v, %v; the slow gateway's message is hidden for an hour", p, err)
	}
	if q, err := fast.Queue(ctx, qn); err != nil || q.ApproximateMessages != 2 {
		t.Fatalf("count %+v, %v; want 2", q, err)
	}
	if d := stores[1].Now().Sub(dbNow(t, stores[1])); d < -time.Second || d > time.Second {
		t.Fatalf("Store.Now is %v off the database's clock", d)
	}
}

// racing runs before at the start of each Claim.
type racing struct {
	*Store
	before func()
}

func (r *racing) Claim(ctx context.Context, queue string, now func() time.Time, n int, vis time.Duration, prefix string) ([]msgqueue.Message, error) {
	if r.before != nil {
		r.before()
	}
	return r.Store.Claim(ctx, queue, now, n, vis, prefix)
}

// TestGetSeesPutFromAnotherGateway: a get on one gateway that reached the
// database after a put committed on another — whose clock is an hour
// ahead — takes that message: the put's times and the get's now are both
// the database's.
func TestGetSeesPutFromAnotherGateway(t *testing.T) {
	ctx := context.Background()
	stores, svc := gateways(t, -time.Hour, time.Hour)
	r := &racing{Store: stores[0]}
	getter := msgqueue.New(r, func() time.Time { return time.Now().Add(-time.Hour) })
	var put msgqueue.Message
	r.before = func() {
		r.before = nil
		var err error
		if put, err = svc[1].Put(ctx, qn, "committed meanwhile", msgqueue.PutOptions{}); err != nil {
			t.Error(err)
		}
	}
	got, err := getter.Get(ctx, qn, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != put.ID {
		t.Fatalf("get answered %+v; the message put on the other gateway was there", got)
	}
}

// TestClaimsAcrossGateways: six workers on three gateways get and delete
// 300 messages: every message is got exactly once (FOR UPDATE SKIP
// LOCKED), every delete with its receipt succeeds, and the queue ends
// empty.
func TestClaimsAcrossGateways(t *testing.T) {
	ctx := context.Background()
	_, svc := gateways(t, 0, 3*time.Second, -3*time.Second)
	const total = 300
	for i := range total {
		if _, err := svc[i%3].Put(ctx, qn, fmt.Sprint(i), msgqueue.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for w := range 6 {
		wg.Go(func() {
			s := svc[w%3]
			for {
				ms, err := s.Get(ctx, qn, 8, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				if len(ms) == 0 {
					return
				}
				for _, m := range ms {
					mu.Lock()
					seen[m.Text]++
					mu.Unlock()
					if err := s.Delete(ctx, qn, m.ID, m.PopReceipt); err != nil {
						errs <- fmt.Errorf("delete %s with its receipt: %w", m.Text, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != total {
		t.Fatalf("%d distinct messages got, want %d", len(seen), total)
	}
	for text, n := range seen {
		if n != 1 {
			t.Fatalf("message %s got %d times", text, n)
		}
	}
	if q, err := svc[0].Queue(ctx, qn); err != nil || q.ApproximateMessages != 0 {
		t.Fatalf("queue after all deletes: %+v, %v", q, err)
	}
}

// TestReceiptRacesAcrossGateways: eight updaters on two gateways race
// with one pop receipt: exactly one wins and its receipt is the
// message's; then eight deleters race with that receipt: exactly one
// deletes.
func TestReceiptRacesAcrossGateways(t *testing.T) {
	ctx := context.Background()
	_, svc := gateways(t, 0, 0)
	if _, err := svc[0].Put(ctx, qn, "contended", msgqueue.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	g, err := svc[0].Get(ctx, qn, 1, time.Minute)
	if err != nil || len(g) != 1 {
		t.Fatalf("get: %+v, %v", g, err)
	}
	race := func(op func(s *msgqueue.Service) error) (wins int64) {
		var won atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				err := op(svc[i%2])
				switch {
				case err == nil:
					won.Add(1)
				case !errors.Is(err, msgqueue.ErrMessageNotFound):
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		return won.Load()
	}
	var winner atomic.Pointer[msgqueue.Message]
	if n := race(func(s *msgqueue.Service) error {
		u, err := s.Update(ctx, qn, g[0].ID, g[0].PopReceipt, time.Minute, nil)
		if err == nil {
			winner.Store(&u)
		}
		return err
	}); n != 1 {
		t.Fatalf("%d updates won with one receipt, want 1", n)
	}
	if n := race(func(s *msgqueue.Service) error {
		return s.Delete(ctx, qn, g[0].ID, winner.Load().PopReceipt)
	}); n != 1 {
		t.Fatalf("%d deletes won with one receipt, want 1", n)
	}
}

// TestPutsRacingDeleteQueue: puts on one gateway race Delete Queue on
// another; once the delete has returned no message of the queue is left
// (a put either committed before the delete swept the messages or found
// no queue), so the queue created again starts empty.
func TestPutsRacingDeleteQueue(t *testing.T) {
	ctx := context.Background()
	_, svc := gateways(t, 0, 0)
	for round := range 5 {
		if round > 0 {
			if _, err := svc[0].CreateQueue(ctx, qn, nil); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		started := make(chan struct{}, 4)
		for range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					_, err := svc[1].Put(ctx, qn, "x", msgqueue.PutOptions{})
					if i == 0 {
						started <- struct{}{}
					}
					if errors.Is(err, msgqueue.ErrQueueNotFound) {
						return
					}
					if err != nil {
						t.Errorf("put: %v", err)
						return
					}
				}
			})
		}
		for range 4 {
			<-started
		}
		if err := svc[0].DeleteQueue(ctx, qn); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if _, err := svc[0].CreateQueue(ctx, qn, nil); err != nil {
			t.Fatal(err)
		}
		if q, err := svc[0].Queue(ctx, qn); err != nil || q.ApproximateMessages != 0 {
			t.Fatalf("round %d: the queue created again holds %+v, %v", round, q, err)
		}
		if err := svc[0].DeleteQueue(ctx, qn); err != nil {
			t.Fatal(err)
		}
	}
}
