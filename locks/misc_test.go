package locks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Many goroutines on two Tables (two owners) over one file: no two
// conflicting opens are ever held at the same time. A goroutine registers
// its handle after the grant and unregisters before the close, so any two
// registered handles were open together in the table.
func TestConcurrentOpensNeverConflict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	tabs := []*Table{openTable(t, path, Options{}), openTable(t, path, Options{})}
	accesses := []Access{rd, wr, del, rd | wr, attr, rd | wr | del}
	shares := []ShareMode{ShareNone, ShareRead, ShareWrite, ShareRead | ShareWrite, ShareAll, ShareAll}
	var (
		mu      sync.Mutex
		held    = map[HandleID]Handle{}
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
			var prev *Handle
			release := func() error {
				if prev == nil {
					return nil
				}
				mu.Lock()
				delete(held, prev.ID)
				mu.Unlock()
				id := prev.ID
				prev = nil
				return tab.Update(context.Background(), func(tx *Tx) error { _, err := tx.CloseHandle(id); return err })
			}
			defer func() {
				if err := release(); err != nil {
					errc <- err
				}
			}()
			for range iters {
				req := OpenRequest{File: 1, Access: accesses[rng.IntN(len(accesses))], Share: shares[rng.IntN(len(shares))]}
				var h Handle
				err := tab.Update(context.Background(), func(tx *Tx) error {
					var err error
					if h, err = tx.OpenHandle(req); err != nil {
						return err
					}
					return noConflictingHandles(tx, 1)
				})
				if errors.Is(err, ErrSharingViolation) {
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
func TestBadInput(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr | del, Share: ShareAll})
	const unknown = HandleID(1 << 50)
	const max = ^uint64(0)
	cases := []struct {
		name string
		run  func(tx *Tx) error
		want error
	}{
		{"open with undefined access bits", func(tx *Tx) error {
			_, err := tx.OpenHandle(OpenRequest{File: f, Access: 0x80, Share: ShareAll})
			return err
		}, ErrInvalidParameter},
		{"open with undefined share bits", func(tx *Tx) error {
			_, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: 0x10})
			return err
		}, ErrInvalidParameter},
		{"close unknown handle", func(tx *Tx) error { _, err := tx.CloseHandle(unknown); return err }, ErrHandleClosed},
		{"handle unknown", func(tx *Tx) error { _, err := tx.Handle(unknown); return err }, ErrHandleClosed},
		{"dispose unknown handle", func(tx *Tx) error { return tx.Dispose(unknown, true, Facts{}) }, ErrHandleClosed},
		{"lock unknown handle", func(tx *Tx) error { return tx.Lock(unknown, Range{0, 1}, LockShared) }, ErrHandleClosed},
		{"unlock unknown handle", func(tx *Tx) error { return tx.Unlock(unknown, Range{0, 1}) }, ErrHandleClosed},
		{"io unknown handle", func(tx *Tx) error { return tx.CheckIO(unknown, Range{0, 1}, true) }, ErrHandleClosed},
		{"flock unknown handle", func(tx *Tx) error { return tx.Flock(unknown, LockShared) }, ErrHandleClosed},
		{"posix lock unknown handle", func(tx *Tx) error { return tx.SetPOSIXLock(unknown, 1, Range{0, 1}, LockShared) }, ErrHandleClosed},
		{"posix release unknown handle", func(tx *Tx) error { return tx.ReleasePOSIXLocks(unknown, 1) }, ErrHandleClosed},
		{"getlk unknown handle", func(tx *Tx) error { _, _, err := tx.GetPOSIXLock(unknown, 1, Range{0, 1}, LockShared); return err }, ErrHandleClosed},
		{"zero-length posix lock", func(tx *Tx) error { return tx.SetPOSIXLock(h.ID, 1, Range{5, 0}, LockShared) }, ErrInvalidParameter},
		{"lock past 2^64-1", func(tx *Tx) error { return tx.Lock(h.ID, Range{max, 2}, LockShared) }, ErrInvalidLockRange},
		{"io past 2^64-1", func(tx *Tx) error { return tx.CheckIO(h.ID, Range{max, 2}, false) }, ErrInvalidLockRange},
		{"rest range past 2^64-1", func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f, Op: OpGetFile, Range: Range{10, max}}) }, ErrInvalidLockRange},
		{"unknown lock kind", func(tx *Tx) error { return tx.Lock(h.ID, Range{0, 1}, 7) }, ErrInvalidParameter},
		{"unlock kind as lock", func(tx *Tx) error { return tx.Lock(h.ID, Range{0, 1}, 0) }, ErrInvalidParameter},
		{"unknown posix kind", func(tx *Tx) error { return tx.SetPOSIXLock(h.ID, 1, Range{0, 1}, -1) }, ErrInvalidParameter},
		{"unknown REST op", func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f, Op: 99}) }, ErrInvalidParameter},
		{"zero REST op", func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f}) }, ErrInvalidParameter},
		{"unknown flock kind", func(tx *Tx) error { return tx.Flock(h.ID, 7) }, ErrInvalidParameter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := update(t, tab, c.run); !errors.Is(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
		})
	}
	t.Run("write methods in a View", func(t *testing.T) {
		err := tab.View(t.Context(), func(tx *Tx) error {
			_, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: ShareAll})
			return err
		})
		if !errors.Is(err, ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("another owner's handle is not ours to close", func(t *testing.T) {
		other := openTable(t, tab.Path(), Options{})
		err := update(t, other, func(tx *Tx) error { _, err := tx.CloseHandle(h.ID); return err })
		if !errors.Is(err, ErrHandleClosed) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("bad owner id", func(t *testing.T) {
		if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "x.db"), Options{Owner: "../evil"}); !errors.Is(err, ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("bad path", func(t *testing.T) {
		if _, err := Open(t.Context(), "", Options{}); !errors.Is(err, ErrInvalidParameter) {
			t.Fatalf("err=%v", err)
		}
	})
}

func TestParseWords(t *testing.T) {
	acc := []struct {
		in   string
		want Access
		err  bool
	}{
		{"read", rd, false},
		{"read,write", rd | wr, false},
		{" Read , EXECUTE ", rd | ex, false},
		{"append,delete,read_attributes", ap | del | attr, false},
		{"read_attributes", attr, false},
		{"", 0, true},
		{"read,", 0, true},
		{"rw", 0, true},
		{"none", 0, true},
	}
	for _, c := range acc {
		got, err := ParseAccess(c.in)
		if (err != nil) != c.err || got != c.want || (err != nil && !errors.Is(err, ErrInvalidParameter)) {
			t.Errorf("ParseAccess(%q) = %v, %v", c.in, got, err)
		}
		if err == nil {
			if back, err := ParseAccess(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q: %v %v", c.in, got.String(), back, err)
			}
		}
	}
	share := []struct {
		in   string
		want ShareMode
		err  bool
	}{
		{"none", ShareNone, false},
		{"read", ShareRead, false},
		{"read,write,delete", ShareAll, false},
		{"Delete,write", ShareWrite | ShareDelete, false},
		{"", 0, true},
		{"none,read", 0, true},
		{"execute", 0, true},
	}
	for _, c := range share {
		got, err := ParseShareMode(c.in)
		if (err != nil) != c.err || got != c.want || (err != nil && !errors.Is(err, ErrInvalidParameter)) {
			t.Errorf("ParseShareMode(%q) = %v, %v", c.in, got, err)
		}
		if err == nil {
			if back, err := ParseShareMode(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q: %v %v", c.in, got.String(), back, err)
			}
		}
	}
	for _, c := range []struct {
		off, n int64
		want   error
	}{{-1, 1, ErrInvalidParameter}, {0, -5, ErrInvalidParameter}, {0, 0, nil}, {1 << 62, 1 << 62, nil}} {
		if _, err := NewRange(c.off, c.n); !errIs(err, c.want) {
			t.Errorf("NewRange(%d, %d): %v, want %v", c.off, c.n, err, c.want)
		}
	}
	if s := Access(0x80 | 1).String(); s != "read,0x80" {
		t.Errorf("String of a bad mask: %q", s)
	}
}

// POSIX (fcntl) locks: replace/split/merge among one owner, §3.2 against
// others, release by key.
func TestPOSIXLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	tab := openTable(t, path, Options{})
	other := openTable(t, path, Options{})
	const k1, k2 = 101, 202
	setlk := func(tb *Table, id HandleID, key uint64, r Range, kind LockKind) error {
		return update(t, tb, func(tx *Tx) error { return tx.SetPOSIXLock(id, key, r, kind) })
	}
	locksOf := func(f FileID) []ByteLock {
		var ls []ByteLock
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; ls, err = tx.Locks(f); return err }))
		return ls
	}
	ranges := func(ls []ByteLock) string {
		s := ""
		for _, l := range ls {
			s += fmt.Sprintf("%v%v ", l.Kind, l.Range)
		}
		return s
	}
	t.Run("split, upgrade in place, merge", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		must(t, setlk(tab, h.ID, k1, Range{0, 100}, LockShared))
		must(t, setlk(tab, h.ID, k1, Range{40, 20}, LockExclusive)) // own: upgrade the middle
		if got := ranges(locksOf(f)); got != "shared[0,+40] shared[60,+40] exclusive[40,+20] " {
			t.Fatalf("after upgrade: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, Range{45, 5}, 0)) // unlock splits the exclusive piece
		if got := ranges(locksOf(f)); got != "shared[0,+40] shared[60,+40] exclusive[40,+5] exclusive[50,+10] " {
			t.Fatalf("after unlock: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, Range{40, 20}, LockShared)) // downgrade merges everything back
		if got := ranges(locksOf(f)); got != "shared[0,+100] " {
			t.Fatalf("after downgrade: %s", got)
		}
		must(t, setlk(tab, h.ID, k1, Range{0, 100}, 0))
		if ls := locksOf(f); len(ls) != 0 {
			t.Fatalf("after full unlock: %v", ls)
		}
	})
	t.Run("conflicts with other owners and keys, not with own", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		h2 := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		o := mustOpen(t, other, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		must(t, setlk(tab, h.ID, k1, Range{0, 10}, LockExclusive))
		// Same key through another handle of this owner: the POSIX owner's own.
		must(t, setlk(tab, h2.ID, k1, Range{5, 10}, LockExclusive))
		if err := setlk(tab, h.ID, k2, Range{0, 1}, LockShared); !errors.Is(err, ErrLockNotGranted) {
			t.Fatalf("other key: %v", err)
		}
		// Same key number in another owner (process) is another lock owner.
		if err := setlk(other, o.ID, k1, Range{0, 1}, LockShared); !errors.Is(err, ErrLockNotGranted) {
			t.Fatalf("other owner: %v", err)
		}
		var bl ByteLock
		var found bool
		must(t, other.View(t.Context(), func(tx *Tx) error {
			var err error
			bl, found, err = tx.GetPOSIXLock(o.ID, k1, Range{0, 1}, LockShared)
			return err
		}))
		if !found || bl.Kind != LockExclusive || !bl.POSIX || bl.Key != k1 {
			t.Fatalf("getlk: %+v %v", bl, found)
		}
		// I/O: the POSIX owner's own locks never block its own I/O.
		must(t, update(t, tab, func(tx *Tx) error { return tx.CheckIOKey(h2.ID, k1, Range{0, 15}, true) }))
		if err := update(t, tab, func(tx *Tx) error { return tx.CheckIOKey(h2.ID, k2, Range{0, 1}, false) }); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("io by another key: %v", err)
		}
		if err := checkIO(t, other, o.ID, Range{3, 1}, false); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("io by another owner: %v", err)
		}
		if err := checkREST(t, tab, RESTRequest{File: f, Op: OpGetFile, Range: Range{0, 1}}); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("REST read over a POSIX write lock: %v", err)
		}
		// SMB lock against a POSIX lock follows §3.2 too.
		if err := lock(t, other, o.ID, Range{9, 1}, LockShared); !errors.Is(err, ErrLockNotGranted) {
			t.Fatalf("SMB lock: %v", err)
		}
		// FLUSH with the owner: every POSIX lock of k1 goes, whichever handle took it.
		must(t, update(t, tab, func(tx *Tx) error { return tx.ReleasePOSIXLocks(h.ID, k1) }))
		if ls := locksOf(f); len(ls) != 0 {
			t.Fatalf("after release: %v", ls)
		}
		must(t, setlk(other, o.ID, k1, Range{0, 1}, LockShared))
	})
	t.Run("a whole-range lock next to a lock at 0 does not overflow", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		must(t, setlk(tab, h.ID, k1, Range{0, 1}, LockShared))
		must(t, setlk(tab, h.ID, k1, Range{1, ^uint64(0)}, LockShared))
		if got := len(locksOf(f)); got != 2 {
			t.Fatalf("%d locks", got)
		}
	})
}

// TestFlock: flock(2) locks (fuse-notes §2.1) conflict with other handles'
// flocks only — not with opens, share modes or POSIX locks — are advisory
// to POSIX I/O, and are whole-file byte-range locks to REST and SMB.
func TestFlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	tab := openTable(t, path, Options{})
	other := openTable(t, path, Options{}) // another process
	flock := func(tab *Table, id HandleID, kind LockKind) error {
		return update(t, tab, func(tx *Tx) error { return tx.Flock(id, kind) })
	}
	f := newFile()
	a := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	b := mustOpen(t, other, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	c := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll}) // same process, another open

	must(t, flock(tab, a.ID, LockShared))   // LOCK_SH
	must(t, flock(other, b.ID, LockShared)) // LOCK_SH by another process
	if err := flock(tab, a.ID, LockExclusive); !errors.Is(err, ErrLockNotGranted) {
		t.Fatalf("LOCK_EX while another handle holds LOCK_SH: %v", err)
	}
	must(t, flock(other, b.ID, 0))           // LOCK_UN
	must(t, flock(tab, a.ID, LockExclusive)) // converts
	for _, tc := range []struct {
		name string
		tab  *Table
		id   HandleID
		kind LockKind
	}{{"other process shared", other, b.ID, LockShared}, {"other process exclusive", other, b.ID, LockExclusive}, {"same process, other open", tab, c.ID, LockShared}} {
		if err := flock(tc.tab, tc.id, tc.kind); !errors.Is(err, ErrLockNotGranted) {
			t.Errorf("%s flock while LOCK_EX held: %v, want ErrLockNotGranted", tc.name, err)
		}
	}
	// Opens and share modes are untouched: a writer that shares nothing opens.
	w := mustOpen(t, other, OpenRequest{File: f, Access: rd | wr, Share: ShareRead | ShareWrite})
	mustClose(t, other, w.ID)
	// POSIX requesters: advisory.
	must(t, view(t, other, func(tx *Tx) error { return tx.CheckIOKey(b.ID, 9, Range{0, 10}, true) }))
	must(t, update(t, other, func(tx *Tx) error { return tx.SetPOSIXLock(b.ID, 9, Range{0, 10}, LockExclusive) }))
	must(t, update(t, other, func(tx *Tx) error { return tx.SetPOSIXLock(b.ID, 9, Range{0, 10}, 0) }))
	// REST and SMB: a whole-file byte-range lock of handle a.
	for _, op := range []Op{OpGetFile, OpPutRange} {
		if err := view(t, other, func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f, Op: op, Range: Range{1 << 40, 1}}) }); !errors.Is(err, ErrLockConflict) {
			t.Errorf("REST op %d under LOCK_EX: %v, want ErrLockConflict", op, err)
		}
	}
	if err := view(t, other, func(tx *Tx) error { return tx.CheckIO(b.ID, Range{5, 1}, false) }); !errors.Is(err, ErrLockConflict) {
		t.Errorf("SMB read under LOCK_EX: %v, want ErrLockConflict", err)
	}
	if err := update(t, other, func(tx *Tx) error { return tx.Lock(b.ID, Range{5, 1}, LockShared) }); !errors.Is(err, ErrLockNotGranted) {
		t.Errorf("SMB lock under LOCK_EX: %v, want ErrLockNotGranted", err)
	}
	must(t, view(t, tab, func(tx *Tx) error { return tx.CheckIO(a.ID, Range{5, 1}, true) })) // its own
	// LOCK_SH: REST reads pass, writes do not.
	must(t, flock(tab, a.ID, LockShared))
	must(t, view(t, other, func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f, Op: OpGetFile, Range: WholeFile}) }))
	if err := view(t, other, func(tx *Tx) error { return tx.CheckREST(RESTRequest{File: f, Op: OpPutRange, Range: Range{0, 1}}) }); !errors.Is(err, ErrLockConflict) {
		t.Errorf("REST write under LOCK_SH: %v, want ErrLockConflict", err)
	}
	// Closing the handle drops its flock.
	mustClose(t, tab, a.ID)
	must(t, flock(other, b.ID, LockExclusive))
}

// List Handles / Force Close Handles building blocks.
func TestHandleListingAndForceClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	rm := &removeLog{}
	tab := openTable(t, path, Options{Remove: rm.remove})
	other := openTable(t, path, Options{})
	f1, f2 := newFile(), newFile()
	a := mustOpen(t, tab, OpenRequest{File: f1, Access: rd, Share: ShareAll, SessionID: 7, ClientName: "host", ClientIP: "10.0.0.1"})
	b := mustOpen(t, other, OpenRequest{File: f1, Access: del, Share: ShareAll, DeleteOnClose: true})
	c := mustOpen(t, other, OpenRequest{File: f2, Access: wr, Share: ShareNone})
	var all, on1 []Handle
	must(t, tab.View(t.Context(), func(tx *Tx) error {
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
	must(t, update(t, tab, func(tx *Tx) error { var err error; found, err = tx.ForceClose(c.ID); return err }))
	if !found {
		t.Fatal("force close: not found")
	}
	if err := checkIO(t, other, c.ID, Range{0, 1}, true); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("use after force close: %v", err)
	}
	if _, err := closeH(t, other, c.ID); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("close after force close: %v", err)
	}
	must(t, update(t, tab, func(tx *Tx) error { var err error; found, err = tx.ForceClose(c.ID); return err }))
	if found {
		t.Fatal("second force close found the handle")
	}
	// Force-closing the delete-on-close handle marks the file; the last
	// handle's force close removes it.
	must(t, update(t, tab, func(tx *Tx) error { _, err := tx.ForceClose(b.ID); return err }))
	if !pending(t, tab, f1) {
		t.Fatal("force-closed delete-on-close handle did not mark the file")
	}
	must(t, update(t, tab, func(tx *Tx) error { _, err := tx.ForceClose(a.ID); return err }))
	if len(rm.removed()) != 1 || rm.removed()[0] != f1 {
		t.Fatalf("removed %v", rm.removed())
	}
	// Handle ids are never reused, even after everything closed.
	d := mustOpen(t, tab, OpenRequest{File: f1, Access: rd, Share: ShareAll})
	if d.ID <= a.ID || d.ID == b.ID || d.ID == c.ID {
		t.Fatalf("new id %d after %d,%d,%d", d.ID, a.ID, b.ID, c.ID)
	}
}

// Forget, Remove failures, and Table.Close.
func TestLifecycle(t *testing.T) {
	t.Run("Remove failing rolls the close back", func(t *testing.T) {
		rm := &removeLog{fail: errors.New("namespace says no")}
		tab := openTable(t, "", Options{Remove: rm.remove})
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareAll, DeleteOnClose: true})
		if _, err := closeH(t, tab, h.ID); err == nil || !errors.Is(err, rm.fail) {
			t.Fatalf("close: %v", err)
		}
		var hs []Handle
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(f); return err }))
		if len(hs) != 1 {
			t.Fatalf("handle gone although the transaction failed: %v", hs)
		}
		rm.fail = nil
		if res := mustClose(t, tab, h.ID); !res.Removed {
			t.Fatal("not removed on retry")
		}
	})
	t.Run("Forget drops every trace", func(t *testing.T) {
		tab := openTable(t, "", Options{})
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | del, Share: ShareAll})
		must(t, lock(t, tab, h.ID, Range{0, 5}, LockShared))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Forget(f) }))
		if pending(t, tab, f) {
			t.Fatal("still pending")
		}
		if _, err := open(t, tab, OpenRequest{File: f, Access: rd, Share: ShareNone}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Close closes the owner's handles and runs delete-on-close", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "locks.db")
		rm := &removeLog{}
		tab, err := Open(t.Context(), path, Options{Remove: rm.remove})
		must(t, err)
		watcher := openTable(t, path, Options{})
		f := newFile()
		mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareNone, DeleteOnClose: true})
		must(t, tab.Close(context.Background()))
		must(t, tab.Close(context.Background())) // idempotent
		if len(rm.removed()) != 1 || rm.removed()[0] != f {
			t.Fatalf("removed %v", rm.removed())
		}
		if _, err := open(t, watcher, OpenRequest{File: f, Access: rd, Share: ShareNone}); err != nil {
			t.Fatal(err)
		}
		if err := tab.Update(t.Context(), func(*Tx) error { return nil }); !errors.Is(err, ErrHandleClosed) {
			t.Fatalf("Update after Close: %v", err)
		}
		if err := tab.View(t.Context(), func(*Tx) error { return nil }); !errors.Is(err, ErrHandleClosed) {
			t.Fatalf("View after Close: %v", err)
		}
		var n int
		must(t, watcher.DB().QueryRow(`SELECT count(*) FROM lk_owners WHERE owner = ?`, string(tab.Owner())).Scan(&n))
		if n != 0 {
			t.Fatal("owner still registered")
		}
	})
	t.Run("namespace SQL in the same transaction", func(t *testing.T) {
		tab := openTable(t, "", Options{})
		if _, err := tab.DB().Exec(`CREATE TABLE ns(file INTEGER PRIMARY KEY, name TEXT)`); err != nil {
			t.Fatal(err)
		}
		f := newFile()
		err := update(t, tab, func(tx *Tx) error {
			if _, err := tx.SQL().ExecContext(tx.Context(), `INSERT INTO ns VALUES(?, 'a')`, int64(f)); err != nil {
				return err
			}
			if _, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: ShareAll}); err != nil {
				return err
			}
			return errors.New("abort")
		})
		if err == nil || err.Error() != "abort" {
			t.Fatal(err)
		}
		var n int
		must(t, tab.DB().QueryRow(`SELECT count(*) FROM ns`).Scan(&n))
		var hs []Handle
		must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(f); return err }))
		if n != 0 || len(hs) != 0 {
			t.Fatalf("rolled back transaction left %d rows, %d handles", n, len(hs))
		}
	})
}

// A live owner is never reaped, in this process or another; ReapDeadOwners
// counts what it reaped.
func TestLiveOwnersStay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	b := openTable(t, path, Options{})
	f := newFile()
	hb := mustOpen(t, b, OpenRequest{File: f, Access: rd | wr, Share: ShareNone})
	for range 3 {
		if _, err := open(t, a, OpenRequest{File: f, Access: rd, Share: ShareAll}); !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("err=%v", err)
		}
	}
	n, err := a.ReapDeadOwners(t.Context())
	if err != nil || n != 0 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	must(t, b.View(t.Context(), func(tx *Tx) error { _, err := tx.Handle(hb.ID); return err }))
	// An owner whose Table was closed without cleanup (simulated: its owner
	// file vanished) is dead.
	c, err := Open(t.Context(), path, Options{Owner: "crashy"})
	must(t, err)
	mustOpen(t, c, OpenRequest{File: newFile(), Access: rd, Share: ShareAll})
	crash(t, c) // drop the flock and the file, keep the rows
	n, err = a.ReapDeadOwners(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("reaped %d, %v; want 1", n, err)
	}
	c.db.Close()
}

// A rolled-back open leaves no trace, not even in the id→file hint.
func TestRolledBackOpen(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	var id HandleID
	err := update(t, tab, func(tx *Tx) error {
		h, err := tx.OpenHandle(OpenRequest{File: f, Access: rd, Share: ShareNone})
		id = h.ID
		if err != nil {
			return err
		}
		return errors.New("namespace refused")
	})
	if err == nil {
		t.Fatal("no error")
	}
	if _, ok := tab.handleFile(id); ok {
		t.Fatal("hint kept for a rolled-back handle")
	}
	if _, err := closeH(t, tab, id); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("close of rolled-back handle: %v", err)
	}
	mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareNone})
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

func TestHandleLimit(t *testing.T) {
	tab := openTable(t, "", Options{MaxHandlesPerFile: 3})
	f := newFile()
	var hs []Handle
	for range 3 {
		hs = append(hs, mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll}))
	}
	if _, err := open(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll}); !errors.Is(err, ErrHandleLimit) {
		t.Fatalf("fourth open: %v", err)
	}
	mustOpen(t, tab, OpenRequest{File: newFile(), Access: rd, Share: ShareAll}) // per file
	mustClose(t, tab, hs[0].ID)
	mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
}

// SMB unlock and POSIX locks stay apart: Unlock never removes a POSIX lock,
// SetPOSIXLock's unlock never removes an SMB lock.
func TestSMBAndPOSIXLocksApart(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	must(t, update(t, tab, func(tx *Tx) error { return tx.SetPOSIXLock(h.ID, 5, Range{0, 10}, LockShared) }))
	if err := update(t, tab, func(tx *Tx) error { return tx.Unlock(h.ID, Range{0, 10}) }); !errors.Is(err, ErrRangeNotLocked) {
		t.Fatalf("SMB unlock of a POSIX lock: %v", err)
	}
	must(t, lock(t, tab, h.ID, Range{20, 10}, LockShared))
	must(t, update(t, tab, func(tx *Tx) error { return tx.SetPOSIXLock(h.ID, 5, Range{0, 100}, 0) }))
	var ls []ByteLock
	must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; ls, err = tx.Locks(f); return err }))
	if len(ls) != 1 || ls[0].POSIX || ls[0].Range != (Range{20, 10}) {
		t.Fatalf("locks left: %+v", ls)
	}
	mustClose(t, tab, h.ID)
	must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; ls, err = tx.Locks(f); return err }))
	if len(ls) != 0 {
		t.Fatalf("locks after close: %+v", ls)
	}
}

// A writer waiting for another owner's transaction gives up when its
// context ends, with the context's error; a cancelled context never starts.
func TestUpdateWaitsAndHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openTable(t, path, Options{})
	b := openTable(t, path, Options{})
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.OpenHandle(OpenRequest{File: 1, Access: rd, Share: ShareAll}); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := b.Update(ctx, func(tx *Tx) error {
		_, err := tx.OpenHandle(OpenRequest{File: 1, Access: wr, Share: ShareAll})
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("while another owner writes: %v, want DeadlineExceeded", err)
	}
	close(release)
	must(t, <-done)
	// Once the writer is done, the same Update goes through.
	if _, err := open(t, b, OpenRequest{File: 1, Access: wr, Share: ShareAll}); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := b.Update(cctx, func(*Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

// The ConflictError names exactly the handles in the way.
func TestConflictErrorNamesBlockers(t *testing.T) {
	tab := openTable(t, "", Options{})
	f := newFile()
	a := mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareRead})               // denies Write
	mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})                     // fine
	c := mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareRead | ShareDelete}) // denies Write
	mustOpen(t, tab, OpenRequest{File: f, Access: attr, Share: ShareNone})                  // attribute-only: never
	_, err := open(t, tab, OpenRequest{File: f, Access: wr, Share: ShareAll})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Handles) != 2 || ce.Handles[0] != a.ID || ce.Handles[1] != c.ID || ce.Lease {
		t.Fatalf("err=%v (%+v)", err, ce)
	}
}

// Read transactions share at most maxReaders connections: more concurrent
// Views wait for one to come back (all of them finish), and a View that
// cannot get one before its context ends fails with the context's error.
func TestViewsShareReaderConnections(t *testing.T) {
	tab := openTable(t, "", Options{})
	ctx := context.Background()
	hold := make(chan struct{})
	var started sync.WaitGroup
	done := make(chan error, maxReaders)
	for range maxReaders {
		started.Add(1)
		go func() {
			done <- tab.View(ctx, func(tx *Tx) error {
				started.Done()
				<-hold
				_, err := tx.Handles(1)
				return err
			})
		}()
	}
	started.Wait()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := tab.View(short, func(*Tx) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("View with every reader busy: %v, want DeadlineExceeded", err)
	}
	// A writer is never short of a connection while readers are busy.
	if _, err := open(t, tab, OpenRequest{File: 1, Access: rd, Share: ShareAll}); err != nil {
		t.Fatalf("Update with every reader busy: %v", err)
	}
	close(hold)
	for range maxReaders {
		must(t, <-done)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*maxReaders)
	for range 4 * maxReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- tab.View(ctx, func(tx *Tx) error {
				// Holding the connection a while is the point: more
				// Views than connections must queue for one.
				time.Sleep(time.Millisecond)
				hs, err := tx.Handles(1)
				if err == nil && len(hs) != 1 {
					err = fmt.Errorf("%d handles on file 1, want 1", len(hs))
				}
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
}

// TestPeek: a Peek (and a PeekStatement, its one statement outside a
// transaction) reads the committed state, cannot change it, leaves no
// transaction open on the writer connection it borrowed, and never waits for
// a write transaction of its own process: while one runs it takes a reader
// connection. Each fn below runs one statement (Handles of a file whose
// handles are all this owner's).
func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		name string
		peek func(tab *Table, ctx context.Context, fn func(tx *Tx) error) error
	}{
		{"Peek", (*Table).Peek},
		{"PeekStatement", (*Table).PeekStatement},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := openTable(t, "", Options{})
			ctx := context.Background()
			h, err := open(t, tab, OpenRequest{File: 7, Access: rd, Share: ShareAll})
			must(t, err)
			err = tc.peek(tab, ctx, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && (len(hs) != 1 || hs[0].ID != h.ID) {
					t.Errorf("Handles in a peek: %+v, want the one handle %d", hs, h.ID)
				}
				return err
			})
			must(t, err)
			err = tc.peek(tab, ctx, func(tx *Tx) error {
				_, err := tx.OpenHandle(OpenRequest{File: 7, Access: rd, Share: ShareAll})
				return err
			})
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("OpenHandle in a peek: %v, want ErrInvalidParameter", err)
			}

			inWrite, release := make(chan struct{}), make(chan struct{})
			wrote := make(chan error, 1)
			go func() {
				wrote <- tab.Update(ctx, func(tx *Tx) error {
					if _, err := tx.CloseHandle(h.ID); err != nil {
						return err
					}
					close(inWrite)
					<-release
					return nil
				})
			}()
			<-inWrite
			short, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err = tc.peek(tab, short, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && len(hs) != 1 {
					t.Errorf("peek during a write sees %d handles, want the committed 1", len(hs))
				}
				return err
			})
			close(release)
			if err != nil {
				t.Fatalf("peek while a write transaction runs: %v", err)
			}
			must(t, <-wrote)
			must(t, tc.peek(tab, ctx, func(tx *Tx) error {
				hs, err := tx.Handles(7)
				if err == nil && len(hs) != 0 {
					t.Errorf("peek after the close: %d handles, want 0", len(hs))
				}
				return err
			}))
		})
	}
}

func TestOnCommit(t *testing.T) {
	tab := openTable(t, "", Options{})
	ctx := context.Background()
	errRollback := errors.New("roll back")
	for _, tc := range []struct {
		name string
		run  func(fn func(tx *Tx) error) error
		fail bool
		want bool
	}{
		{"committed write", func(fn func(tx *Tx) error) error { return tab.Update(ctx, fn) }, false, true},
		{"rolled back write", func(fn func(tx *Tx) error) error { return tab.Update(ctx, fn) }, true, false},
		{"read", func(fn func(tx *Tx) error) error { return tab.View(ctx, fn) }, false, false},
		{"peek", func(fn func(tx *Tx) error) error { return tab.Peek(ctx, fn) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			err := tc.run(func(tx *Tx) error {
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
func TestCloseQuiet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     OpenRequest
		dispose bool
		want    bool
	}{
		{"plain handle", OpenRequest{Access: rd, Share: ShareAll}, false, true},
		{"delete-on-close handle", OpenRequest{Access: del, Share: ShareAll, DeleteOnClose: true}, false, false},
		{"file delete-pending", OpenRequest{Access: rd | del, Share: ShareAll}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := openTable(t, "", Options{})
			f := newFile()
			tc.req.File = f
			h := mustOpen(t, tab, tc.req)
			if tc.dispose {
				must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
			}
			var closed bool
			must(t, update(t, tab, func(tx *Tx) error { var err error; closed, err = tx.CloseQuiet(h.ID); return err }))
			if closed != tc.want {
				t.Fatalf("CloseQuiet = %v, want %v", closed, tc.want)
			}
			var hs []Handle
			must(t, tab.View(t.Context(), func(tx *Tx) error { var err error; hs, err = tx.Handles(f); return err }))
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
func TestHandleOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	tab := openTable(t, path, Options{})
	other := openTable(t, path, Options{})
	ctx := context.Background()
	own := mustOpen(t, tab, OpenRequest{File: 1, Access: rd, Share: ShareAll})
	closed := mustOpen(t, tab, OpenRequest{File: 1, Access: rd, Share: ShareAll})
	forced := mustOpen(t, tab, OpenRequest{File: 2, Access: rd, Share: ShareAll})
	theirs := mustOpen(t, other, OpenRequest{File: 3, Access: rd, Share: ShareAll})
	mustClose(t, tab, closed.ID)
	must(t, other.Update(ctx, func(tx *Tx) error {
		_, err := tx.ForceClose(forced.ID)
		return err
	}))
	for _, tc := range []struct {
		name string
		id   HandleID
		want error
	}{
		{"own, open", own.ID, nil},
		{"own, closed", closed.ID, ErrHandleClosed},
		{"own, force-closed by another owner", forced.ID, ErrHandleClosed},
		{"another owner's, open", theirs.ID, nil},
		{"never opened", own.ID + 100000, ErrHandleClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tab.View(ctx, func(tx *Tx) error { return tx.HandleOpen(tc.id) })
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("HandleOpen(%d) = %v, want %v", tc.id, err, tc.want)
			}
		})
	}
}
