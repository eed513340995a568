package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
)

// CreateQueueIdempotence: same metadata (names case-insensitive) is
// not an error, other metadata is ErrQueueExists; names are checked.
func testCreateQueueIdempotence(t *testing.T, open Opener) {
	ctx := context.Background()
	svc := newService(t, open, newClock())
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

// ClearAndDeleteWhilePolling: workers poll (get, delete) while the
// queue is cleared and then deleted; they see messages, empty answers or
// QueueNotFound — no other error — and nothing survives.
func testClearAndDeleteWhilePolling(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, open, c)
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

// GetSeesPutCommittedWhileItWaited: a get that began before a put
// but reached the store after it sees the message. Reading the clock
// before waiting for the store would make the put's next-visible time
// later than the get's "now", and the get would answer an empty queue
// although the message was there, visible, and nobody else could take it
// (found by BenchmarkQueueCycles: 16 workers that each put then get
// sometimes got nothing).
func testGetSeesPutCommittedWhileItWaited(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	store := mustOpen(t, open(t))
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
		var err error
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

// ReopenKeepsVisibility: the store survives a close and reopen with
// every message, receipt and next-visible time: a message got before
// stays hidden until exactly its time, and its receipt still deletes it;
// an untouched one is still there.
func testReopenKeepsVisibility(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	db := open(t)
	store := mustOpen(t, db)
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

	store = mustOpen(t, db)
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

// QueuesMetadataAndListing: listing is in bytewise name order from the
// marker, by prefix, up to the limit; metadata, ACLs and the service
// properties round-trip; a missing queue is QueueNotFound everywhere.
func testQueuesMetadataAndListing(t *testing.T, open Opener) {
	ctx := context.Background()
	svc := msgqueue.New(mustOpen(t, open(t)), newClock().Now)
	for _, n := range []string{"ab-1", "aa1", "aa-x", "aa2", "aab"} {
		if _, err := svc.CreateQueue(ctx, n, map[string]string{"name": n}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(qs []msgqueue.QueueInfo) string {
		var s []string
		for _, q := range qs {
			s = append(s, q.Name+"="+q.Metadata["name"])
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		o          msgqueue.ListOptions
		want, next string
	}{
		{msgqueue.ListOptions{}, "aa-x=aa-x aa1=aa1 aa2=aa2 aab=aab ab-1=ab-1", ""},
		{msgqueue.ListOptions{Prefix: "aa"}, "aa-x=aa-x aa1=aa1 aa2=aa2 aab=aab", ""},
		{msgqueue.ListOptions{Prefix: "aa", Max: 2}, "aa-x=aa-x aa1=aa1", "aa2"},
		{msgqueue.ListOptions{Prefix: "aa", Marker: "aa2", Max: 2}, "aa2=aa2 aab=aab", ""},
		{msgqueue.ListOptions{Prefix: "a_"}, "", ""}, // no pattern characters
		{msgqueue.ListOptions{Prefix: "a%"}, "", ""},
		{msgqueue.ListOptions{Marker: "aaa"}, "aab=aab ab-1=ab-1", ""},
	} {
		qs, next, err := svc.ListQueues(ctx, tc.o)
		if err != nil || names(qs) != tc.want || next != tc.next {
			t.Errorf("list %+v: %q next %q, %v; want %q next %q", tc.o, names(qs), next, err, tc.want, tc.next)
		}
	}
	if err := svc.SetMetadata(ctx, "aa1", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if q, err := svc.Queue(ctx, "aa1"); err != nil || len(q.Metadata) != 1 || q.Metadata["k"] != "v" {
		t.Fatalf("metadata after set: %+v, %v", q, err)
	}
	ids := []msgqueue.SignedIdentifier{{ID: "p1", Start: "2026-01-01T00:00:00Z", Expiry: "2027-01-01T00:00:00.0000000Z", Permission: "raup"}}
	if err := svc.SetACL(ctx, "aa1", ids); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.ACL(ctx, "aa1"); err != nil || len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("ACL = %+v, %v", got, err)
	}
	for what, err := range map[string]error{
		"metadata": svc.SetMetadata(ctx, "nope", nil),
		"set acl":  svc.SetACL(ctx, "nope", nil),
		"delete":   svc.DeleteQueue(ctx, "nope"),
		"clear":    svc.Clear(ctx, "nope"),
	} {
		if !errors.Is(err, msgqueue.ErrQueueNotFound) {
			t.Errorf("%s on a missing queue: %v", what, err)
		}
	}
	if _, err := svc.ACL(ctx, "nope"); !errors.Is(err, msgqueue.ErrQueueNotFound) {
		t.Errorf("acl of a missing queue: %v", err)
	}
	if _, err := svc.Get(ctx, "nope", 1, time.Second); !errors.Is(err, msgqueue.ErrQueueNotFound) {
		t.Errorf("get from a missing queue: %v", err)
	}
	if doc, err := svc.ServiceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("service properties before any set: %q, %v", doc, err)
	}
	for _, d := range []string{"<StorageServiceProperties>1</StorageServiceProperties>", "<x/>"} {
		if err := svc.SetServiceProperties(ctx, []byte(d)); err != nil {
			t.Fatal(err)
		}
		if got, err := svc.ServiceProperties(ctx); err != nil || string(got) != d {
			t.Fatalf("service properties = %q, %v; want %q", got, err, d)
		}
	}
}
