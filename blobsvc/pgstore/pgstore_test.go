package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobsvc/storetest"
	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/internal/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// process opens a store on conn as one node: a pool, a node registered in
// the schema's registry (heartbeats slow: the test decides deaths) and
// the store with that node as its owner session. Kill removes the node
// (dead to the others at once, as a SIGKILL ends its session) while its
// store keeps running, as a stopped process that wakes would.
func process(t *testing.T, conn string) storetest.Process {
	t.Helper()
	ctx := context.Background()
	pool, schema, err := pgdb.Open(ctx, conn, pgdb.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	node, err := pgdb.RegisterNode(ctx, pool, schema, pgdb.NodeInfo{Host: "test", PID: 1, Program: "pgstore test"},
		pgdb.NodeOptions{Heartbeat: time.Minute, Expiry: time.Hour})
	if err != nil {
		pool.Close()
		t.Fatal(err)
	}
	var once sync.Once
	leave := func() {
		once.Do(func() {
			if err := node.Close(ctx); err != nil {
				t.Errorf("node %s: %v", node.ID(), err)
			}
		})
	}
	s, err := Open(ctx, conn, Options{MaxConns: 8, Owners: node})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		leave()
		pool.Close()
	})
	return storetest.Process{Store: s, Owner: node.ID(), Kill: leave}
}

// TestConformance runs blobsvc/storetest on PostgreSQL: each process a
// store on one fresh schema with a node of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		conn := pg.Schema(t)
		return func(t *testing.T) storetest.Process { return process(t, conn) }
	})
}
