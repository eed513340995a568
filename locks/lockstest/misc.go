package lockstest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// Many goroutines on two Tables (two owners) over one file: no two
// conflicting opens are ever held at the same time. A goroutine registers
// its handle after the grant and unregisters before the close, so any two
// registered handles were open together in the table.
func testConcurrentOpensNeverConflict(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	tabs := []*locks.Table{openTable(t, db, locks.Options{}), openTable(t, db, locks.Options{})}
	accesses := []locks.Access{rd, wr, del, rd | wr, attr, rd | wr | del}
	shares := []locks.ShareMode{locks.ShareNone, locks.ShareRead, locks.ShareWrite, locks.ShareRead | locks.ShareWrite, locks.ShareAll, locks.ShareAll}
	var (
		mu      sync.Mutex
		held    = map[locks.HandleID]locks.Handle{}
		granted int
		refused int
	)
	const goroutines, iters = 8, 60
	var wg sync.WaitGroup
	errc := make(chan error, 2*goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			tab := tabs[g%2]
			// Each goroutine keeps its last granted handle open while it
			// asks for the next one, so handles of different goroutines
			// overlap in time and refusals are certain.
			var prev *locks.Handle
			release := func() error {
				if prev == nil {
					return nil
				}
				mu.Lock()
				delete(held, prev.ID)
				mu.Unlock()
				id := prev.ID
				prev = nil
				return tab.Update(context.Background(), func(tx *locks.Tx) error { _, err := tx.CloseHandle(id); return err })
			}
			defer func() {
				if err := release(); err != nil {
					errc <- err
				}
			}()
			for range iters {
				req := locks.OpenRequest{File: 1, Access: accesses[rng.IntN(len(accesses))], Share: shares[rng.IntN(len(shares))]}
				var h locks.Handle
				err := tab.Update(context.Background(), func(tx *locks.Tx) error {
					var err error
					if h, err = tx.OpenHandle(req); err != nil {
						return err
					}
					return noConflictingHandles(tx, 1)
				})
				if errors.Is(err, locks.ErrSharingViolation) {
					mu.Lock()
					refused++
					mu.Unlock()
					if err := release(); err != nil {
						errc <- err
						return
					}
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				granted++
				for _, o := range held {
					if mConflict(o.Access, o.Share, h.Access, h.Share) {
						mu.Unlock()
						errc <- fmt.Errorf("conflicting opens held together: %+v and %+v", o, h)
						return
					}
				}
				held[h.ID] = h
				mu.Unlock()
				if err := release(); err != nil {
					errc <- err
					return
				}
				prev = &h
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if granted == 0 || refused == 0 {
		t.Fatalf("granted %d refused %d: the test did not exercise both outcomes", granted, refused)
	}
	t.Logf("granted %d, refused %d", granted, refused)
}

// Bad input gets a typed error, never a panic.
func testBadInput(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	tab := openTable(t, db, locks.Options{})
	f := newFile()
	h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr | del, Share: locks.ShareAll})
	const unknown = locks.HandleID(1 << 50)
	const max = ^uint64(0)
	cases := []struct {
		name string
		run  func(tx *locks.Tx) error
		want error
	}{
		{"open with undefined access bits", func(tx *locks.Tx) error {
			_, err := tx.OpenHandle(locks.OpenRequest{File: f, Access: 0x80, Share: locks.ShareAll})
			return err
		}, locks.ErrInvalidParameter},
		{"open with undefined share bits", func(tx *locks.Tx) error {
			_, err := tx.OpenHandle(locks.OpenRequest{File: f, Access: rd, Share: 0x10})
			return err
		}, locks.ErrInvalidParameter},
		{"close unknown handle", func(tx *locks.Tx) error { _, err := tx.CloseHandle(unknown); return err }, locks.ErrHandleClosed},
		{"handle unknown", func(tx *locks.Tx) error { _, err := tx.Handle(unknown); return err }, locks.ErrHandleClosed},
		{"dispose unknown handle", func(tx *locks.Tx) error { return tx.Dispose(unknown, true, locks.Facts{}) }, locks.ErrHandleClosed},
		{"lock unknown handle", func(tx *locks.Tx) error { return tx.Lock(unknown, locks.Range{Offset: 0, Length: 1}, locks.LockShared) }, locks.ErrHandleClosed},
		{"unlock unknown handle", func(tx *locks.Tx) error { return tx.Unlock(unknown, locks.Range{Offset: 0, Length: 1}) }, locks.ErrHandleClosed},
		{"io unknown handle", func(tx *locks.Tx) error { return tx.CheckIO(unknown, locks.Range{Offset: 0, Length: 1}, true) }, locks.ErrHandleClosed},
		{"flock unknown handle", func(tx *locks.Tx) error { return tx.Flock(unknown, locks.LockShared) }, locks.ErrHandleClosed},
		{"posix lock unknown handle", func(tx *locks.Tx) error {
			return tx.SetPOSIXLock(unknown, 1, locks.Range{Offset: 0, Length: 1}, locks.LockShared)
		}, locks.ErrHandleClosed},
		{"posix release unknown handle", func(tx *locks.Tx) error { return tx.ReleasePOSIXLocks(unknown, 1) }, locks.ErrHandleClosed},
		{"getlk unknown handle", func(tx *locks.Tx) error {
			_, _, err := tx.GetPOSIXLock(unknown, 1, locks.Range{Offset: 0, Length: 1}, locks.LockShared)
			return err
		}, locks.ErrHandleClosed},
		{"zero-length posix lock", func(tx *locks.Tx) error {
			return tx.SetPOSIXLock(h.ID, 1, locks.Range{Offset: 5, Length: 0}, locks.LockShared)
		}, locks.ErrInvalidParameter},
		{"lock past 2^64-1", func(tx *locks.Tx) error { return tx.Lock(h.ID, locks.Range{Offset: max, Length: 2}, locks.LockShared) }, locks.ErrInvalidLockRange},
		{"io past 2^64-1", func(tx *locks.Tx) error { return tx.CheckIO(h.ID, locks.Range{Offset: max, Length: 2}, false) }, locks.ErrInvalidLockRange},
		{"rest range past 2^64-1", func(tx *locks.Tx) error {
			return tx.CheckREST(locks.RESTRequest{File: f, Op: locks.OpGetFile, Range: locks.Range{Offset: 10, Length: max}})
		}, locks.ErrInvalidLockRange},
		{"unknown lock kind", func(tx *locks.Tx) error { return tx.Lock(h.ID, locks.Range{Offset: 0, Length: 1}, 7) }, locks.ErrInvalidParameter},
		{"unlock kind as lock", func(tx *locks.Tx) error { return tx.Lock(h.ID, locks.Range{Offset: 0, Length: 1}, 0) }, locks.ErrInvalidParameter},
		{"unknown posix kind", func(tx *locks.Tx) error { return tx.SetPOSIXLock(h.ID, 1, locks.Range{Offset: 0, Length: 1}, -1) }, locks.ErrInvalidParameter},
		{"unknown REST op", func(tx *locks.Tx) error { return tx.CheckREST(locks.RESTRequest{File: f, Op: 99}) }, locks.ErrInvalidParameter},
		{"zero REST op", func(tx *locks.Tx) error { return tx.CheckREST(locks.RESTRequest{File: f}) }, locks.ErrInvalidParameter},
		{"unknown flock kind", func(tx *locks.Tx) error { return tx.Flock(h.ID, 7) }, locks.ErrInvalidParameter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := update(t, tab, c.run); !errors.Is(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
		})
	}
	t.Run("write methods in a View", func(t *testing.T) {
		err := tab.View(t.Context(), func(tx *locks.Tx) error {
			_, err := tx.OpenHandle(locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
			return err
		})
		if !errors.Is(err, locks.ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("another owner's handle is not ours to close", func(t *testing.T) {
		other := openTable(t, db, locks.Options{})
		err := update(t, other, func(tx *locks.Tx) error { _, err := tx.CloseHandle(h.ID); return err })
		if !errors.Is(err, locks.ErrHandleClosed) {
			t.Fatalf("err=%v", err)
		}
	})
}

// POSIX (fcntl) locks: replace/split/merge among one owner, §3.2 against
// others, release by key.
func testPOSIXLocks(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	tab := openTable(t, db, locks.Options{})
	other := openTable(t, db, locks.Options{})
	const k1, k2 = 101, 202
	setlk := func(tb *locks.Table, id locks.HandleID, key uint64, r locks.Range, kind locks.LockKind) error {
		return update(t, tb, func(tx *locks.Tx) error { return tx.SetPOSIXLock(id, key, r, kind) })
	}
	locksOf := func(f locks.FileID) []locks.ByteLock {
		var ls []locks.ByteLock
		must(t, tab.View(t.Context(), func(tx *locks.Tx) error { var err error; ls, err = tx.Locks(f); return err }))
		return ls
	}
	ranges := func(ls []locks.ByteLock) string {
		s := ""
		for _, l := range ls {
			s += fmt.Sprintf("%v%v ", l.Kind, l.Range)
		}
		return s
	}
	t.Run("split, upgrade in place, merge", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 0, Length: 100}, locks.LockShared))
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 40, Length: 20}, locks.LockExclusive)) // own: upgrade the middle
		if got := ranges(locksOf(f)); got != "shared[0,+40] shared[60,+40] exclusive[40,+20] " {
			t.Fatalf("after upgrade: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 45, Length: 5}, 0)) // unlock splits the exclusive piece
		if got := ranges(locksOf(f)); got != "shared[0,+40] shared[60,+40] exclusive[40,+5] exclusive[50,+10] " {
			t.Fatalf("after unlock: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 40, Length: 20}, locks.LockShared)) // downgrade merges everything back
		if got := ranges(locksOf(f)); got != "shared[0,+100] " {
			t.Fatalf("after downgrade: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 0, Length: 100}, 0))
		if ls := locksOf(f); len(ls) != 0 {
			t.Fatalf("after full unlock: %v", ls)
		}
	})
	t.Run("conflicts with other owners and keys, not with own", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		h2 := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		o := mustOpen(t, other, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive))
		// Same key through another handle of this owner: the POSIX owner's own.
		must(t, setlk(tab, h2.ID, k1, locks.Range{Offset: 5, Length: 10}, locks.LockExclusive))
		if err := setlk(tab, h.ID, k2, locks.Range{Offset: 0, Length: 1}, locks.LockShared); !errors.Is(err, locks.ErrLockNotGranted) {
			t.Fatalf("other key: %v", err)
		}
		// Same key number in another owner (process) is another lock owner.
		if err := setlk(other, o.ID, k1, locks.Range{Offset: 0, Length: 1}, locks.LockShared); !errors.Is(err, locks.ErrLockNotGranted) {
			t.Fatalf("other owner: %v", err)
		}
		var bl locks.ByteLock
		var found bool
		must(t, other.View(t.Context(), func(tx *locks.Tx) error {
			var err error
			bl, found, err = tx.GetPOSIXLock(o.ID, k1, locks.Range{Offset: 0, Length: 1}, locks.LockShared)
			return err
		}))
		if !found || bl.Kind != locks.LockExclusive || !bl.POSIX || bl.Key != k1 {
			t.Fatalf("getlk: %+v %v", bl, found)
		}
		// I/O: the POSIX owner's own locks never block its own I/O.
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.CheckIOKey(h2.ID, k1, locks.Range{Offset: 0, Length: 15}, true) }))
		if err := update(t, tab, func(tx *locks.Tx) error { return tx.CheckIOKey(h2.ID, k2, locks.Range{Offset: 0, Length: 1}, false) }); !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("io by another key: %v", err)
		}
		if err := checkIO(t, other, o.ID, locks.Range{Offset: 3, Length: 1}, false); !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("io by another owner: %v", err)
		}
		if err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpGetFile, Range: locks.Range{Offset: 0, Length: 1}}); !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("REST read over a POSIX write lock: %v", err)
		}
		// SMB lock against a POSIX lock follows §3.2 too.
		if err := lock(t, other, o.ID, locks.Range{Offset: 9, Length: 1}, locks.LockShared); !errors.Is(err, locks.ErrLockNotGranted) {
			t.Fatalf("SMB lock: %v", err)
		}
		// FLUSH with the owner: every POSIX lock of k1 goes, whichever handle took it.
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.ReleasePOSIXLocks(h.ID, k1) }))
		if ls := locksOf(f); len(ls) != 0 {
			t.Fatalf("after release: %v", ls)
		}
		must(t, setlk(other, o.ID, k1, locks.Range{Offset: 0, Length: 1}, locks.LockShared))
	})
	t.Run("a whole-range lock next to a lock at 0 does not overflow", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 0, Length: 1}, locks.LockShared))
		must(t, setlk(tab, h.ID, k1, locks.Range{Offset: 1, Length: ^uint64(0)}, locks.LockShared))
		if got := len(locksOf(f)); got != 2 {
			t.Fatalf("%d locks", got)
		}
	})
}

// TestFlock: flock(2) locks (fuse-notes §2.1) conflict with other handles'
// flocks only — not with opens, share modes or POSIX locks — are advisory
// to POSIX I/O, and are whole-file byte-range locks to REST and SMB.
func testFlock(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	tab := openTable(t, db, locks.Options{})
	other := openTable(t, db, locks.Options{}) // another process
	flock := func(tab *locks.Table, id locks.HandleID, kind locks.LockKind) error {
		return update(t, tab, func(tx *locks.Tx) error { return tx.Flock(id, kind) })
	}
	f := newFile()
	a := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	b := mustOpen(t, other, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	c := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll}) // same process, another open

	must(t, flock(tab, a.ID, locks.LockShared))   // LOCK_SH
	must(t, flock(other, b.ID, locks.LockShared)) // LOCK_SH by another process
	if err := flock(tab, a.ID, locks.LockExclusive); !errors.Is(err, locks.ErrLockNotGranted) {
		t.Fatalf("LOCK_EX while another handle holds LOCK_SH: %v", err)
	}
	must(t, flock(other, b.ID, 0))                 // LOCK_UN
	must(t, flock(tab, a.ID, locks.LockExclusive)) // converts
	for _, tc := range []struct {
		name string
		tab  *locks.Table
		id   locks.HandleID
		kind locks.LockKind
	}{{"other process shared", other, b.ID, locks.LockShared}, {"other process exclusive", other, b.ID, locks.LockExclusive}, {"same process, other open", tab, c.ID, locks.LockShared}} {
		if err := flock(tc.tab, tc.id, tc.kind); !errors.Is(err, locks.ErrLockNotGranted) {
			t.Errorf("%s flock while LOCK_EX held: %v, want ErrLockNotGranted", tc.name, err)
		}
	}
	// Opens and share modes are untouched: a writer that shares nothing opens.
	w := mustOpen(t, other, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareRead | locks.ShareWrite})
	mustClose(t, other, w.ID)
	// POSIX requesters: advisory.
	must(t, view(t, other, func(tx *locks.Tx) error { return tx.CheckIOKey(b.ID, 9, locks.Range{Offset: 0, Length: 10}, true) }))
	must(t, update(t, other, func(tx *locks.Tx) error {
		return tx.SetPOSIXLock(b.ID, 9, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive)
	}))
	must(t, update(t, other, func(tx *locks.Tx) error { return tx.SetPOSIXLock(b.ID, 9, locks.Range{Offset: 0, Length: 10}, 0) }))
	// REST and SMB: a whole-file byte-range lock of handle a.
	for _, op := range []locks.Op{locks.OpGetFile, locks.OpPutRange} {
		if err := view(t, other, func(tx *locks.Tx) error {
			return tx.CheckREST(locks.RESTRequest{File: f, Op: op, Range: locks.Range{Offset: 1 << 40, Length: 1}})
		}); !errors.Is(err, locks.ErrLockConflict) {
			t.Errorf("REST op %d under LOCK_EX: %v, want ErrLockConflict", op, err)
		}
	}
	if err := view(t, other, func(tx *locks.Tx) error { return tx.CheckIO(b.ID, locks.Range{Offset: 5, Length: 1}, false) }); !errors.Is(err, locks.ErrLockConflict) {
		t.Errorf("SMB read under LOCK_EX: %v, want ErrLockConflict", err)
	}
	if err := update(t, other, func(tx *locks.Tx) error { return tx.Lock(b.ID, locks.Range{Offset: 5, Length: 1}, locks.LockShared) }); !errors.Is(err, locks.ErrLockNotGranted) {
		t.Errorf("SMB lock under LOCK_EX: %v, want ErrLockNotGranted", err)
	}
	must(t, view(t, tab, func(tx *locks.Tx) error { return tx.CheckIO(a.ID, locks.Range{Offset: 5, Length: 1}, true) })) // its own
	// LOCK_SH: REST reads pass, writes do not.
	must(t, flock(tab, a.ID, locks.LockShared))
	must(t, view(t, other, func(tx *locks.Tx) error {
		return tx.CheckREST(locks.RESTRequest{File: f, Op: locks.OpGetFile, Range: locks.WholeFile})
	}))
	if err := view(t, other, func(tx *locks.Tx) error {
		return tx.CheckREST(locks.RESTRequest{File: f, Op: locks.OpPutRange, Range: locks.Range{Offset: 0, Length: 1}})
	}); !errors.Is(err, locks.ErrLockConflict) {
		t.Errorf("REST write under LOCK_SH: %v, want ErrLockConflict", err)
	}
	// Closing the handle drops its flock.
	mustClose(t, tab, a.ID)
	must(t, flock(other, b.ID, locks.LockExclusive))
}

// List Handles / Force Close Handles building blocks.
func testHandleListingAndForceClose(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	rm := &removeLog{}
	tab := openTable(t, db, locks.Options{Remove: rm.remove})
	other := openTable(t, db, locks.Options{})
	f1, f2 := newFile(), newFile()
	a := mustOpen(t, tab, locks.OpenRequest{File: f1, Access: rd, Share: locks.ShareAll, SessionID: 7, ClientName: "host", ClientIP: "10.0.0.1"})
	b := mustOpen(t, other, locks.OpenRequest{File: f1, Access: del, Share: locks.ShareAll, DeleteOnClose: true})
	c := mustOpen(t, other, locks.OpenRequest{File: f2, Access: wr, Share: locks.ShareNone})
	var all, on1 []locks.Handle
	must(t, tab.View(t.Context(), func(tx *locks.Tx) error {
		var err error
		if all, err = tx.AllHandles(); err != nil {
			return err
		}
		on1, err = tx.Handles(f1)
		return err
	}))
	if len(all) != 3 || all[0].ID != a.ID || all[1].ID != b.ID || all[2].ID != c.ID {
		t.Fatalf("all handles %+v", all)
	}
	if len(on1) != 2 || on1[0].SessionID != 7 || on1[0].ClientName != "host" || on1[0].ClientIP != "10.0.0.1" || on1[0].OpenTime.IsZero() {
		t.Fatalf("handles on f1 %+v", on1)
	}
	if a.ID == b.ID || b.ID == c.ID {
		t.Fatal("ids reused")
	}
	// Force close another owner's handle; the owner's next use fails.
	var found bool
	must(t, update(t, tab, func(tx *locks.Tx) error { var err error; found, err = tx.ForceClose(c.ID); return err }))
	if !found {
		t.Fatal("force close: not found")
	}
	if err := checkIO(t, other, c.ID, locks.Range{Offset: 0, Length: 1}, true); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("use after force close: %v", err)
	}
	if _, err := closeH(t, other, c.ID); !errors.Is(err, locks.ErrHandleClosed) {
		t.Fatalf("close after force close: %v", err)
	}
	must(t, update(t, tab, func(tx *locks.Tx) error { var err error; found, err = tx.ForceClose(c.ID); return err }))
	if found {
		t.Fatal("second force close found the handle")
	}
	// Force-closing the delete-on-close handle marks the file; the last
	// handle's force close removes it.
	must(t, update(t, tab, func(tx *locks.Tx) error { _, err := tx.ForceClose(b.ID); return err }))
	if !pending(t, tab, f1) {
		t.Fatal("force-closed delete-on-close handle did not mark the file")
	}
	must(t, update(t, tab, func(tx *locks.Tx) error { _, err := tx.ForceClose(a.ID); return err }))
	if len(rm.removed()) != 1 || rm.removed()[0] != f1 {
		t.Fatalf("removed %v", rm.removed())
	}
	// Handle ids are never reused, even after everything closed.
	d := mustOpen(t, tab, locks.OpenRequest{File: f1, Access: rd, Share: locks.ShareAll})
	if d.ID <= a.ID || d.ID == b.ID || d.ID == c.ID {
		t.Fatalf("new id %d after %d,%d,%d", d.ID, a.ID, b.ID, c.ID)
	}
}

// A live owner is never reaped, in this process or another; ReapDeadOwners
// counts what it reaped.
func testLiveOwnersStay(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	a := openTable(t, db, locks.Options{})
	b := openTable(t, db, locks.Options{})
	f := newFile()
	hb := mustOpen(t, b, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareNone})
	for range 3 {
		if _, err := open(t, a, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll}); !errors.Is(err, locks.ErrSharingViolation) {
			t.Fatalf("err=%v", err)
		}
	}
	n, err := a.ReapDeadOwners(t.Context())
	if err != nil || n != 0 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	must(t, b.View(t.Context(), func(tx *locks.Tx) error { _, err := tx.Handle(hb.ID); return err }))
	// An owner whose Table was closed without cleanup (simulated: its owner
	// file vanished) is dead.
	c := db(t, locks.Options{Owner: "crashy"})
	mustOpen(t, c.Table, locks.OpenRequest{File: newFile(), Access: rd, Share: locks.ShareAll})
	c.Kill(t) // the process dies: its owner session is dead, its rows stay
	n, err = a.ReapDeadOwners(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("reaped %d, %v; want 1", n, err)
	}
}

// noConflictingHandles checks, inside a transaction, that no two handles on
// file conflict (the reference model's check).
func noConflictingHandles(tx *locks.Tx, file locks.FileID) error {
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

func testHandleLimit(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{MaxHandlesPerFile: 3})
	f := newFile()
	var hs []locks.Handle
	for range 3 {
		hs = append(hs, mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll}))
	}
	if _, err := open(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll}); !errors.Is(err, locks.ErrHandleLimit) {
		t.Fatalf("fourth open: %v", err)
	}
	mustOpen(t, tab, locks.OpenRequest{File: newFile(), Access: rd, Share: locks.ShareAll}) // per file
	mustClose(t, tab, hs[0].ID)
	mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
}

// SMB unlock and POSIX locks stay apart: Unlock never removes a POSIX lock,
// SetPOSIXLock's unlock never removes an SMB lock.
func testSMBAndPOSIXLocksApart(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	f := newFile()
	h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	must(t, update(t, tab, func(tx *locks.Tx) error {
		return tx.SetPOSIXLock(h.ID, 5, locks.Range{Offset: 0, Length: 10}, locks.LockShared)
	}))
	if err := update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(h.ID, locks.Range{Offset: 0, Length: 10}) }); !errors.Is(err, locks.ErrRangeNotLocked) {
		t.Fatalf("SMB unlock of a POSIX lock: %v", err)
	}
	must(t, lock(t, tab, h.ID, locks.Range{Offset: 20, Length: 10}, locks.LockShared))
	must(t, update(t, tab, func(tx *locks.Tx) error { return tx.SetPOSIXLock(h.ID, 5, locks.Range{Offset: 0, Length: 100}, 0) }))
	var ls []locks.ByteLock
	must(t, tab.View(t.Context(), func(tx *locks.Tx) error { var err error; ls, err = tx.Locks(f); return err }))
	if len(ls) != 1 || ls[0].POSIX || ls[0].Range != (locks.Range{Offset: 20, Length: 10}) {
		t.Fatalf("locks left: %+v", ls)
	}
	mustClose(t, tab, h.ID)
	must(t, tab.View(t.Context(), func(tx *locks.Tx) error { var err error; ls, err = tx.Locks(f); return err }))
	if len(ls) != 0 {
		t.Fatalf("locks after close: %+v", ls)
	}
}

// The ConflictError names exactly the handles in the way.
func testConflictErrorNamesBlockers(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	f := newFile()
	a := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareRead})                     // denies Write
	mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})                           // fine
	c := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareRead | locks.ShareDelete}) // denies Write
	mustOpen(t, tab, locks.OpenRequest{File: f, Access: attr, Share: locks.ShareNone})                        // attribute-only: never
	_, err := open(t, tab, locks.OpenRequest{File: f, Access: wr, Share: locks.ShareAll})
	var ce *locks.ConflictError
	if !errors.As(err, &ce) || len(ce.Handles) != 2 || ce.Handles[0] != a.ID || ce.Handles[1] != c.ID || ce.Lease {
		t.Fatalf("err=%v (%+v)", err, ce)
	}
}

func testOnCommit(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	ctx := context.Background()
	errRollback := errors.New("roll back")
	for _, tc := range []struct {
		name string
		run  func(fn func(tx *locks.Tx) error) error
		fail bool
		want bool
	}{
		{"committed write", func(fn func(tx *locks.Tx) error) error { return tab.Update(ctx, fn) }, false, true},
		{"rolled back write", func(fn func(tx *locks.Tx) error) error { return tab.Update(ctx, fn) }, true, false},
		{"read", func(fn func(tx *locks.Tx) error) error { return tab.View(ctx, fn) }, false, false},
		{"peek", func(fn func(tx *locks.Tx) error) error { return tab.Peek(ctx, fn) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			err := tc.run(func(tx *locks.Tx) error {
				tx.OnCommit(func() { ran = true })
				if ran {
					t.Error("OnCommit ran before the commit")
				}
				if tc.fail {
					return errRollback
				}
				return nil
			})
			if tc.fail != errors.Is(err, errRollback) {
				t.Fatalf("transaction: %v", err)
			}
			if ran != tc.want {
				t.Errorf("OnCommit ran = %v, want %v", ran, tc.want)
			}
		})
	}
}

// CloseQuiet closes only what nothing can follow from, and leaves the
// rest for CloseHandle.
func testCloseQuiet(t *testing.T, newDB func(*testing.T) Opener) {
	for _, tc := range []struct {
		name    string
		req     locks.OpenRequest
		dispose bool
		want    bool
	}{
		{"plain handle", locks.OpenRequest{Access: rd, Share: locks.ShareAll}, false, true},
		{"delete-on-close handle", locks.OpenRequest{Access: del, Share: locks.ShareAll, DeleteOnClose: true}, false, false},
		{"file delete-pending", locks.OpenRequest{Access: rd | del, Share: locks.ShareAll}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := openTable(t, newDB(t), locks.Options{})
			f := newFile()
			tc.req.File = f
			h := mustOpen(t, tab, tc.req)
			if tc.dispose {
				must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
			}
			var closed bool
			must(t, update(t, tab, func(tx *locks.Tx) error { var err error; closed, err = tx.CloseQuiet(h.ID); return err }))
			if closed != tc.want {
				t.Fatalf("CloseQuiet = %v, want %v", closed, tc.want)
			}
			var hs []locks.Handle
			must(t, tab.View(t.Context(), func(tx *locks.Tx) error { var err error; hs, err = tx.Handles(f); return err }))
			if open := len(hs) == 1; open == closed {
				t.Fatalf("after CloseQuiet = %v the handle is open = %v", closed, open)
			}
			if !closed {
				mustClose(t, tab, h.ID)
			}
		})
	}
}

// TestHandleOpen: HandleOpen answers whether a handle is still open, for
// this Table's handles (read by primary key) and for another owner's
// (found by id), closed and force-closed ones being ErrHandleClosed.
func testHandleOpen(t *testing.T, newDB func(*testing.T) Opener) {
	db := newDB(t)
	tab := openTable(t, db, locks.Options{})
	other := openTable(t, db, locks.Options{})
	ctx := context.Background()
	own := mustOpen(t, tab, locks.OpenRequest{File: 1, Access: rd, Share: locks.ShareAll})
	closed := mustOpen(t, tab, locks.OpenRequest{File: 1, Access: rd, Share: locks.ShareAll})
	forced := mustOpen(t, tab, locks.OpenRequest{File: 2, Access: rd, Share: locks.ShareAll})
	theirs := mustOpen(t, other, locks.OpenRequest{File: 3, Access: rd, Share: locks.ShareAll})
	mustClose(t, tab, closed.ID)
	must(t, other.Update(ctx, func(tx *locks.Tx) error {
		_, err := tx.ForceClose(forced.ID)
		return err
	}))
	for _, tc := range []struct {
		name string
		id   locks.HandleID
		want error
	}{
		{"own, open", own.ID, nil},
		{"own, closed", closed.ID, locks.ErrHandleClosed},
		{"own, force-closed by another owner", forced.ID, locks.ErrHandleClosed},
		{"another owner's, open", theirs.ID, nil},
		{"never opened", own.ID + 100000, locks.ErrHandleClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tab.View(ctx, func(tx *locks.Tx) error { return tx.HandleOpen(tc.id) })
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("HandleOpen(%d) = %v, want %v", tc.id, err, tc.want)
			}
		})
	}
}

// Forget, and Remove failures.
func testLifecycle(t *testing.T, newDB func(*testing.T) Opener) {
	t.Run("Remove failing rolls the close back", func(t *testing.T) {
		rm := &removeLog{fail: errors.New("namespace says no")}
		tab := openTable(t, newDB(t), locks.Options{Remove: rm.remove})
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: del, Share: locks.ShareAll, DeleteOnClose: true})
		if _, err := closeH(t, tab, h.ID); err == nil || !errors.Is(err, rm.fail) {
			t.Fatalf("close: %v", err)
		}
		var hs []locks.Handle
		must(t, tab.View(t.Context(), func(tx *locks.Tx) error { var err error; hs, err = tx.Handles(f); return err }))
		if len(hs) != 1 {
			t.Fatalf("handle gone although the transaction failed: %v", hs)
		}
		rm.fail = nil
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("not removed on retry")
		}
	})
	t.Run("Forget drops every trace", func(t *testing.T) {
		tab := openTable(t, newDB(t), locks.Options{})
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | del, Share: locks.ShareAll})
		must(t, lock(t, tab, h.ID, locks.Range{Offset: 0, Length: 5}, locks.LockShared))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Forget(f) }))
		if pending(t, tab, f) {
			t.Fatal("still pending")
		}
		if _, err := open(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareNone}); err != nil {
			t.Fatal(err)
		}
	})
}
