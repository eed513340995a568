package pgdb

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// nodeWithin waits until cond holds of the registry (read on the
// database's clock), failing after 20 s.
func nodesWithin(t *testing.T, n *Node, what string, cond func([]NodeStatus) bool) []NodeStatus {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		nodes, err := Nodes(context.Background(), n.pool)
		if err != nil {
			t.Fatal(err)
		}
		if cond(nodes) {
			return nodes
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s; registry %+v", what, nodes)
		}
		time.Sleep(20 * time.Millisecond) // the heartbeats are periodic: nothing to wait on
	}
}

// lockPID is the backend holding n's session lock (0: none).
func lockPID(t *testing.T, n *Node) (pid int) {
	t.Helper()
	k := nodeLockKey(n.schema, n.ID())
	err := n.pool.QueryRow(context.Background(), `SELECT coalesce(max(pid), 0) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND classid = (($1::bigint >> 32) & 4294967295)::oid AND objid = ($1::bigint & 4294967295)::oid`, k).Scan(&pid)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func byID(nodes []NodeStatus, id string) (NodeStatus, bool) {
	i := slices.IndexFunc(nodes, func(s NodeStatus) bool { return s.ID == id })
	if i < 0 {
		return NodeStatus{}, false
	}
	return nodes[i], true
}

// TestNodeRegistry: two nodes (two pools on one schema) register and both
// show alive with their details; heartbeats move their expiry on the
// database's clock; a node whose heartbeats stop shows expired after its
// expiry; one whose row expired while it was paused does not bring that
// row back but registers again under a new id; Close removes the row.
func TestNodeRegistry(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	if pool, _, err := Open(ctx, conn, Options{}); err != nil {
		t.Fatal(err)
	} else if nodes, err := Nodes(ctx, pool); err != nil || len(nodes) != 0 {
		t.Fatalf("a schema where no node registered: %v, %v", nodes, err)
	} else {
		pool.Close()
	}
	o := NodeOptions{Heartbeat: 100 * time.Millisecond, Expiry: time.Second}
	register := func(pid int) *Node {
		pool, schema, err := Open(ctx, conn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		n, err := RegisterNode(ctx, pool, schema, NodeInfo{Host: "h", PID: pid, Program: "blobshare serve", Endpoints: "queue=q"}, o)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := register(1), register(2)
	first := nodesWithin(t, a, "both alive", func(ns []NodeStatus) bool { return len(ns) == 2 && ns[0].Alive && ns[1].Alive })
	if s, _ := byID(first, b.ID()); s.PID != 2 || s.Host != "h" || s.Program != "blobshare serve" || s.Endpoints != "queue=q" ||
		s.Expires.Sub(s.Heartbeat) != o.Expiry || s.Now.Before(s.Heartbeat) {
		t.Errorf("node b reads %+v", s)
	}
	aFirst, _ := byID(first, a.ID())
	nodesWithin(t, a, "a's heartbeat renewed", func(ns []NodeStatus) bool {
		s, ok := byID(ns, a.ID())
		return ok && s.Expires.After(aFirst.Expires)
	})

	// a's database session is cut while the server runs on (as a
	// network cut or pg_terminate_backend does): the others judge it
	// dead by its free lock, so it comes back under a new id, and its
	// old row is expired for good.
	aID, pid := a.ID(), lockPID(t, a)
	var cut bool
	if err := a.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&cut); err != nil || !cut {
		t.Fatalf("terminating a's session %d: %v %v", pid, cut, err)
	}
	nodesWithin(t, a, "a registered again under a new id", func(ns []NodeStatus) bool {
		sOld, okOld := byID(ns, aID)
		sNew, ok := byID(ns, a.ID())
		return a.ID() != aID && ok && sNew.Alive && okOld && sOld.Expired && !sOld.LockHeld
	})
	if err := a.Deciding(); err != nil {
		t.Errorf("a after registering again: %v, want deciding", err)
	}

	// b stops beating without unregistering, its session still there
	// (as if frozen).
	b.halt()
	nodesWithin(t, a, "b expired", func(ns []NodeStatus) bool {
		sa, _ := byID(ns, a.ID())
		sb, ok := byID(ns, b.ID())
		return ok && !sb.Alive && sb.Expired && sb.LockHeld && sa.Alive && !sb.Now.Before(sb.Expires)
	})
	// Its session ends (as when a killed process's connection closes):
	// its lock is free, so it shows dead even before it expires.
	b.dropLock()
	nodesWithin(t, a, "b's lock free once its session closed", func(ns []NodeStatus) bool {
		sb, ok := byID(ns, b.ID())
		return ok && !sb.LockHeld
	})

	// a's row expires while a is "paused": it comes back under a new id.
	old := a.ID()
	if _, err := a.pool.Exec(ctx, `UPDATE meta_nodes SET expires = now() - interval '1 second' WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	nodesWithin(t, a, "a registered again", func(ns []NodeStatus) bool {
		sOld, _ := byID(ns, old)
		sNew, ok := byID(ns, a.ID())
		return a.ID() != old && ok && sNew.Alive && !sOld.Alive
	})
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	nodes, err := Nodes(ctx, a.pool)
	if _, ok := byID(nodes, a.ID()); ok || err != nil || len(nodes) != 3 {
		t.Errorf("after Close: %+v, %v; want the three expired rows only", nodes, err)
	}
}

// TestNodeFencing: a node stops deciding (ErrFenced, which is
// meta.ErrUnavailable) once its last successful heartbeat was sent
// Expiry − Expiry/5 ago by its own clock, before any other node can
// judge it expired; and a node whose lock connection is cut while the
// server runs on notices it between heartbeats (an hour apart here) and
// registers again under a new id, the old one dead for good.
func TestNodeFencing(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	judge := register(t, conn, NodeOptions{Heartbeat: time.Hour, Expiry: time.Hour})
	defer judge.Close(ctx)

	o := NodeOptions{Heartbeat: time.Hour, Expiry: 2 * time.Second}
	start := time.Now()
	paused := register(t, conn, o)
	defer paused.Close(ctx)
	if err := paused.Deciding(); err != nil {
		t.Fatalf("a fresh node: %v", err)
	}
	var err error
	for err = paused.Deciding(); err == nil; err = paused.Deciding() {
		time.Sleep(10 * time.Millisecond) // the fence is a time on the node's clock: nothing else to wait on
	}
	elapsed := time.Since(start)
	if alive, aerr := NodeAlive(ctx, judge.pool, paused.ID()); aerr != nil || !alive {
		t.Errorf("fenced after %s, but others already judge it dead (%v, %v): the fence must come first", elapsed, alive, aerr)
	}
	if !errors.Is(err, ErrFenced) || !errors.Is(err, meta.ErrUnavailable) || elapsed < o.Expiry-o.fenceMargin() {
		t.Errorf("fenced after %s with %v; want ErrFenced (meta.ErrUnavailable), not before %s", elapsed, err, o.Expiry-o.fenceMargin())
	}

	cut := register(t, conn, NodeOptions{Heartbeat: time.Hour, Expiry: time.Hour})
	defer cut.Close(ctx)
	old := cut.ID()
	if _, err := judge.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, lockPID(t, cut)); err != nil {
		t.Fatal(err)
	}
	nodesWithin(t, judge, "the cut node registered again", func(ns []NodeStatus) bool {
		sOld, _ := byID(ns, old)
		sNew, ok := byID(ns, cut.ID())
		return cut.ID() != old && ok && sNew.Alive && sOld.Expired && !sOld.Alive
	})
	if err := cut.Deciding(); err != nil {
		t.Errorf("after registering again: %v", err)
	}
	if alive, err := NodeAlive(ctx, judge.pool, old); err != nil || alive {
		t.Errorf("the old id: alive %v %v, want dead for good", alive, err)
	}
}
