package lockstest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// holdingOwner opens a Table on db that holds one handle on file; its
// crash returned "kills" it (Process.Kill): its owner session is dead (as
// when the kernel drops the flock of a SIGKILLed process) while its rows
// stay.
func holdingOwner(t *testing.T, db Opener, file locks.FileID, doc bool) (locks.Handle, func()) {
	t.Helper()
	p := db(t, locks.Options{})
	c := p.Table
	acc := rd
	if doc {
		acc |= locks.AccessDelete
	}
	h := mustOpen(t, c, locks.OpenRequest{File: file, Access: acc, Share: locks.ShareAll, DeleteOnClose: doc})
	return h, func() { p.Kill(t) }
}

// ForceClose of a live handle after listing works as before; a dead
// owner's handle id is simply gone (false, nil).
func testForceCloseAfterDeadOwner(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	a := openTable(t, db, locks.Options{})
	f := newFile()
	mine := mustOpen(t, a, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
	dead, crash := holdingOwner(t, db, f, false)
	crash()
	var closed []locks.HandleID
	must(t, a.Update(t.Context(), func(tx *locks.Tx) error {
		closed = closed[:0]
		hs, err := tx.Handles(f)
		if err != nil {
			return err
		}
		for _, h := range hs {
			ok, err := tx.ForceClose(h.ID)
			if err != nil {
				return err
			}
			if ok {
				closed = append(closed, h.ID)
			}
		}
		ok, err := tx.ForceClose(dead.ID)
		if err != nil || ok {
			t.Errorf("ForceClose(dead %d) = %v, %v; want false, nil", dead.ID, ok, err)
		}
		return nil
	}))
	if !slices.Equal(closed, []locks.HandleID{mine.ID}) {
		t.Fatalf("force-closed %v, want [%d]", closed, mine.ID)
	}
}

// CheckRESTLease decides exactly as CheckREST and reports the lease status
// LeaseInfo reports, from the same read.
func testCheckRESTLease(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	leased, free, held := newFile(), newFile(), newFile()
	var id string
	must(t, tab.Update(t.Context(), func(tx *locks.Tx) error {
		var err error
		id, err = tx.Lease(locks.LeaseRequest{File: leased, Action: locks.LeaseAcquire, ProposedID: "11111111-1111-1111-1111-111111111111"})
		return err
	}))
	mustOpen(t, tab, locks.OpenRequest{File: held, Access: rd | wr, Share: locks.ShareNone})
	for _, tc := range []struct {
		name string
		req  locks.RESTRequest
	}{
		{"leased, properties", locks.RESTRequest{File: leased, Op: locks.OpGetProperties}},
		{"leased, write without id", locks.RESTRequest{File: leased, Op: locks.OpPutRange, Range: locks.Range{Offset: 0, Length: 1}}},
		{"leased, write with id", locks.RESTRequest{File: leased, Op: locks.OpPutRange, Range: locks.Range{Offset: 0, Length: 1}, LeaseID: id}},
		{"free", locks.RESTRequest{File: free, Op: locks.OpGetProperties}},
		{"held, read", locks.RESTRequest{File: held, Op: locks.OpGetFile, Range: locks.WholeFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, tab.View(t.Context(), func(tx *locks.Tx) error {
				want := tx.CheckREST(tc.req)
				wantInfo, err := tx.LeaseInfo(tc.req.File)
				if err != nil {
					return err
				}
				info, got := tx.CheckRESTLease(tc.req)
				if (got == nil) != (want == nil) || (want != nil && got.Error() != want.Error()) {
					t.Errorf("CheckRESTLease err %v, CheckREST %v", got, want)
				}
				if got == nil && info != wantInfo {
					t.Errorf("lease %+v, LeaseInfo %+v", info, wantInfo)
				}
				return nil
			}))
		})
	}
}

// CheckIO's one-statement path (this Table's own handles) answers as the
// general path does (another Table's handle id), in Views and Updates, and
// a stale id hint (the handle force-closed by another owner) is
// ErrHandleClosed.
func testCheckIOPaths(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	a := openTable(t, db, locks.Options{})
	b := openTable(t, db, locks.Options{})
	f := newFile()
	ha := mustOpen(t, a, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	hb := mustOpen(t, b, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	lockOn := func(tab *locks.Table, id locks.HandleID, r locks.Range, k locks.LockKind) {
		must(t, tab.Update(t.Context(), func(tx *locks.Tx) error { return tx.Lock(id, r, k) }))
	}
	lockOn(a, ha.ID, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive)
	lockOn(b, hb.ID, locks.Range{Offset: 100, Length: 10}, locks.LockShared)
	for _, tc := range []struct {
		name  string
		r     locks.Range
		write bool
		wantA error // through a's own handle (fast path)
	}{
		{"own exclusive lock, write", locks.Range{Offset: 0, Length: 10}, true, nil},
		{"other's shared lock, read", locks.Range{Offset: 100, Length: 1}, false, nil},
		{"other's shared lock, write", locks.Range{Offset: 105, Length: 10}, true, locks.ErrLockConflict},
		{"no lock", locks.Range{Offset: 50, Length: 10}, true, nil},
		{"zero length inside a lock", locks.Range{Offset: 105, Length: 0}, true, nil},
		{"past 2^64-1", locks.Range{Offset: 1 << 63, Length: 1<<63 + 1}, false, locks.ErrInvalidLockRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, run := range []func(context.Context, func(*locks.Tx) error) error{a.View, a.Update} {
				err := run(t.Context(), func(tx *locks.Tx) error { return tx.CheckIO(ha.ID, tc.r, tc.write) })
				if !errIs(err, tc.wantA) {
					t.Fatalf("own handle: %v, want %v", err, tc.wantA)
				}
			}
			// The same id through b (no hint there: the general path).
			err := b.View(t.Context(), func(tx *locks.Tx) error { return tx.CheckIO(ha.ID, tc.r, tc.write) })
			if !errIs(err, tc.wantA) {
				t.Fatalf("general path: %v, want %v", err, tc.wantA)
			}
		})
	}
	must(t, b.Update(t.Context(), func(tx *locks.Tx) error { _, err := tx.ForceClose(ha.ID); return err }))
	err := a.View(t.Context(), func(tx *locks.Tx) error { return tx.CheckIO(ha.ID, locks.Range{Offset: 0, Length: 1}, false) })
	if !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("force-closed own handle: %v, want ErrHandleClosed", err)
	}
}
