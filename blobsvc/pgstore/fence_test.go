package pgstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/meta"
)

// switchedFence is a registered node whose fence the test throws by
// hand (when a real node fences itself is pgdb's TestNodeFencing).
type switchedFence struct {
	*pgdb.Node
	fenced atomic.Bool
}

func (f *switchedFence) Deciding() error {
	if f.fenced.Load() {
		return pgdb.ErrFenced
	}
	return f.Node.Deciding()
}

// TestFencedNodeDecidesNothing: while its node is fenced, a store takes
// no claim and makes no write under a claim it holds (ErrServerBusy,
// meta.ErrUnavailable: 503 ServerBusy), and the blob keeps what it had;
// once the fence is lifted the same claim writes again.
func TestFencedNodeDecidesNothing(t *testing.T) {
	ctx := context.Background()
	conn := pg.Schema(t)
	pool, schema, err := pgdb.Open(ctx, conn, pgdb.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	node, err := pgdb.RegisterNode(ctx, pool, schema, pgdb.NodeInfo{Host: "test", PID: 1, Program: "pgstore test"},
		pgdb.NodeOptions{Heartbeat: time.Minute, Expiry: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close(ctx)
	owners := &switchedFence{Node: node}
	s, err := Open(ctx, conn, Options{MaxConns: 4, Owners: owners})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateContainer(ctx, blobsvc.Container{Name: "box", ETag: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "e1"}, false); err != nil {
		t.Fatal(err)
	}
	c, err := s.ClaimBlob(ctx, "box", "x")
	if err != nil {
		t.Fatal(err)
	}

	owners.fenced.Store(true)
	busy := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, blobsvc.ErrServerBusy) || !errors.Is(err, meta.ErrUnavailable) {
			t.Errorf("%s while fenced: %v, want ErrServerBusy (meta.ErrUnavailable)", what, err)
		}
	}
	_, err = s.ClaimBlob(ctx, "box", "y")
	busy("claim", err)
	busy("write under a claim", s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "e2"}, false))
	busy("intent under a claim", s.PutIntent(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "e2"}, false))
	if b, err := s.Blob(ctx, "box", "x"); err != nil || b.ETag != "e1" {
		t.Errorf("x after fenced writes: %+v %v, want ETag e1", b, err)
	}
	if _, ok, err := s.Intent(ctx, "box", "x"); ok || err != nil {
		t.Errorf("an intent recorded while fenced: %v %v", ok, err)
	}

	owners.fenced.Store(false)
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "x", ETag: "e3"}, false); err != nil {
		t.Errorf("write under the claim once deciding again: %v", err)
	}
	if err := s.ReleaseClaim(ctx, c); err != nil {
		t.Fatal(err)
	}
}
