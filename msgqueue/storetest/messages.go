package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/msgqueue"
)

// VisibilityTimeoutEdges: a got message is invisible to get and peek
// until exactly its next-visible time, visible from then on, and its
// dequeue count moves on the next get, not when it reappears.
func testVisibilityTimeoutEdges(t *testing.T, open Opener) {
	c := newClock()
	svc := newService(t, open, c)
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

// PutVisibilityTimeout: a message put with a visibility timeout is
// hidden from get and peek until then.
func testPutVisibilityTimeout(t *testing.T, open Opener) {
	c := newClock()
	svc := newService(t, open, c)
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

// TTL: a message vanishes from every operation at its expiry; -1
// never expires (and reports 9999-12-31T23:59:59Z); the documented
// bounds on messagettl and its relation to visibilitytimeout.
func testTTL(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, open, c)
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

// PopReceiptValidity: which receipts delete and update, and which are
// stale (404 MessageNotFound).
func testPopReceiptValidity(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, open, c)

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

// UpdateReplacesReceipt: Update answers a new receipt and kills the
// old one; it keeps or replaces the text, sets the next-visible time from
// now and leaves the dequeue count alone.
func testUpdateReplacesReceipt(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, open, c)
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

// PeekChangesNothing: peeking twice answers the same messages with the
// same fields; a get afterwards sees dequeue count 1.
func testPeekChangesNothing(t *testing.T, open Opener) {
	c := newClock()
	svc := newService(t, open, c)
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

// Bounds: numofmessages 1…32, get visibility 1 s…7 d, put visibility
// 0…7 d, text ≤ 64 KiB; each outside is the documented error, nothing
// stored.
func testBounds(t *testing.T, open Opener) {
	ctx := context.Background()
	c := newClock()
	svc := newService(t, open, c)
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
