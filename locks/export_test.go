package locks

import (
	"context"
	"os"
	"testing"
)

// OpenSuiteTable opens a Table on path for the lockstest suite on SQLite
// (lockstest_test.go) as openTable does: the lock audit's knob read from
// the environment (TestLockAudit's child runs), the Table closed at
// cleanup, reads for update without their key lock failing t. kill is
// the suite's Process.Kill: crash (the owner's flock and file go, its
// rows stay), its connections then closed at cleanup without Close's
// cleanup, as holdingOwner and TestLiveOwnersStay did before the move.
func OpenSuiteTable(t *testing.T, path string, opts Options) (tab *Table, kill func(testing.TB)) {
	t.Helper()
	if opts.skipKeyLock == "" {
		opts.skipKeyLock = os.Getenv(skipKeyLockEnv)
	}
	tab, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	killed := false
	t.Cleanup(func() {
		if killed {
			tab.db.Close()
		} else if err := tab.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := tab.auditFailures.Load(); n > 0 {
			t.Errorf("lock audit: %d reads for update without their key lock (see the log)", n)
		}
	})
	return tab, func(tb testing.TB) {
		tb.Helper()
		crash(tb, tab)
		killed = true
	}
}
