package locks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
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

// Helpers shared with the lockstest suite (locks/lockstest/spec.go,
// spec2.go, misc.go, model.go keep their own copies): the tests that stay
// here (SQLite-only, the caching tests) use them too.

// fileSeq hands out fresh file ids within one test binary run.
var fileSeq atomic.Uint64

func newFile() FileID { return FileID(1_000_000 + fileSeq.Add(1)) }

const (
	rd   = AccessRead
	wr   = AccessWrite
	ap   = AccessAppend
	ex   = AccessExecute
	del  = AccessDelete
	attr = AccessReadAttributes
)

// removeLog records the files Options.Remove was called for.
type removeLog struct {
	mu    sync.Mutex // Remove may run in another Table's goroutine
	files []FileID
	fail  error
}

func (r *removeLog) remove(_ context.Context, tx *Conn, f FileID) error {
	if tx == nil {
		return errors.New("remove without a transaction")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.files = append(r.files, f)
	return nil
}

// removed returns the files removed so far, in order.
func (r *removeLog) removed() []FileID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.files)
}

func pending(t *testing.T, tab *Table, f FileID) bool {
	t.Helper()
	var p bool
	if err := tab.View(context.Background(), func(tx *Tx) error {
		var err error
		p, err = tx.DeletePending(f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func lock(t *testing.T, tab *Table, id HandleID, r Range, k LockKind) error {
	t.Helper()
	return update(t, tab, func(tx *Tx) error { return tx.Lock(id, r, k) })
}

func checkIO(t *testing.T, tab *Table, id HandleID, r Range, write bool) error {
	t.Helper()
	return update(t, tab, func(tx *Tx) error { return tx.CheckIO(id, r, write) })
}

// noConflictingHandles checks, inside a transaction, that no two handles on
// file conflict (the reference model's check).
func noConflictingHandles(tx *Tx, file FileID) error {
	hs, err := tx.Handles(file)
	if err != nil {
		return err
	}
	for i, a := range hs {
		for _, b := range hs[i+1:] {
			if mConflict(a.Access, a.Share, b.Access, b.Share) {
				return fmt.Errorf("conflicting handles in the table: %+v and %+v", a, b)
			}
		}
	}
	return nil
}

// classes: which of Read, Write, Delete an access uses / a share allows.
func uses(a Access) [3]bool {
	return [3]bool{a&AccessRead != 0 || a&AccessExecute != 0, a&AccessWrite != 0 || a&AccessAppend != 0, a&AccessDelete != 0}
}

func allows(s ShareMode) [3]bool {
	return [3]bool{s&ShareRead != 0, s&ShareWrite != 0, s&ShareDelete != 0}
}

func anyOf(b [3]bool) bool { return b[0] || b[1] || b[2] }

// mConflict: two opens with data access conflict when either uses a class
// the other does not allow.
func mConflict(a Access, as ShareMode, b Access, bs ShareMode) bool {
	ua, ub := uses(a), uses(b)
	if !anyOf(ua) || !anyOf(ub) {
		return false
	}
	aa, ab := allows(as), allows(bs)
	for k := 0; k < 3; k++ {
		if (ua[k] && !ab[k]) || (ub[k] && !aa[k]) {
			return true
		}
	}
	return false
}
