package msgqueue_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/msgqueue/sqlstore"
)

// clock is the injected clock: time moves only when a test advances it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// qn is the queue every test of this file uses.
const qn = "jobs"

// newService is a Service over SQLite in a temp dir with clock c and one
// queue, qn.
func newService(t testing.TB, c *clock) *msgqueue.Service {
	t.Helper()
	store, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := msgqueue.New(store, c.Now)
	if _, err := svc.CreateQueue(context.Background(), qn, nil); err != nil {
		t.Fatal(err)
	}
	return svc
}

func put(t *testing.T, svc *msgqueue.Service, text string, o msgqueue.PutOptions) msgqueue.Message {
	t.Helper()
	m, err := svc.Put(context.Background(), qn, text, o)
	if err != nil {
		t.Fatalf("put %q: %v", text, err)
	}
	return m
}

func get(t *testing.T, svc *msgqueue.Service, n int, vis time.Duration) []msgqueue.Message {
	t.Helper()
	ms, err := svc.Get(context.Background(), qn, n, vis)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	return ms
}

func peek(t *testing.T, svc *msgqueue.Service, n int) []msgqueue.Message {
	t.Helper()
	ms, err := svc.Peek(context.Background(), qn, n)
	if err != nil {
		t.Fatalf("peek: %v", err)
	}
	return ms
}

func count(t *testing.T, svc *msgqueue.Service) int64 {
	t.Helper()
	q, err := svc.Queue(context.Background(), qn)
	if err != nil {
		t.Fatal(err)
	}
	return q.ApproximateMessages
}

// TestVisibilityTimeoutEdges: a got message is invisible to get and peek
// until exactly its next-visible time, visible from then on, and its
// dequeue count moves on the next get, not when it reappears.
func TestVisibilityTimeoutEdges(t *testing.T) {
	c := newClock()
	svc := newService(t, c)
	t0 := c.Now()
	m := put(t, svc, "a", msgqueue.PutOptions{})
	if !m.NextVisible.Equal(t0) || m.DequeueCount != 0 {
		t.Fatalf("put: next visible %v dequeue count %d", m.NextVisible, m.DequeueCount)
	}
	g := get(t, svc, 1, 10*time.Second)
	if len(g) != 1 || g[0].ID != m.ID || g[0].DequeueCount != 1 || !g[0].NextVisible.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("first get: %+v", g)
	}

	c.Advance(10*time.Second - time.Millisecond)
	if got := get(t, svc, 32, time.Second); len(got) != 0 {
		t.Fatalf("get 1 ms before next-visible: %+v", got)
	}
	if got := peek(t, svc, 32); len(got) != 0 {
		t.Fatalf("peek 1 ms before next-visible: %+v", got)
	}
	if n := count(t, svc); n != 1 {
		t.Fatalf("approximate count while invisible: %d, want 1", n)
	}

	c.Advance(time.Millisecond) // exactly next-visible
	p := peek(t, svc, 32)
	if len(p) != 1 || p[0].DequeueCount != 1 {
		t.Fatalf("peek at next-visible: %+v (dequeue count must still be 1)", p)
	}
	g2 := get(t, svc, 1, 30*time.Second)
	if len(g2) != 1 || g2[0].DequeueCount != 2 || g2[0].PopReceipt == g[0].PopReceipt {
		t.Fatalf("get after reappearing: %+v", g2)
	}
}

// TestPutVisibilityTimeout: a message put with a visibility timeout is
// hidden from get and peek until then.
func TestPutVisibilityTimeout(t *testing.T) {
	c := newClock()
	svc := newService(t, c)
	put(t, svc, "later", msgqueue.PutOptions{VisibilityTimeout: 5 * time.Second})
	c.Advance(5*time.Second - time.Millisecond)
	if len(peek(t, svc, 1)) != 0 || len(get(t, svc, 1, time.Second)) != 0 {
		t.Fatal("message visible before its put visibility timeout")
	}
	c.Advance(time.Millisecond)
	if g := get(t, svc, 1, time.Second); len(g) != 1 || g[0].DequeueCount != 1 {
		t.Fatalf("get at the visibility timeout: %+v", g)
	}
}

// TestTTL: a message vanishes from every operation at its expiry; -1
// never expires (and reports 9999-12-31T23:59:59Z); the documented
// bounds on messagettl and its relation to visibilitytimeout.
func TestTTL(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, c)
	t0 := c.Now()
	short := put(t, svc, "short", msgqueue.PutOptions{TTL: 10 * time.Second, TTLSet: true})
	forever := put(t, svc, "forever", msgqueue.PutOptions{TTL: -time.Second, TTLSet: true})
	def := put(t, svc, "default", msgqueue.PutOptions{})
	if !short.Expires.Equal(t0.Add(10*time.Second)) || !forever.Expires.Equal(msgqueue.NeverExpires) ||
		!def.Expires.Equal(t0.Add(7*24*time.Hour)) {
		t.Fatalf("expiry times: short %v forever %v default %v", short.Expires, forever.Expires, def.Expires)
	}

	c.Advance(10*time.Second - time.Millisecond)
	if n := count(t, svc); n != 3 {
		t.Fatalf("count before expiry: %d", n)
	}
	g := get(t, svc, 1, time.Second) // the oldest: short
	if len(g) != 1 || g[0].ID != short.ID {
		t.Fatalf("get before expiry: %+v", g)
	}

	c.Advance(time.Millisecond) // short expires now, while invisible
	if n := count(t, svc); n != 2 {
		t.Fatalf("count at expiry: %d, want 2", n)
	}
	if err := svc.Delete(ctx, qn, short.ID, g[0].PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("delete of an expired message with its receipt: %v", err)
	}
	if _, err := svc.Update(ctx, qn, short.ID, g[0].PopReceipt, 0, nil); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("update of an expired message with its receipt: %v", err)
	}
	c.Advance(time.Second) // short's invisibility is over too
	for _, m := range peek(t, svc, 32) {
		if m.ID == short.ID {
			t.Fatal("expired message peeked")
		}
	}

	// Ten years on only the -1 message is left.
	c.Advance(10 * 365 * 24 * time.Hour)
	p := peek(t, svc, 32)
	if len(p) != 1 || p[0].ID != forever.ID || count(t, svc) != 1 {
		t.Fatalf("after ten years: %+v count %d", p, count(t, svc))
	}

	for _, tc := range []struct {
		name string
		o    msgqueue.PutOptions
	}{
		{"ttl 0", msgqueue.PutOptions{TTL: 0, TTLSet: true}},
		{"ttl -2", msgqueue.PutOptions{TTL: -2 * time.Second, TTLSet: true}},
		{"visibility = ttl", msgqueue.PutOptions{VisibilityTimeout: 5 * time.Second, TTL: 5 * time.Second, TTLSet: true}},
		{"visibility > ttl", msgqueue.PutOptions{VisibilityTimeout: 6 * time.Second, TTL: 5 * time.Second, TTLSet: true}},
	} {
		var pe *msgqueue.ParamError
		if _, err := svc.Put(ctx, qn, "x", tc.o); !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a ParamError", tc.name, err)
		}
	}
	// visibility < ttl is fine, and so is any visibility with -1.
	put(t, svc, "x", msgqueue.PutOptions{VisibilityTimeout: 4 * time.Second, TTL: 5 * time.Second, TTLSet: true})
	put(t, svc, "x", msgqueue.PutOptions{VisibilityTimeout: 7 * 24 * time.Hour, TTL: -time.Second, TTLSet: true})
}

// TestPopReceiptValidity: which receipts delete and update, and which are
// stale (404 MessageNotFound).
func TestPopReceiptValidity(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, c)

	// The put receipt deletes a message nobody got.
	a := put(t, svc, "a", msgqueue.PutOptions{})
	if err := svc.Delete(ctx, qn, a.ID, a.PopReceipt); err != nil {
		t.Fatalf("delete with the put receipt: %v", err)
	}
	if err := svc.Delete(ctx, qn, a.ID, a.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("second delete: %v", err)
	}

	b := put(t, svc, "b", msgqueue.PutOptions{})
	other := put(t, svc, "other", msgqueue.PutOptions{VisibilityTimeout: time.Hour, TTL: 2 * time.Hour, TTLSet: true})
	g1 := get(t, svc, 1, 10*time.Second)[0]
	if g1.ID != b.ID {
		t.Fatalf("got %s, want b", g1.ID)
	}
	// The put receipt died with the get.
	if err := svc.Delete(ctx, qn, b.ID, b.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("put receipt after a get: %v", err)
	}
	// A foreign receipt (another message's) and a made-up one are stale.
	if err := svc.Delete(ctx, qn, b.ID, other.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("foreign receipt: %v", err)
	}
	if err := svc.Delete(ctx, qn, other.ID, g1.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("receipt used on another message: %v", err)
	}
	if _, err := svc.Update(ctx, qn, b.ID, "AAAAAAAAAAAAAAAA.1", 0, nil); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("made-up receipt: %v", err)
	}
	if err := svc.Delete(ctx, qn, "no-such-id", g1.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// The message reappears and nobody takes it: g1's receipt still
	// deletes it (Delete Message: the receipt dies when "the invisibility
	// time has elapsed and the message has been dequeued by a Get
	// Messages request" — both, not the first alone).
	c.Advance(10 * time.Second)
	if len(peek(t, svc, 1)) != 1 {
		t.Fatal("b did not reappear")
	}
	if err := svc.Delete(ctx, qn, b.ID, g1.PopReceipt); err != nil {
		t.Fatalf("receipt of a reappeared, untaken message: %v", err)
	}

	// Reappeared and taken by someone else: the old receipt is dead for
	// delete and update, the new one works.
	d := put(t, svc, "d", msgqueue.PutOptions{})
	first := get(t, svc, 1, 10*time.Second)[0]
	c.Advance(10 * time.Second)
	second := get(t, svc, 1, 10*time.Second)[0]
	if first.ID != d.ID || second.ID != d.ID || second.DequeueCount != 2 {
		t.Fatalf("gets of d: %+v %+v", first, second)
	}
	if err := svc.Delete(ctx, qn, d.ID, first.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("delete with the receipt of an earlier get: %v", err)
	}
	if _, err := svc.Update(ctx, qn, d.ID, first.PopReceipt, 0, ptr("stale")); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("update with the receipt of an earlier get: %v", err)
	}
	if err := svc.Delete(ctx, qn, d.ID, second.PopReceipt); err != nil {
		t.Fatalf("delete with the current receipt: %v", err)
	}

	// Errors on a missing queue are QueueNotFound, not MessageNotFound.
	if err := svc.Delete(ctx, "nope", d.ID, second.PopReceipt); !errors.Is(err, msgqueue.ErrQueueNotFound) {
		t.Fatalf("delete in a missing queue: %v", err)
	}
}

func ptr(s string) *string { return &s }

// TestUpdateReplacesReceipt: Update answers a new receipt and kills the
// old one; it keeps or replaces the text, sets the next-visible time from
// now and leaves the dequeue count alone.
func TestUpdateReplacesReceipt(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, c)
	put(t, svc, "v1", msgqueue.PutOptions{})
	g := get(t, svc, 1, 30*time.Second)[0]

	c.Advance(5 * time.Second)
	u1, err := svc.Update(ctx, qn, g.ID, g.PopReceipt, 20*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u1.PopReceipt == g.PopReceipt || !u1.NextVisible.Equal(c.Now().Add(20*time.Second)) || u1.Text != "v1" || u1.DequeueCount != 1 {
		t.Fatalf("update without text: %+v", u1)
	}
	// Last writer wins only with the current receipt: a second updater
	// holding the old one fails and changes nothing.
	if _, err := svc.Update(ctx, qn, g.ID, g.PopReceipt, 0, ptr("lost")); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("update with the replaced receipt: %v", err)
	}
	if err := svc.Delete(ctx, qn, g.ID, g.PopReceipt); !errors.Is(err, msgqueue.ErrMessageNotFound) {
		t.Fatalf("delete with the replaced receipt: %v", err)
	}
	c.Advance(20*time.Second - time.Millisecond)
	if len(peek(t, svc, 1)) != 0 {
		t.Fatal("visible before the updated next-visible time")
	}
	u2, err := svc.Update(ctx, qn, g.ID, u1.PopReceipt, 0, ptr("v2"))
	if err != nil {
		t.Fatal(err)
	}
	p := peek(t, svc, 1)
	if len(p) != 1 || p[0].Text != "v2" || p[0].DequeueCount != 1 {
		t.Fatalf("peek after update with visibility 0: %+v", p)
	}
	// An updated message that reappeared keeps its receipt until got.
	if err := svc.Delete(ctx, qn, g.ID, u2.PopReceipt); err != nil {
		t.Fatalf("delete with the update's receipt: %v", err)
	}

	// Bounds: 0…7 days, text ≤ 64 KiB.
	m := put(t, svc, "b", msgqueue.PutOptions{})
	var re *msgqueue.RangeError
	if _, err := svc.Update(ctx, qn, m.ID, m.PopReceipt, -time.Second, nil); !errors.As(err, &re) {
		t.Fatalf("update visibility -1: %v", err)
	}
	if _, err := svc.Update(ctx, qn, m.ID, m.PopReceipt, 7*24*time.Hour+time.Second, nil); !errors.As(err, &re) {
		t.Fatalf("update visibility 7 d + 1 s: %v", err)
	}
	if _, err := svc.Update(ctx, qn, m.ID, m.PopReceipt, 0, ptr(strings.Repeat("x", msgqueue.MaxMessageBytes+1))); !errors.Is(err, msgqueue.ErrMessageTooLarge) {
		t.Fatalf("update with 64 KiB + 1: %v", err)
	}
	if _, err := svc.Update(ctx, qn, m.ID, m.PopReceipt, 7*24*time.Hour, ptr(strings.Repeat("x", msgqueue.MaxMessageBytes))); err != nil {
		t.Fatalf("update with 64 KiB and 7 days: %v", err)
	}
}

// TestPeekChangesNothing: peeking twice answers the same messages with the
// same fields; a get afterwards sees dequeue count 1.
func TestPeekChangesNothing(t *testing.T) {
	c := newClock()
	svc := newService(t, c)
	for _, s := range []string{"1", "2", "3"} {
		put(t, svc, s, msgqueue.PutOptions{})
		c.Advance(time.Millisecond)
	}
	p1 := peek(t, svc, 32)
	c.Advance(time.Minute)
	p2 := peek(t, svc, 32)
	if len(p1) != 3 || len(p2) != 3 {
		t.Fatalf("peeks: %d %d", len(p1), len(p2))
	}
	for i := range p1 {
		if p1[i] != p2[i] || p1[i].DequeueCount != 0 {
			t.Fatalf("peek %d changed: %+v → %+v", i, p1[i], p2[i])
		}
	}
	if p1[0].Text != "1" || p1[2].Text != "3" {
		t.Fatalf("peek order: %+v", p1)
	}
	g := get(t, svc, 32, time.Second)
	if len(g) != 3 || g[0].Text != "1" || g[0].DequeueCount != 1 {
		t.Fatalf("get after peeks: %+v", g)
	}
	// Peek's receipt is not a receipt: the got receipts still work.
	for _, m := range g {
		if err := svc.Delete(context.Background(), qn, m.ID, m.PopReceipt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBounds: numofmessages 1…32, get visibility 1 s…7 d, put visibility
// 0…7 d, text ≤ 64 KiB; each outside is the documented error, nothing
// stored.
func TestBounds(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, c)
	var re *msgqueue.RangeError
	for _, n := range []int{0, -1, 33} {
		if _, err := svc.Get(ctx, qn, n, time.Second); !errors.As(err, &re) || re.Param != "numofmessages" {
			t.Errorf("get numofmessages %d: %v", n, err)
		}
		if _, err := svc.Peek(ctx, qn, n); !errors.As(err, &re) || re.Param != "numofmessages" {
			t.Errorf("peek numofmessages %d: %v", n, err)
		}
	}
	for _, v := range []time.Duration{0, -time.Second, 7*24*time.Hour + time.Second} {
		if _, err := svc.Get(ctx, qn, 1, v); !errors.As(err, &re) || re.Param != "visibilitytimeout" {
			t.Errorf("get visibility %v: %v", v, err)
		}
	}
	for _, v := range []time.Duration{-time.Second, 7*24*time.Hour + time.Second} {
		if _, err := svc.Put(ctx, qn, "x", msgqueue.PutOptions{VisibilityTimeout: v}); !errors.As(err, &re) {
			t.Errorf("put visibility %v: %v", v, err)
		}
	}
	if _, err := svc.Put(ctx, qn, strings.Repeat("é", msgqueue.MaxMessageBytes/2)+"x", msgqueue.PutOptions{}); !errors.Is(err, msgqueue.ErrMessageTooLarge) {
		t.Errorf("put 64 KiB + 1 bytes of UTF-8: %v", err)
	}
	if n := count(t, svc); n != 0 {
		t.Fatalf("refused puts stored %d messages", n)
	}
	put(t, svc, strings.Repeat("é", msgqueue.MaxMessageBytes/2), msgqueue.PutOptions{VisibilityTimeout: 7 * 24 * time.Hour})
	if g := get(t, svc, 32, 7*24*time.Hour); len(g) != 0 {
		t.Fatalf("got a message hidden for 7 days: %+v", g)
	}
}

// TestCreateQueueIdempotence: same metadata (names case-insensitive) is
// not an error, other metadata is ErrQueueExists; names are checked.
func TestCreateQueueIdempotence(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, newClock())
	if created, err := svc.CreateQueue(ctx, "meta", map[string]string{"Owner": "a"}); err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if created, err := svc.CreateQueue(ctx, "meta", map[string]string{"owner": "a"}); err != nil || created {
		t.Fatalf("create again, same metadata: %v %v", created, err)
	}
	for _, md := range []map[string]string{nil, {"owner": "A"}, {"owner": "a", "x": "y"}} {
		if _, err := svc.CreateQueue(ctx, "meta", md); !errors.Is(err, msgqueue.ErrQueueExists) {
			t.Errorf("create with %v: %v", md, err)
		}
	}
	for name, want := range map[string]error{"ab": msgqueue.ErrNameLength, strings.Repeat("a", 64): msgqueue.ErrNameLength,
		"a--b": msgqueue.ErrInvalidName, "-ab": msgqueue.ErrInvalidName, "ab-": msgqueue.ErrInvalidName, "aBc": msgqueue.ErrInvalidName} {
		if _, err := svc.CreateQueue(ctx, name, nil); !errors.Is(err, want) {
			t.Errorf("create %q: %v, want %v", name, err, want)
		}
	}
}

// TestClearAndDeleteWhilePolling: workers poll (get, delete) while the
// queue is cleared and then deleted; they see messages, empty answers or
// QueueNotFound — no other error — and nothing survives.
func TestClearAndDeleteWhilePolling(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, c)
	for i := range 200 {
		put(t, svc, "m"+string(rune('a'+i%26)), msgqueue.PutOptions{})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	gone := make(chan struct{})
	polled := make(chan struct{}, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				ms, err := svc.Get(ctx, qn, 4, time.Minute)
				if first {
					polled <- struct{}{}
					first = false
				}
				if errors.Is(err, msgqueue.ErrQueueNotFound) {
					select {
					case <-gone:
						return
					default:
						errs <- errors.New("QueueNotFound before the queue was deleted")
						return
					}
				}
				if err != nil {
					errs <- err
					return
				}
				for _, m := range ms {
					if err := svc.Delete(ctx, qn, m.ID, m.PopReceipt); err != nil &&
						!errors.Is(err, msgqueue.ErrMessageNotFound) && !errors.Is(err, msgqueue.ErrQueueNotFound) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for range 4 {
		<-polled
	}
	if err := svc.Clear(ctx, qn); err != nil {
		t.Fatal(err)
	}
	if n := count(t, svc); n != 0 {
		t.Fatalf("count after clear: %d", n)
	}
	put(t, svc, "after clear", msgqueue.PutOptions{})
	close(gone) // from here on QueueNotFound is expected
	if err := svc.DeleteQueue(ctx, qn); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := svc.Put(ctx, qn, "x", msgqueue.PutOptions{}); !errors.Is(err, msgqueue.ErrQueueNotFound) {
		t.Fatalf("put after delete: %v", err)
	}
	if _, err := svc.Peek(ctx, qn, 1); !errors.Is(err, msgqueue.ErrQueueNotFound) {
		t.Fatalf("peek after delete: %v", err)
	}
	// A queue created again under the name starts empty.
	if _, err := svc.CreateQueue(ctx, qn, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, svc); n != 0 {
		t.Fatalf("recreated queue has %d messages", n)
	}
}

// racingStore runs before at the start of each Claim: what another
// gateway commits while a get waits for the store.
type racingStore struct {
	msgqueue.Store
	before func()
}

func (r *racingStore) Claim(ctx context.Context, queue string, now func() time.Time, n int, vis time.Duration, prefix string) ([]msgqueue.Message, error) {
	if r.before != nil {
		r.before()
	}
	return r.Store.Claim(ctx, queue, now, n, vis, prefix)
}

// TestGetSeesPutCommittedWhileItWaited: a get that began before a put
// but reached the store after it sees the message. Reading the clock
// before waiting for the store would make the put's next-visible time
// later than the get's "now", and the get would answer an empty queue
// although the message was there, visible, and nobody else could take it
// (found by BenchmarkQueueCycles: 16 workers that each put then get
// sometimes got nothing).
func TestGetSeesPutCommittedWhileItWaited(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	store, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	racing := &racingStore{Store: store}
	svc := msgqueue.New(racing, c.Now)
	other := msgqueue.New(store, c.Now) // another gateway on the same database
	if _, err := svc.CreateQueue(ctx, qn, nil); err != nil {
		t.Fatal(err)
	}
	var put msgqueue.Message
	racing.before = func() {
		racing.before = nil
		c.Advance(time.Millisecond)
		if put, err = other.Put(ctx, qn, "committed meanwhile", msgqueue.PutOptions{}); err != nil {
			t.Error(err)
		}
	}
	got, err := svc.Get(ctx, qn, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != put.ID {
		t.Fatalf("get answered %+v; the message put while it waited (visible at %v) was there", got, put.NextVisible)
	}
}

// TestReopenKeepsVisibility: the store survives a close and reopen with
// every message, receipt and next-visible time: a message got before
// stays hidden until exactly its time, and its receipt still deletes it;
// an untouched one is still there.
func TestReopenKeepsVisibility(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	path := filepath.Join(t.TempDir(), sqlstore.FileName)
	store, err := sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := msgqueue.New(store, c.Now)
	if _, err := svc.CreateQueue(ctx, qn, nil); err != nil {
		t.Fatal(err)
	}
	put(t, svc, "taken", msgqueue.PutOptions{})
	untouched := put(t, svc, "untouched", msgqueue.PutOptions{VisibilityTimeout: time.Hour})
	g := get(t, svc, 1, 10*time.Second)[0]
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store, err = sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc = msgqueue.New(store, c.Now)
	if n := count(t, svc); n != 2 {
		t.Fatalf("count after reopening: %d", n)
	}
	c.Advance(10*time.Second - time.Millisecond)
	if p := peek(t, svc, 32); len(p) != 0 {
		t.Fatalf("visible before its time after reopening: %+v", p)
	}
	c.Advance(time.Millisecond)
	if p := peek(t, svc, 32); len(p) != 1 || p[0].ID != g.ID || p[0].DequeueCount != 1 {
		t.Fatalf("not visible at its time after reopening: %+v", p)
	}
	if err := svc.Delete(ctx, qn, g.ID, g.PopReceipt); err != nil {
		t.Fatalf("receipt from before the reopen: %v", err)
	}
	c.Advance(time.Hour)
	if p := peek(t, svc, 32); len(p) != 1 || p[0].ID != untouched.ID {
		t.Fatalf("untouched message after reopening: %+v", p)
	}
}
