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
// within its visibility timeout (load.check); both nodes are still
// registered, alive, under their ids (status --meta).
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
	// The node registry: both nodes still alive under the ids they had
	// (a restart shorter than the expiry renews their heartbeats).
	if after := statusNodes(t, metaURL(t, conn)); len(after) != 2 || len(registered) != 2 ||
		after[0].ID != registered[0].ID || after[1].ID != registered[1].ID || !after[0].Alive || !after[1].Alive {
		t.Errorf("registered nodes %+v before the restarts, %+v after", registered, after)
	}
}
