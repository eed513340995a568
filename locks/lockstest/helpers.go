package lockstest

import (
	"context"
	"errors"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// openTable opens a Table on db (a new process on the test's database).
// The engine's Opener closes it at cleanup and fails the test if a read
// for update found its key unlocked.
func openTable(t *testing.T, db Opener, opts locks.Options) *locks.Table {
	t.Helper()
	return db(t, opts).Table
}

// open opens a handle in its own transaction.
func open(tb testing.TB, tab *locks.Table, req locks.OpenRequest) (locks.Handle, error) {
	tb.Helper()
	var h locks.Handle
	err := tab.Update(context.Background(), func(tx *locks.Tx) error {
		var err error
		h, err = tx.OpenHandle(req)
		return err
	})
	return h, err
}

func mustOpen(tb testing.TB, tab *locks.Table, req locks.OpenRequest) locks.Handle {
	tb.Helper()
	h, err := open(tb, tab, req)
	if err != nil {
		tb.Fatalf("OpenHandle(%+v): %v", req, err)
	}
	return h
}

func closeH(tb testing.TB, tab *locks.Table, id locks.HandleID) (locks.CloseResult, error) {
	tb.Helper()
	var r locks.CloseResult
	err := tab.Update(context.Background(), func(tx *locks.Tx) error {
		var err error
		r, err = tx.CloseHandle(id)
		return err
	})
	return r, err
}

func mustClose(tb testing.TB, tab *locks.Table, id locks.HandleID) locks.CloseResult {
	tb.Helper()
	r, err := closeH(tb, tab, id)
	if err != nil {
		tb.Fatalf("CloseHandle(%d): %v", id, err)
	}
	return r
}

func update(tb testing.TB, tab *locks.Table, fn func(tx *locks.Tx) error) error {
	tb.Helper()
	return tab.Update(context.Background(), fn)
}

func view(tb testing.TB, tab *locks.Table, fn func(tx *locks.Tx) error) error {
	tb.Helper()
	return tab.View(context.Background(), fn)
}

func checkREST(tb testing.TB, tab *locks.Table, req locks.RESTRequest) error {
	tb.Helper()
	return tab.View(context.Background(), func(tx *locks.Tx) error { return tx.CheckREST(req) })
}

// errIs reports whether err matches want (nil want: err must be nil).
func errIs(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// leaseCode returns the LeaseCode of err, or "".
func leaseCode(err error) locks.LeaseCode {
	var le *locks.LeaseError
	if errors.As(err, &le) {
		return le.Code
	}
	return ""
}
