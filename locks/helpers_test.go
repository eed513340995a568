package locks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// skipKeyLockEnv names the decision whose key lock the Tables of this test
// process leave out (Options.skipKeyLock): set only by TestLockAudit for
// the child processes it runs the spec tests in.
const skipKeyLockEnv = "BLOBSHARE_LOCKS_TEST_SKIP_KEY_LOCK"

// requireAudit skips a test of the lock audit in a benchmark run (go test
// -bench), where Tables do not audit (auditKeyLocks).
func requireAudit(tb testing.TB, tab *Table) {
	tb.Helper()
	if !tab.audit {
		if !auditKeyLocks() {
			tb.Skip("a benchmark run: Tables do not audit key locks")
		}
		tb.Fatal("a Table opened in a test run does not audit its key locks")
	}
}

// openTable opens a Table on a fresh database in t's temp dir, or on path
// when given, and closes it at cleanup. Every read-for-update is audited
// (test runs): a read that found its key unlocked fails the test, even
// where the decision's error was swallowed.
func openTable(tb testing.TB, path string, opts Options) *Table {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "locks.db")
	}
	if opts.skipKeyLock == "" {
		opts.skipKeyLock = os.Getenv(skipKeyLockEnv)
	}
	tab, err := Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := tab.Close(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
		if n := tab.auditFailures.Load(); n > 0 {
			tb.Errorf("lock audit: %d reads for update without their key lock (see the log)", n)
		}
	})
	return tab
}

// open opens a handle in its own transaction.
func open(tb testing.TB, tab *Table, req OpenRequest) (Handle, error) {
	tb.Helper()
	var h Handle
	err := tab.Update(context.Background(), func(tx *Tx) error {
		var err error
		h, err = tx.OpenHandle(req)
		return err
	})
	return h, err
}

func mustOpen(tb testing.TB, tab *Table, req OpenRequest) Handle {
	tb.Helper()
	h, err := open(tb, tab, req)
	if err != nil {
		tb.Fatalf("OpenHandle(%+v): %v", req, err)
	}
	return h
}

func closeH(tb testing.TB, tab *Table, id HandleID) (CloseResult, error) {
	tb.Helper()
	var r CloseResult
	err := tab.Update(context.Background(), func(tx *Tx) error {
		var err error
		r, err = tx.CloseHandle(id)
		return err
	})
	return r, err
}

func mustClose(tb testing.TB, tab *Table, id HandleID) CloseResult {
	tb.Helper()
	r, err := closeH(tb, tab, id)
	if err != nil {
		tb.Fatalf("CloseHandle(%d): %v", id, err)
	}
	return r
}

func update(tb testing.TB, tab *Table, fn func(tx *Tx) error) error {
	tb.Helper()
	return tab.Update(context.Background(), fn)
}

func view(tb testing.TB, tab *Table, fn func(tx *Tx) error) error {
	tb.Helper()
	return tab.View(context.Background(), fn)
}

func checkREST(tb testing.TB, tab *Table, req RESTRequest) error {
	tb.Helper()
	return tab.View(context.Background(), func(tx *Tx) error { return tx.CheckREST(req) })
}

// errIs reports whether err matches want (nil want: err must be nil).
func errIs(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// leaseCode returns the LeaseCode of err, or "".
func leaseCode(err error) LeaseCode {
	var le *LeaseError
	if errors.As(err, &le) {
		return le.Code
	}
	return ""
}

// crash simulates the death of tab's process without its cleanup: the
// heartbeat stops and the owner's flock and file go; its rows stay. The
// database connections stay open for the caller to close.
func crash(tb testing.TB, tab *Table) {
	tb.Helper()
	close(tab.hbStop)
	tab.hbCancel()
	<-tab.hbDone
	tab.hbStop = nil
	if err := tab.sess.Load().lock.Release(); err != nil {
		tb.Fatal(err)
	}
}
