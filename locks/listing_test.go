package locks

import (
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
