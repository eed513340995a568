package local

import (
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/storetest"
)

func newTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Test(t, func(t *testing.T) blobstore.Store { return newTestStore(t) })
}
