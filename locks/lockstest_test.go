package locks_test

import (
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/locks/lockstest"
)

// TestConformance runs the lock table's conformance suite (locks/lockstest)
// on SQLite: each database a fresh file in the test's temp dir, each
// process a Table of its own on it (its own connections, owner session and
// flock), killed as a SIGKILLed process would be.
func TestConformance(t *testing.T) {
	lockstest.Run(t, func(t *testing.T) lockstest.Opener {
		path := filepath.Join(t.TempDir(), "locks.db")
		return func(t *testing.T, opts locks.Options) lockstest.Process {
			tab, kill := locks.OpenSuiteTable(t, path, opts)
			return lockstest.Process{Table: tab, Kill: kill}
		}
	})
}
