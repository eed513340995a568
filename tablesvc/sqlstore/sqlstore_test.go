package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/storetest"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
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

// TestConformance runs the tablesvc.Store suite on a fresh file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) tablesvc.Store {
		return open(t, filepath.Join(t.TempDir(), FileName))
	})
}

// TestShared runs the cross-instance suite on two Stores opened on one
// file, as two processes would.
func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (tablesvc.Store, tablesvc.Store) {
		path := filepath.Join(t.TempDir(), FileName)
		return open(t, path), open(t, path)
	})
}
