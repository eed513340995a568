package multinode

import (
	"testing"
	"time"

	"github.com/blobshare/blobshare/internal/pgtest"
)

// TestDatabaseRestart: two nodes serve Table and Queue clients (load) on
// a PostgreSQL of the test's own, which is stopped (pg_ctl stop -m fast:
// sessions terminated, a checkpoint; then -m immediate: no checkpoint,
// recovery from the WAL at the next start) and started again under the
// load. While it is down every request answers 503 ServerBusy within the
// clients' timeout — never another 5xx — and each node serves again by
// itself once it is back, without being restarted; nothing acknowledged
// is lost, nothing is half applied, and no message is handed out twice
// within its visibility timeout (load.check); both nodes are registered
// and alive again under their ids (status --meta).
func TestDatabaseRestart(t *testing.T) {
	c := pgtest.Private(t)
	nodes, conn := startNodes(t, c, 2, "")
	registered := statusNodes(t, metaURL(t, conn))
	l := startLoad(t, nodes, "restart")
	l.waitFor("20 increments before the first stop", 30*time.Second, func() bool { return l.incOK.Load() >= 20 })
	for _, mode := range []string{"fast", "immediate"} {
		unavailable := l.unavailable.Load()
		if err := c.Halt(mode); err != nil {
			l.finish()
			t.Fatal(err)
		}
		down := time.Now()
		l.waitFor("requests answered 503 while stopped ("+mode+")", 20*time.Second, func() bool { return l.unavailable.Load() >= unavailable+10 })
		time.Sleep(time.Until(down.Add(time.Second))) // at least a second without the database
		before := l.served()
		if err := c.Resume(); err != nil {
			l.finish()
			t.Fatal(err)
		}
		up := time.Now()
		l.servedSince("every node serving again after the "+mode+" stop", before)
		t.Logf("%s stop: down %v, every node served again %v after the start", mode, up.Sub(down).Round(time.Millisecond), time.Since(up).Round(time.Millisecond))
	}
	l.finish()
	l.check(conn)
	// The node registry: both nodes alive again under the ids they had (a
	// restart shorter than the expiry renews their heartbeats, and each
	// takes its session lock back at its first heartbeat after the start).
	deadline := time.Now().Add(10 * time.Second)
	for {
		after := statusNodes(t, metaURL(t, conn))
		if len(after) == 2 && len(registered) == 2 && after[0].ID == registered[0].ID && after[1].ID == registered[1].ID &&
			after[0].Alive && after[1].Alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("registered nodes %+v before the restarts, %+v 10 s after", registered, after)
		}
		time.Sleep(50 * time.Millisecond) // the nodes' heartbeats are periodic: nothing to wait on
	}
}
