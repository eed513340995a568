package pgdb

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/blobshare/blobshare/internal/pgtest"
)

// listening opens a listener on channel "locks" of conn's schema and a
// subscription per key, and waits until it listens (its first connection
// wakes every subscriber with Resumed).
func listening(t *testing.T, conn string, o ListenerOptions, keys ...string) (*Listener, []*Subscription) {
	t.Helper()
	ctx := context.Background()
	db, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	var schema string
	err = db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema)
	db.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o.Channels = []string{"locks"}
	l, err := NewListener(conn, schema, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var subs []*Subscription
	for _, k := range keys {
		s, err := l.Subscribe("locks", k)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	if !o.NoListen {
		for _, s := range subs {
			waitUntil(t, s, Resumed) // a short Poll may come first
		}
	}
	return l, subs
}

// waitUntil waits for a wake-up of s for the reason want, past polls.
func waitUntil(t *testing.T, s *Subscription, want Wake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		w, err := s.Wait(ctx)
		if err != nil {
			t.Fatalf("no %v wake-up on %q: %v", want, s.k.key, err)
		}
		if w == want {
			return
		}
		if w != Polled {
			t.Fatalf("wait on %q: %v while waiting for %v", s.k.key, w, want)
		}
	}
}

// expectWake waits for s's next wake-up and checks its reason.
func expectWake(t *testing.T, s *Subscription, want Wake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := s.Wait(ctx)
	if err != nil || got != want {
		t.Fatalf("wait on %q: %v, %v; want %v", s.k.key, got, err, want)
	}
}

// idle checks that s has no wake-up pending.
func idle(t *testing.T, s *Subscription) {
	t.Helper()
	if len(s.wake) != 0 {
		t.Errorf("%q has a wake-up pending: %v", s.k.key, <-s.wake)
	}
}

// notifier is "node A": a pool on schema that commits (or rolls back)
// transactions calling Notify.
type notifier struct {
	pool   *pgxpool.Pool
	schema string
}

func newNotifier(t *testing.T, conn string) notifier {
	t.Helper()
	pool, schema, err := Open(context.Background(), conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return notifier{pool, schema}
}

// notify runs a transaction notifying keys on channel "locks" of schema
// (the notifier's when ""), committing it when commit.
func (n notifier) notify(t *testing.T, schema string, commit bool, keys ...string) {
	t.Helper()
	ctx := context.Background()
	if schema == "" {
		schema = n.schema
	}
	tx, err := n.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := Notify(ctx, tx, schema, "locks", k); err != nil {
			t.Fatal(err)
		}
	}
	if commit {
		err = tx.Commit(ctx)
	} else {
		err = tx.Rollback(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotifyAcrossNodes: a notify in node A's transaction reaches node B's
// subscriber of that key when A commits, once however often the
// transaction notified it; a rolled-back notify, a notify of another key
// and one in another schema wake nobody. The ordering makes this exact
// without sleeps: one connection delivers notifications in commit order,
// so once the sentinel's wake-up arrived, any wrong one would be pending.
// It also measures the wake-up latency (commit → Wait returning).
func TestNotifyAcrossNodes(t *testing.T) {
	conn := pg.Schema(t)
	_, subs := listening(t, conn, ListenerOptions{Poll: time.Minute}, "file:1", "file:2", "sentinel")
	one, two, sentinel := subs[0], subs[1], subs[2]
	a := newNotifier(t, conn)
	other := newNotifier(t, pg.Schema(t))

	a.notify(t, "", true, "file:1", "file:1", "file:1")
	expectWake(t, one, Notified)
	a.notify(t, "", false, "file:2")          // rolled back
	a.notify(t, other.schema, true, "file:1") // another deployment's schema
	a.notify(t, "", true, "file:3")           // nobody's key
	a.notify(t, "", true, "sentinel")
	expectWake(t, sentinel, Notified)
	idle(t, one)
	idle(t, two)

	var lat []time.Duration
	for range 200 {
		began := time.Now()
		a.notify(t, "", true, "sentinel")
		expectWake(t, sentinel, Notified)
		lat = append(lat, time.Since(began))
	}
	slices.Sort(lat)
	t.Logf("commit of a notifying transaction → Wait returning, 200 runs: p50 %v, p90 %v, max %v (the commit's own round trip included)",
		lat[100], lat[180], lat[199])
}

// TestListenerSurvivesTerminate: the listener's backend is terminated;
// the listener connects again by itself, wakes its subscribers (a
// notification may have been missed meanwhile) and delivers the next
// notify.
func TestListenerSurvivesTerminate(t *testing.T) {
	conn := pg.Schema(t)
	l, subs := listening(t, conn+" application_name=listener-terminated", ListenerOptions{Poll: time.Minute}, "k")
	a := newNotifier(t, conn)
	var n int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'listener-terminated'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminated %d backends, %v; want the listener's", n, err)
	}
	expectWake(t, subs[0], Resumed)
	if l.sessions.Load() != 2 {
		t.Errorf("%d connections made, want 2", l.sessions.Load())
	}
	a.notify(t, "", true, "k")
	expectWake(t, subs[0], Notified)
}

// TestListenerSurvivesRestart: the database is stopped; waits fall back to
// polling while it is down, and once it is back the listener reconnects
// by itself, wakes its subscribers and delivers notifications again.
func TestListenerSurvivesRestart(t *testing.T) {
	c := pgtest.Private(t)
	conn := c.Schema(t)
	l, subs := listening(t, conn, ListenerOptions{Poll: 50 * time.Millisecond}, "k")
	if err := c.Halt("fast"); err != nil {
		t.Fatal(err)
	}
	// Waits poll while the server is down; the listener notices the
	// connection gone (within a few polls on a loaded machine).
	for i := 0; ; i++ {
		expectWake(t, subs[0], Polled)
		if !l.Connected() {
			break
		}
		if i == 100 {
			t.Fatal("the listener still says it is connected 100 polls after the server stopped")
		}
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, subs[0], Resumed)
	newNotifier(t, conn).notify(t, "", true, "k")
	waitUntil(t, subs[0], Notified)
}

// TestPollingFallback: a change committed without a notify (a missed
// wake-up) is seen by a waiter anyway, after the polling interval; with
// LISTEN off (a server without it) every wait polls, and a notify changes
// nothing.
func TestPollingFallback(t *testing.T) {
	conn := pg.Schema(t)
	const poll = 200 * time.Millisecond
	_, subs := listening(t, conn, ListenerOptions{Poll: poll}, "k")
	a := newNotifier(t, conn)
	ctx := context.Background()
	ready := func() (n int) {
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM flag`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := a.pool.Exec(ctx, `CREATE TABLE flag (v int)`); err != nil {
		t.Fatal(err)
	}
	if ready() != 0 {
		t.Fatal("flag set before the change")
	}
	began := time.Now()
	if _, err := a.pool.Exec(ctx, `INSERT INTO flag VALUES (1)`); err != nil { // committed, never notified
		t.Fatal(err)
	}
	expectWake(t, subs[0], Polled)
	if d := time.Since(began); d < poll {
		t.Errorf("polled after %v, before the interval %v", d, poll)
	}
	if ready() != 1 {
		t.Error("the re-check after the poll does not see the change")
	}

	l, subs := listening(t, conn, ListenerOptions{Poll: poll, NoListen: true}, "k")
	a.notify(t, "", true, "k")
	expectWake(t, subs[0], Polled)
	if l.Connected() {
		t.Error("a NoListen listener connected")
	}
	if _, err := l.Subscribe("other", "k"); !errors.Is(err, ErrUnknownChannel) {
		t.Errorf("subscribing to a channel not listened to: %v", err)
	}
}
