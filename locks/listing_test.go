package locks

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// holdingOwner opens a Table on path that holds one handle on file; its
// crash returned "kills" it: the owner lock file goes (as when the kernel
// drops the flock of a SIGKILLed process) while its rows stay.
func holdingOwner(t *testing.T, path string, file FileID, doc bool) (Handle, func()) {
	t.Helper()
	c, err := Open(t.Context(), path, Options{})
	must(t, err)
	t.Cleanup(func() { c.db.Close() })
	acc := rd
	if doc {
		acc |= AccessDelete
	}
	h := mustOpen(t, c, OpenRequest{File: file, Access: acc, Share: ShareAll, DeleteOnClose: doc})
	return h, func() { crash(t, c) }
}

// Listing handles never shows a dead owner's handle, whether the listing
// is the first request after the crash (nothing else reaped yet) and
// whether it runs in a View or an Update; an Update reaps the dead owner in
// the same transaction, a View reaps it before it answers.
func TestListingSkipsDeadOwners(t *testing.T) {
	list := map[string]struct {
		fn func(tx *Tx, f FileID) ([]Handle, error)
		// all: the listing covers the whole table (both dead owners are
		// met); otherwise only the owner with a handle on f is.
		all bool
	}{
		"Handles":    {func(tx *Tx, f FileID) ([]Handle, error) { return tx.Handles(f) }, false},
		"AllHandles": {func(tx *Tx, _ FileID) ([]Handle, error) { return tx.AllHandles() }, true},
	}
	for name, c := range list {
		for _, write := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/View", true: "/Update"}[write], func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "locks.db")
				rm := &removeLog{}
				a := openTable(t, path, Options{Remove: rm.remove})
				f, g := newFile(), newFile()
				mine := mustOpen(t, a, OpenRequest{File: f, Access: rd, Share: ShareAll})
				dead, crash1 := holdingOwner(t, path, f, false)
				_, crash2 := holdingOwner(t, path, g, true) // delete-on-close: g goes with its owner
				crash1()
				crash2()

				var hs []Handle
				run := a.View
				if write {
					run = a.Update
				}
				must(t, run(t.Context(), func(tx *Tx) error {
					var err error
					hs, err = c.fn(tx, f)
					return err
				}))
				ids := make([]HandleID, len(hs))
				for i, h := range hs {
					ids[i] = h.ID
				}
				if !slices.Equal(ids, []HandleID{mine.ID}) {
					t.Fatalf("listed %v, want only the live handle %d (dead %d)", ids, mine.ID, dead.ID)
				}
				// Either way the dead owners met are gone from the table now.
				var left int
				must(t, a.View(t.Context(), func(tx *Tx) error {
					return tx.queryRow(`SELECT count(*) FROM lk_handles WHERE owner != ?`, []any{string(a.Owner())}, &left)
				}))
				// An Update reaps the owners its listing met; a View that met
				// one reaps every dead owner (ReapDeadOwners) and runs again.
				wantLeft, wantRemoved := 1, []FileID(nil) // the owner on g was not met
				if c.all || !write {
					wantLeft, wantRemoved = 0, []FileID{g} // delete-on-close ran
				}
				if left != wantLeft {
					t.Fatalf("%d dead handles left in the table, want %d", left, wantLeft)
				}
				if removed := rm.removed(); !slices.Equal(removed, wantRemoved) {
					t.Fatalf("removed %v, want %v", removed, wantRemoved)
				}
			})
		}
	}
}

// ForceClose of a live handle after listing works as before; a dead
// owner's handle id is simply gone (false, nil).
func TestForceCloseAfterDeadOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	f := newFile()
	mine := mustOpen(t, a, OpenRequest{File: f, Access: rd, Share: ShareAll})
	dead, crash := holdingOwner(t, path, f, false)
	crash()
	var closed []HandleID
	must(t, a.Update(t.Context(), func(tx *Tx) error {
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
	if !slices.Equal(closed, []HandleID{mine.ID}) {
		t.Fatalf("force-closed %v, want [%d]", closed, mine.ID)
	}
}

// CheckRESTLease decides exactly as CheckREST and reports the lease status
// LeaseInfo reports, from the same read.
func TestCheckRESTLease(t *testing.T) {
	tab := openTable(t, "", Options{})
	leased, free, held := newFile(), newFile(), newFile()
	var id string
	must(t, tab.Update(t.Context(), func(tx *Tx) error {
		var err error
		id, err = tx.Lease(LeaseRequest{File: leased, Action: LeaseAcquire, ProposedID: "11111111-1111-1111-1111-111111111111"})
		return err
	}))
	mustOpen(t, tab, OpenRequest{File: held, Access: rd | wr, Share: ShareNone})
	for _, tc := range []struct {
		name string
		req  RESTRequest
	}{
		{"leased, properties", RESTRequest{File: leased, Op: OpGetProperties}},
		{"leased, write without id", RESTRequest{File: leased, Op: OpPutRange, Range: Range{0, 1}}},
		{"leased, write with id", RESTRequest{File: leased, Op: OpPutRange, Range: Range{0, 1}, LeaseID: id}},
		{"free", RESTRequest{File: free, Op: OpGetProperties}},
		{"held, read", RESTRequest{File: held, Op: OpGetFile, Range: WholeFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, tab.View(t.Context(), func(tx *Tx) error {
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
func TestCheckIOPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	b := openTable(t, path, Options{})
	f := newFile()
	ha := mustOpen(t, a, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	hb := mustOpen(t, b, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	lockOn := func(tab *Table, id HandleID, r Range, k LockKind) {
		must(t, tab.Update(t.Context(), func(tx *Tx) error { return tx.Lock(id, r, k) }))
	}
	lockOn(a, ha.ID, Range{0, 10}, LockExclusive)
	lockOn(b, hb.ID, Range{100, 10}, LockShared)
	for _, tc := range []struct {
		name  string
		r     Range
		write bool
		wantA error // through a's own handle (fast path)
	}{
		{"own exclusive lock, write", Range{0, 10}, true, nil},
		{"other's shared lock, read", Range{100, 1}, false, nil},
		{"other's shared lock, write", Range{105, 10}, true, ErrLockConflict},
		{"no lock", Range{50, 10}, true, nil},
		{"zero length inside a lock", Range{105, 0}, true, nil},
		{"past 2^64-1", Range{1 << 63, 1<<63 + 1}, false, ErrInvalidLockRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, run := range []func(context.Context, func(*Tx) error) error{a.View, a.Update} {
				err := run(t.Context(), func(tx *Tx) error { return tx.CheckIO(ha.ID, tc.r, tc.write) })
				if !errIs(err, tc.wantA) {
					t.Fatalf("own handle: %v, want %v", err, tc.wantA)
				}
			}
			// The same id through b (no hint there: the general path).
			err := b.View(t.Context(), func(tx *Tx) error { return tx.CheckIO(ha.ID, tc.r, tc.write) })
			if !errIs(err, tc.wantA) {
				t.Fatalf("general path: %v, want %v", err, tc.wantA)
			}
		})
	}
	must(t, b.Update(t.Context(), func(tx *Tx) error { _, err := tx.ForceClose(ha.ID); return err }))
	err := a.View(t.Context(), func(tx *Tx) error { return tx.CheckIO(ha.ID, Range{0, 1}, false) })
	if !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("force-closed own handle: %v, want ErrHandleClosed", err)
	}
}
