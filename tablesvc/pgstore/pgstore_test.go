package pgstore

import (
	"context"
	"testing"

	"github.com/blobshare/blobshare/internal/pgtest"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/storetest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { pgtest.Main(m, pg) }

func open(t *testing.T, conn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestConformance runs the tablesvc.Store suite on a fresh schema.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tablesvc.Store { return open(t, pg.Schema(t)) })
}

// TestShared runs the cross-instance suite on two Stores (two pools, as
// two gateways) on one schema.
func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (tablesvc.Store, tablesvc.Store) {
		conn := pg.Schema(t)
		return open(t, conn), open(t, conn)
	})
}
