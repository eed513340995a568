package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/msgqueue/storetest"
)

// TestConformance runs the msgqueue.Store suite on a fresh file per test;
// every Store the suite opens for a test is on that file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() (storetest.Store, error) {
		path := filepath.Join(t.TempDir(), FileName)
		return func() (storetest.Store, error) { return Open(context.Background(), path) }
	})
}
