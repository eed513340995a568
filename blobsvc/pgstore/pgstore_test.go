package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/storetest"
	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/internal/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

// process opens a store on conn as one node: a pool, a node registered in
// the schema's registry (heartbeats slow: the test decides deaths) and
// the store with that node as its owner session. Kill removes the node's
// row behind its back (dead to the others at once, as a SIGKILL ends its
// session) while its store keeps running and its node has not noticed,
// as a stopped process that wakes would: a zombie that is not yet fenced
// (its next heartbeat is a minute away), whose writes the claim tokens
// alone must stop. Cleanup closes the node.
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
	kill := func() {
		if _, err := pool.Exec(ctx, `DELETE FROM meta_nodes WHERE id = $1`, node.ID()); err != nil {
			t.Errorf("kill node %s: %v", node.ID(), err)
		}
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
	return storetest.Process{Store: s, Owner: node.ID(), Kill: kill}
}

// TestConformance runs blobsvc/storetest on PostgreSQL: each process a
// store on one fresh schema with a node of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		conn := pg.Schema(t)
		return func(t *testing.T) storetest.Process { return process(t, conn) }
	})
}

// TestLeftClaimsReleased: a claim whose release failed (here: its
// context ended; in production the database was away) stays held by its
// owner, which is alive, so no other node could ever take it; the store
// deletes it at its next claim, or within releaseRetryInterval in the
// background, and the other node's claim succeeds.
func TestLeftClaimsReleased(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	p1, p2 := process(t, conn), process(t, conn)
	if err := p1.Store.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	leave := func(name string) {
		t.Helper()
		c, err := p1.Store.ClaimBlob(ctx, "box", name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p1.Store.ReleaseClaim(gone, c); err == nil {
			t.Fatal("a release with an ended context succeeded: the test proves nothing")
		}
		var held *blobsvc.ClaimHeldError
		if _, err := p2.Store.ClaimBlob(ctx, "box", name); !errors.As(err, &held) || held.Owner != p1.Owner {
			t.Fatalf("claim of %s after the failed release: %v, want held by %s", name, err, p1.Owner)
		}
	}

	leave("x")
	if _, err := p1.Store.ClaimBlob(ctx, "box", "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Store.ClaimBlob(ctx, "box", "x"); err != nil {
		t.Fatalf("claim of x after its owner's next claim: %v", err)
	}

	leave("z")
	began := time.Now()
	for {
		_, err := p2.Store.ClaimBlob(ctx, "box", "z")
		if err == nil {
			break
		}
		if !errors.Is(err, blobsvc.ErrClaimHeld) {
			t.Fatal(err)
		}
		if time.Since(began) > 10*releaseRetryInterval {
			t.Fatalf("the left claim is still held %v later", time.Since(began))
		}
		time.Sleep(10 * time.Millisecond) // the retry is periodic: nothing to wait on
	}
	t.Logf("a left claim was released in the background after %v", time.Since(began))
}

// TestContentStore: the first node's content store is recorded (a key=
// credential left out); a node naming none gets it, one naming it (in
// another spelling, or with its key) keeps its own URL, one naming
// another is refused with ErrContentMismatch, naming both and no key.
func TestContentStore(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	for _, tc := range []struct {
		proposed, fallback, want string
		mismatch                 bool
	}{
		{"file:///shared/content/", "file:///node0/blobs", "file:///shared/content/", false},
		{"", "file:///node1/blobs", "file:///shared/content", false},
		{"file://localhost/shared/./content", "", "file://localhost/shared/./content", false},
		{"file:///node2/blobs", "", "", true},
	} {
		got, err := ContentStore(ctx, conn, tc.proposed, tc.fallback)
		if tc.mismatch {
			if !errors.Is(err, ErrContentMismatch) || !strings.Contains(err.Error(), "file:///shared/content") || !strings.Contains(err.Error(), tc.proposed) {
				t.Errorf("ContentStore(%q): %v, want ErrContentMismatch naming both stores", tc.proposed, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ContentStore(%q, %q) = %q, %v; want %q", tc.proposed, tc.fallback, got, err, tc.want)
		}
	}

	conn = pg.Schema(t)
	withKey := "azure://acct/box?endpoint=http%3A%2F%2F127.0.0.1%3A10000%2Facct&key=SECRET"
	if got, err := ContentStore(ctx, conn, withKey, "file:///node0/blobs"); err != nil || got != withKey {
		t.Fatalf("first azure node: %q %v", got, err)
	}
	if got, err := ContentStore(ctx, conn, "", "file:///node1/blobs"); err != nil || got != "azure://acct/box?endpoint=http%3A%2F%2F127.0.0.1%3A10000%2Facct" {
		t.Errorf("recorded azure store: %q %v, want it without its key", got, err)
	}
	other := "azure://acct/other?key=SECRET"
	if _, err := ContentStore(ctx, conn, other, ""); !errors.Is(err, ErrContentMismatch) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("another azure container: %v, want ErrContentMismatch without the key", err)
	}
}
