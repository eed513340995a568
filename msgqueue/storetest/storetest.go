package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
)

// Store is a msgqueue.Store the suite can close.
type Store interface {
	msgqueue.Store
	Close() error
}

// Opener gives one test a fresh, empty database and returns a function
// that opens a Store on it — each call another Store on the same
// database, as another process or gateway would open it. The suite
// closes every Store it opens.
type Opener func(t *testing.T) func() (Store, error)

// Run runs the conformance suite: every test drives a msgqueue.Service
// with an injected clock over stores from open.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, Opener)
	}{
		{"VisibilityTimeoutEdges", testVisibilityTimeoutEdges},
		{"PutVisibilityTimeout", testPutVisibilityTimeout},
		{"TTL", testTTL},
		{"PopReceiptValidity", testPopReceiptValidity},
		{"UpdateReplacesReceipt", testUpdateReplacesReceipt},
		{"PeekChangesNothing", testPeekChangesNothing},
		{"Bounds", testBounds},
		{"CreateQueueIdempotence", testCreateQueueIdempotence},
		{"QueuesMetadataAndListing", testQueuesMetadataAndListing},
		{"ClearAndDeleteWhilePolling", testClearAndDeleteWhilePolling},
		{"GetSeesPutCommittedWhileItWaited", testGetSeesPutCommittedWhileItWaited},
		{"ReopenKeepsVisibility", testReopenKeepsVisibility},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open) })
	}
}

// closeOnce closes a Store at most once (a test may close it early; the
// cleanup closes it otherwise).
type closeOnce struct {
	Store
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.Store.Close() })
	return c.err
}

// mustOpen opens a Store on db, closed at the test's end.
func mustOpen(t *testing.T, db func() (Store, error)) Store {
	t.Helper()
	s, err := db()
	if err != nil {
		t.Fatal(err)
	}
	c := &closeOnce{Store: s}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

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

// newService is a Service with clock c over a fresh store from open, with
// one queue, qn.
func newService(t *testing.T, open Opener, c *clock) *msgqueue.Service {
	t.Helper()
	svc := msgqueue.New(mustOpen(t, open(t)), c.Now)
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
