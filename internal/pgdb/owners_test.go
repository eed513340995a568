package pgdb

import (
	"context"
	"testing"
	"time"

	"github.com/blobshare/blobshare/internal/pgtest"
)

func alive(t *testing.T, judge *Node, id string) bool {
	t.Helper()
	a, err := judge.Alive(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func register(t *testing.T, conn string, o NodeOptions) *Node {
	t.Helper()
	ctx := context.Background()
	pool, schema, err := Open(ctx, conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	n, err := RegisterNode(ctx, pool, schema, NodeInfo{Host: "h", PID: 1, Program: "test"}, o)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNodeAlive: a node judges others alive while registered, heartbeating
// and holding their session lock: one whose session ended (its process
// was killed: the lock's backend terminated) is dead at once, long before
// its expiry; one whose heartbeat expired (paused) is dead though its
// session lock is held; one that left (Close) or was never registered is
// dead; a judge on a schema where no node ever registered finds none
// alive.
func TestNodeAlive(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	long := NodeOptions{Heartbeat: time.Hour, Expiry: time.Hour}
	judge := register(t, conn, long)
	defer judge.Close(ctx)
	if judge.Owner() != judge.ID() {
		t.Errorf("Owner %q, want the node id %q", judge.Owner(), judge.ID())
	}

	killed := register(t, conn, long)
	defer killed.Close(ctx)
	if !alive(t, judge, killed.ID()) {
		t.Fatal("a registered node is dead")
	}
	pid := lockPID(t, killed)
	if _, err := judge.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(t, judge, killed.ID()) { // the backend exits asynchronously
		if time.Now().After(deadline) {
			t.Fatal("a node whose session ended is still alive 10 s later")
		}
		time.Sleep(5 * time.Millisecond)
	}

	paused := register(t, conn, NodeOptions{Heartbeat: time.Hour, Expiry: 300 * time.Millisecond})
	defer paused.Close(ctx)
	if !alive(t, judge, paused.ID()) {
		t.Fatal("a fresh node is dead")
	}
	deadline = time.Now().Add(10 * time.Second)
	for alive(t, judge, paused.ID()) {
		if time.Now().After(deadline) {
			t.Fatal("a node whose heartbeat expired is still alive")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if lockPID(t, paused) == 0 {
		t.Error("the expired node's session lock is no longer held: the test proved nothing")
	}

	left := register(t, conn, long)
	id := left.ID()
	if err := left.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{id, "never", ""} {
		if alive(t, judge, id) {
			t.Errorf("node %q alive", id)
		}
	}

	pool, _, err := Open(ctx, pg.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if a, err := NodeAlive(ctx, pool, judge.ID()); err != nil || a {
		t.Errorf("alive on a schema without a registry: %v %v", a, err)
	}
}

// TestNodeAliveAcrossRestart: a database restart ends every session, so
// every node's lock is free until it connects again; a node whose last
// heartbeat is from before the restart is judged by its heartbeat alone
// (alive), not taken for killed; once it has heartbeated in the new
// incarnation, its lock counts again.
func TestNodeAliveAcrossRestart(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Private(t)
	conn := c.Schema(t)
	sleepy := register(t, conn, NodeOptions{Heartbeat: time.Hour, Expiry: time.Hour})
	defer sleepy.Close(ctx)
	// Its heartbeats are run by hand here: its own would notice the
	// restart and repair it at once.
	sleepy.halt()
	id := sleepy.ID()
	if err := c.Halt("fast"); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	pool, _, err := Open(ctx, conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sleepy.pool.Reset() // its idle connections died with the server: the test reads through it
	if pid := lockPID(t, sleepy); pid != 0 {
		t.Fatalf("backend %d holds the node's lock right after the restart: the test proves nothing", pid)
	}
	if a, err := NodeAlive(ctx, pool, sleepy.ID()); err != nil || !a {
		t.Fatalf("a node not yet reconnected after a restart: alive %v %v, want alive", a, err)
	}
	// Its next heartbeat (run here by hand) takes the lock again and
	// renews the row in the new incarnation; then its session ending is
	// its death again.
	if err := sleepy.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if a, err := NodeAlive(ctx, pool, sleepy.ID()); err != nil || !a {
		t.Fatalf("after its heartbeat: alive %v %v", a, err)
	}
	if sleepy.ID() != id || sleepy.Deciding() != nil {
		t.Fatalf("after a restart: id %s (was %s), deciding %v; want the same id, deciding", sleepy.ID(), id, sleepy.Deciding())
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, lockPID(t, sleepy)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := NodeAlive(ctx, pool, sleepy.ID())
		if err != nil {
			t.Fatal(err)
		}
		if !a {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a node whose session ended after the restart is still alive")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
