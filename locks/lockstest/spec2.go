package lockstest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

func lock(t *testing.T, tab *locks.Table, id locks.HandleID, r locks.Range, k locks.LockKind) error {
	t.Helper()
	return update(t, tab, func(tx *locks.Tx) error { return tx.Lock(id, r, k) })
}

func checkIO(t *testing.T, tab *locks.Table, id locks.HandleID, r locks.Range, write bool) error {
	t.Helper()
	return update(t, tab, func(tx *locks.Tx) error { return tx.CheckIO(id, r, write) })
}

// §3.2: an access overlapping an existing lock.
func testByteRangeConflictTable(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	type access int
	const (
		read access = iota
		write
		sharedReq
		exclusiveReq
	)
	names := []string{"read", "write", "shared-lock", "exclusive-lock"}
	rows := []struct {
		existing locks.LockKind
		holder   string // "other" | "same"
		want     [4]bool
	}{
		{locks.LockExclusive, "other", [4]bool{true, true, true, true}},
		{locks.LockExclusive, "same", [4]bool{false, false, false, true}},
		{locks.LockShared, "other", [4]bool{false, true, false, true}},
		{locks.LockShared, "same", [4]bool{false, true, false, true}},
	}
	for _, row := range rows {
		for a := read; a <= exclusiveReq; a++ {
			t.Run(fmt.Sprintf("%v/%s/%s", row.existing, row.holder, names[a]), func(t *testing.T) {
				f := newFile()
				h1 := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
				h2 := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
				must(t, lock(t, tab, h1.ID, locks.Range{Offset: 100, Length: 50}, row.existing))
				who := h2.ID
				if row.holder == "same" {
					who = h1.ID
				}
				r := locks.Range{Offset: 120, Length: 100} // overlaps [100,149]
				var err error
				var wantErr error
				switch a {
				case read, write:
					err = checkIO(t, tab, who, r, a == write)
					wantErr = locks.ErrLockConflict
				case sharedReq:
					err = lock(t, tab, who, r, locks.LockShared)
					wantErr = locks.ErrLockNotGranted
				case exclusiveReq:
					err = lock(t, tab, who, r, locks.LockExclusive)
					wantErr = locks.ErrLockNotGranted
				}
				want := row.want[a]
				if want != errors.Is(err, wantErr) || (!want && err != nil) {
					t.Fatalf("err=%v, want conflict=%v (%v)", err, want, wantErr)
				}
				// A non-overlapping access never conflicts.
				far := locks.Range{Offset: 150, Length: 10}
				if a == read || a == write {
					must(t, checkIO(t, tab, who, far, a == write))
				} else {
					k := locks.LockShared
					if a == exclusiveReq {
						k = locks.LockExclusive
					}
					must(t, lock(t, tab, who, far, k))
				}
			})
		}
	}
}

// §3.1: overlap arithmetic, zero length, the 2^64 edge, unlock rules.
func testByteRangeModel(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	const max = ^uint64(0)
	t.Run("overlap cases", func(t *testing.T) {
		cases := []struct {
			a, b locks.Range
			want bool
		}{
			{locks.Range{Offset: 0, Length: 10}, locks.Range{Offset: 9, Length: 1}, true},
			{locks.Range{Offset: 0, Length: 10}, locks.Range{Offset: 10, Length: 1}, false},
			{locks.Range{Offset: 10, Length: 1}, locks.Range{Offset: 0, Length: 11}, true},
			{locks.Range{Offset: 5, Length: 0}, locks.Range{Offset: 0, Length: 100}, false},
			{locks.Range{Offset: 0, Length: 0}, locks.Range{Offset: 0, Length: 0}, false},
			{locks.Range{Offset: max, Length: 1}, locks.Range{Offset: max - 1, Length: 2}, true},
			{locks.Range{Offset: 1, Length: max}, locks.Range{Offset: max, Length: 1}, true},
		}
		for _, c := range cases {
			if got := c.a.Overlaps(c.b); got != c.want || c.b.Overlaps(c.a) != c.want {
				t.Errorf("%v overlaps %v = %v, want %v", c.a, c.b, got, c.want)
			}
		}
	})
	f := newFile()
	h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	o := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
	t.Run("lock ending exactly at 2^64-1 is valid", func(t *testing.T) {
		must(t, lock(t, tab, h.ID, locks.Range{Offset: max, Length: 1}, locks.LockExclusive))
		must(t, lock(t, tab, h.ID, locks.Range{Offset: 1, Length: max}, locks.LockShared)) // last byte 2^64-1, overlaps own exclusive: ok
	})
	t.Run("lock past 2^64-1 is INVALID_LOCK_RANGE", func(t *testing.T) {
		if err := lock(t, tab, h.ID, locks.Range{Offset: max, Length: 2}, locks.LockShared); !errors.Is(err, locks.ErrInvalidLockRange) {
			t.Fatalf("err=%v", err)
		}
		if err := lock(t, tab, h.ID, locks.Range{Offset: 2, Length: max}, locks.LockShared); !errors.Is(err, locks.ErrInvalidLockRange) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("zero-length access never conflicts", func(t *testing.T) {
		must(t, checkIO(t, tab, o.ID, locks.Range{Offset: max, Length: 0}, true))
		must(t, checkIO(t, tab, o.ID, locks.Range{Offset: 0, Length: 0}, true))
		must(t, checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpPutRange, Range: locks.Range{Offset: max, Length: 0}}))
	})
	t.Run("zero-length locks are granted (A15)", func(t *testing.T) {
		// Granted beside an exclusive lock of another handle, twice on one
		// range, and unlocked by naming the same empty range.
		must(t, lock(t, tab, o.ID, locks.Range{Offset: 0, Length: 0}, locks.LockExclusive))
		must(t, lock(t, tab, o.ID, locks.Range{Offset: 0, Length: 0}, locks.LockExclusive))
		must(t, lock(t, tab, o.ID, locks.Range{Offset: max, Length: 0}, locks.LockShared))
		must(t, checkIO(t, tab, h.ID, locks.Range{Offset: 0, Length: 1}, true))
		for _, r := range []locks.Range{{Offset: 0, Length: 0}, {Offset: 0, Length: 0}, {Offset: max, Length: 0}} {
			must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(o.ID, r) }))
		}
		if err := update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(o.ID, locks.Range{Offset: 0, Length: 0}) }); !errors.Is(err, locks.ErrRangeNotLocked) {
			t.Fatalf("unlock of a zero-length range not held: err=%v", err)
		}
	})
	t.Run("unlock must match exactly", func(t *testing.T) {
		for _, r := range []locks.Range{{Offset: max, Length: 2}, {Offset: max - 1, Length: 2}, {Offset: 0, Length: 1}} {
			err := update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(h.ID, r) })
			if !errors.Is(err, locks.ErrRangeNotLocked) && !errors.Is(err, locks.ErrInvalidLockRange) {
				t.Fatalf("unlock %v: err=%v", r, err)
			}
		}
		// Another handle cannot unlock h's lock.
		if err := update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(o.ID, locks.Range{Offset: max, Length: 1}) }); !errors.Is(err, locks.ErrRangeNotLocked) {
			t.Fatalf("unlock by other handle: err=%v", err)
		}
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(h.ID, locks.Range{Offset: max, Length: 1}) }))
		if err := update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(h.ID, locks.Range{Offset: max, Length: 1}) }); !errors.Is(err, locks.ErrRangeNotLocked) {
			t.Fatalf("second unlock: err=%v", err)
		}
	})
	t.Run("stacked shared locks unlock one at a time", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		b := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		r := locks.Range{Offset: 0, Length: 10}
		must(t, lock(t, tab, a.ID, r, locks.LockShared))
		must(t, lock(t, tab, a.ID, r, locks.LockShared))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(a.ID, r) }))
		if err := checkIO(t, tab, b.ID, r, true); !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("write after one of two unlocks: err=%v", err)
		}
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(a.ID, r) }))
		must(t, checkIO(t, tab, b.ID, r, true))
	})
	t.Run("exclusive unlocked before shared on the same range", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		b := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		r := locks.Range{Offset: 0, Length: 10}
		must(t, lock(t, tab, a.ID, r, locks.LockExclusive))
		must(t, lock(t, tab, a.ID, r, locks.LockShared))
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Unlock(a.ID, r) }))
		must(t, checkIO(t, tab, b.ID, r, false)) // only the shared lock is left
		if err := checkIO(t, tab, b.ID, r, true); !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("locks go on close and on force close", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		b := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		c := mustOpen(t, tab, locks.OpenRequest{File: g, Access: rd | wr, Share: locks.ShareAll})
		must(t, lock(t, tab, a.ID, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive))
		must(t, lock(t, tab, b.ID, locks.Range{Offset: 20, Length: 10}, locks.LockExclusive))
		mustClose(t, tab, a.ID)
		must(t, checkIO(t, tab, c.ID, locks.Range{Offset: 0, Length: 10}, true))
		must(t, update(t, tab, func(tx *locks.Tx) error {
			ok, err := tx.ForceClose(b.ID)
			if !ok {
				return errors.New("force close: handle not found")
			}
			return err
		}))
		must(t, checkIO(t, tab, c.ID, locks.Range{Offset: 20, Length: 10}, true))
	})
}

// §3.3: REST against byte-range locks.
func testRESTVsByteRangeLocks(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		name string
		kind locks.LockKind
		op   locks.Op
		rng  locks.Range
		want error
	}{
		{"ranged Get File over exclusive", locks.LockExclusive, locks.OpGetFile, locks.Range{Offset: 105, Length: 10}, locks.ErrLockConflict},
		{"ranged Get File over shared", locks.LockShared, locks.OpGetFile, locks.Range{Offset: 105, Length: 10}, nil},
		{"ranged Get File missing every lock", locks.LockExclusive, locks.OpGetFile, locks.Range{Offset: 0, Length: 100}, nil},
		{"Get File without Range over exclusive anywhere", locks.LockExclusive, locks.OpGetFile, locks.WholeFile, locks.ErrLockConflict},
		{"Get File without Range over shared", locks.LockShared, locks.OpGetFile, locks.WholeFile, nil},
		{"Put Range over exclusive", locks.LockExclusive, locks.OpPutRange, locks.Range{Offset: 149, Length: 1}, locks.ErrLockConflict},
		{"Put Range over shared", locks.LockShared, locks.OpPutRange, locks.Range{Offset: 90, Length: 11}, locks.ErrLockConflict},
		{"Put Range beside the lock", locks.LockShared, locks.OpPutRange, locks.Range{Offset: 150, Length: 10}, nil},
		{"List Ranges not checked", locks.LockExclusive, locks.OpListRanges, locks.WholeFile, nil},
		{"Set Properties (resize) not checked", locks.LockExclusive, locks.OpSetProperties, locks.WholeFile, nil},
		{"Get Properties not checked", locks.LockExclusive, locks.OpGetProperties, locks.WholeFile, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
			must(t, lock(t, tab, h.ID, locks.Range{Offset: 100, Length: 50}, c.kind))
			err := checkREST(t, tab, locks.RESTRequest{File: f, Op: c.op, Range: c.rng})
			if !errIs(err, c.want) {
				t.Fatalf("err=%v, want %v", err, c.want)
			}
		})
	}
}

type leaseSetup int

const (
	stAvailable leaseSetup = iota
	stLeasedA
	stBrokenA
)

const (
	idA = "aaaaaaaa-0000-0000-0000-000000000001"
	idB = "bbbbbbbb-0000-0000-0000-000000000002"
	idC = "cccccccc-0000-0000-0000-000000000003"
	idX = "eeeeeeee-0000-0000-0000-00000000000e" // what the generator hands out
)

func setupLease(t *testing.T, tab *locks.Table, f locks.FileID, s leaseSetup) {
	t.Helper()
	if s == stAvailable {
		return
	}
	must(t, update(t, tab, func(tx *locks.Tx) error {
		if _, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseAcquire, ProposedID: idA}); err != nil {
			return err
		}
		if s == stBrokenA {
			_, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseBreak})
			return err
		}
		return nil
	}))
}

func leaseInfo(t *testing.T, tab *locks.Table, f locks.FileID) locks.LeaseInfo {
	t.Helper()
	var li locks.LeaseInfo
	must(t, tab.View(t.Context(), func(tx *locks.Tx) error {
		var err error
		li, err = tx.LeaseInfo(f)
		return err
	}))
	return li
}

// §4.2: the full state machine.
func testLeaseStateMachine(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{NewLeaseID: func() string { return idX }})
	type outcome struct {
		state locks.LeaseState
		id    string          // lease id after
		ret   string          // returned id
		code  locks.LeaseCode // "" = success
	}
	avail := locks.LeaseInfo{State: locks.LeaseAvailable}
	_ = avail
	ok := func(s locks.LeaseState, id, ret string) outcome { return outcome{s, id, ret, ""} }
	fail := func(s leaseSetup, code locks.LeaseCode) outcome {
		switch s {
		case stLeasedA:
			return outcome{locks.LeaseLeased, idA, "", code}
		case stBrokenA:
			return outcome{locks.LeaseBroken, idA, "", code}
		}
		return outcome{locks.LeaseAvailable, "", "", code}
	}
	np, mm, ap := locks.LeaseNotPresentWithLeaseOperation, locks.LeaseIDMismatchWithLeaseOperation, locks.LeaseAlreadyPresent
	rows := []struct {
		action string
		req    locks.LeaseRequest
		want   [3]outcome // Available, Leased(A), Broken(A)
	}{
		{"acquire, no proposed id", locks.LeaseRequest{Action: locks.LeaseAcquire},
			[3]outcome{ok(locks.LeaseLeased, idX, idX), fail(stLeasedA, ap), ok(locks.LeaseLeased, idX, idX)}},
		{"acquire(A)", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: idA},
			[3]outcome{ok(locks.LeaseLeased, idA, idA), ok(locks.LeaseLeased, idA, idA), ok(locks.LeaseLeased, idA, idA)}},
		{"acquire(B)", locks.LeaseRequest{Action: locks.LeaseAcquire, ProposedID: idB},
			[3]outcome{ok(locks.LeaseLeased, idB, idB), fail(stLeasedA, ap), ok(locks.LeaseLeased, idB, idB)}},
		{"break", locks.LeaseRequest{Action: locks.LeaseBreak},
			[3]outcome{fail(stAvailable, np), ok(locks.LeaseBroken, idA, ""), ok(locks.LeaseBroken, idA, "")}},
		{"change A→B", locks.LeaseRequest{Action: locks.LeaseChange, LeaseID: idA, ProposedID: idB},
			[3]outcome{fail(stAvailable, np), ok(locks.LeaseLeased, idB, idB), fail(stBrokenA, np)}},
		{"change B→A", locks.LeaseRequest{Action: locks.LeaseChange, LeaseID: idB, ProposedID: idA},
			[3]outcome{fail(stAvailable, np), ok(locks.LeaseLeased, idA, idA), fail(stBrokenA, np)}},
		{"change B→C", locks.LeaseRequest{Action: locks.LeaseChange, LeaseID: idB, ProposedID: idC},
			[3]outcome{fail(stAvailable, np), fail(stLeasedA, mm), fail(stBrokenA, np)}},
		{"release(A)", locks.LeaseRequest{Action: locks.LeaseRelease, LeaseID: idA},
			[3]outcome{fail(stAvailable, np), ok(locks.LeaseAvailable, "", ""), ok(locks.LeaseAvailable, "", "")}},
		{"release(B)", locks.LeaseRequest{Action: locks.LeaseRelease, LeaseID: idB},
			[3]outcome{fail(stAvailable, np), fail(stLeasedA, mm), fail(stBrokenA, mm)}},
	}
	states := []string{"Available", "Leased(A)", "Broken(A)"}
	for _, row := range rows {
		for si, want := range row.want {
			t.Run(row.action+"/"+states[si], func(t *testing.T) {
				f := newFile()
				setupLease(t, tab, f, leaseSetup(si))
				req := row.req
				req.File = f
				var ret string
				err := update(t, tab, func(tx *locks.Tx) error {
					var err error
					ret, err = tx.Lease(req)
					return err
				})
				if got := leaseCode(err); got != want.code || (want.code == "" && err != nil) {
					t.Fatalf("err=%v code=%q, want code %q", err, got, want.code)
				}
				if want.code != "" {
					var le *locks.LeaseError
					errors.As(err, &le)
					if le.Status() != 409 || le.File != f {
						t.Fatalf("lease action error status %d file %d, want 409 on %d", le.Status(), le.File, f)
					}
				}
				if ret != want.ret {
					t.Fatalf("returned id %q, want %q", ret, want.ret)
				}
				li := leaseInfo(t, tab, f)
				if li.State != want.state || (want.state != locks.LeaseAvailable && li.ID != want.id) {
					t.Fatalf("after: %v %q, want %v %q", li.State, li.ID, want.state, want.id)
				}
			})
		}
	}
	t.Run("lease ids compare case-insensitively", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		must(t, update(t, tab, func(tx *locks.Tx) error {
			_, err := tx.Lease(locks.LeaseRequest{File: f, Action: locks.LeaseRelease, LeaseID: strings.ToUpper(idA)})
			return err
		}))
	})
	t.Run("renew and unknown actions are invalid (A11)", func(t *testing.T) {
		for _, a := range []locks.LeaseAction{0, locks.LeaseBreak + 1, -1} {
			err := update(t, tab, func(tx *locks.Tx) error {
				_, err := tx.Lease(locks.LeaseRequest{File: newFile(), Action: a})
				return err
			})
			if !errors.Is(err, locks.ErrInvalidParameter) {
				t.Fatalf("action %d: err=%v", a, err)
			}
		}
	})
	t.Run("change without ids, release without id: invalid", func(t *testing.T) {
		for _, req := range []locks.LeaseRequest{
			{Action: locks.LeaseChange, LeaseID: idA}, {Action: locks.LeaseChange, ProposedID: idA}, {Action: locks.LeaseRelease},
		} {
			req.File = newFile()
			err := update(t, tab, func(tx *locks.Tx) error { _, err := tx.Lease(req); return err })
			if !errors.Is(err, locks.ErrInvalidParameter) {
				t.Fatalf("%+v: err=%v", req, err)
			}
		}
	})
}

// §4.3: leased file vs REST operations, both tables.
func testLeaseVsREST(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	writeOps := []locks.Op{locks.OpCreateOverwrite, locks.OpSetProperties, locks.OpSetMetadata, locks.OpDelete, locks.OpPutRange, locks.OpRenameSource, locks.OpRenameReplace}
	readOps := []locks.Op{locks.OpGetFile, locks.OpGetProperties, locks.OpListRanges, locks.OpList, locks.OpCopySource}
	type col int
	const (
		noID col = iota
		rightID
		wrongID
	)
	colName := []string{"no id", "correct id", "wrong id"}
	for _, st := range []leaseSetup{stAvailable, stLeasedA, stBrokenA} {
		for _, op := range append(append([]locks.Op{}, writeOps...), readOps...) {
			isWrite := slices.Contains(writeOps, op) // the write-type calls of §4.3
			for c := noID; c <= wrongID; c++ {
				var want locks.LeaseCode
				switch {
				case st != stLeasedA && c != noID:
					want = locks.LeaseNotPresentWithFileOperation
				case st == stLeasedA && c == noID && isWrite:
					want = locks.LeaseIDMissing
				case st == stLeasedA && c == wrongID:
					want = locks.LeaseIDMismatchWithFileOperation
				}
				t.Run(fmt.Sprintf("state%d/%v/%s", st, op, colName[c]), func(t *testing.T) {
					f := newFile()
					setupLease(t, tab, f, st)
					req := locks.RESTRequest{File: f, Op: op, Range: locks.WholeFile}
					switch c {
					case rightID:
						req.LeaseID = idA
					case wrongID:
						req.LeaseID = idB
					}
					err := checkREST(t, tab, req)
					if got := leaseCode(err); got != want || (want == "" && err != nil) {
						t.Fatalf("err=%v, want code %q", err, want)
					}
					if want != "" {
						var le *locks.LeaseError
						errors.As(err, &le)
						if le.Status() != 412 {
							t.Fatalf("status %d, want 412 (A2)", le.Status())
						}
					}
				})
			}
		}
	}
	t.Run("Create File over a leased file (id supplied) keeps the lease", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		must(t, checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpCreateOverwrite, LeaseID: idA}))
		if li := leaseInfo(t, tab, f); li.State != locks.LeaseLeased || li.ID != idA {
			t.Fatalf("lease after create: %+v", li)
		}
	})
	t.Run("the lease does not get a writer past share modes", func(t *testing.T) {
		f := newFile()
		mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
		setupLease(t, tab, f, stLeasedA)
		mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareRead}) // allowed while leased (A14)
		err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpPutRange, LeaseID: idA, Range: locks.Range{Offset: 0, Length: 1}})
		if !errors.Is(err, locks.ErrSharingViolation) {
			t.Fatalf("err=%v", err)
		}
	})
}

// §4.4 / A14: leased file vs SMB opens, by the new open's access only.
func testLeaseVsOpens(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	cases := []struct {
		acc   locks.Access
		share locks.ShareMode
		fails bool
	}{
		{rd, locks.ShareAll, false},
		{rd, locks.ShareRead, false}, // .NET File.OpenRead: shares Read only — succeeds (A14 (a))
		{rd, locks.ShareNone, false},
		{ex, locks.ShareNone, false},
		{attr, locks.ShareNone, false},
		{wr, locks.ShareAll, true},
		{ap, locks.ShareAll, true},
		{del, locks.ShareAll, true},
		{rd | wr, locks.ShareAll, true},
	}
	for _, st := range []leaseSetup{stAvailable, stLeasedA, stBrokenA} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("state%d/%v/%v", st, c.acc, c.share), func(t *testing.T) {
				f := newFile()
				setupLease(t, tab, f, st)
				_, err := open(t, tab, locks.OpenRequest{File: f, Access: c.acc, Share: c.share})
				want := c.fails && st == stLeasedA
				if want != errors.Is(err, locks.ErrSharingViolation) || (!want && err != nil) {
					t.Fatalf("err=%v, want violation=%v", err, want)
				}
				if want {
					var ce *locks.ConflictError
					if !errors.As(err, &ce) || !ce.Lease {
						t.Fatalf("want a ConflictError blaming the lease, got %v", err)
					}
				}
			})
		}
	}
}

// §0.2: the order of the checks, each pair of adjacent conditions.
func testRESTCheckOrder(t *testing.T, newDB func(*testing.T) Opener) {
	tab := openTable(t, newDB(t), locks.Options{})
	t.Run("delete-pending before sharing (A9: Delete File too)", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: del, Share: locks.ShareNone})
		must(t, update(t, tab, func(tx *locks.Tx) error { return tx.Dispose(h.ID, true, locks.Facts{}) }))
		for _, op := range []locks.Op{locks.OpDelete, locks.OpGetFile, locks.OpPutRange} {
			if err := checkREST(t, tab, locks.RESTRequest{File: f, Op: op, Range: locks.WholeFile}); !errors.Is(err, locks.ErrDeletePending) {
				t.Fatalf("%v: err=%v", op, err)
			}
		}
	})
	t.Run("sharing before lease", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareRead})
		err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpSetMetadata}) // no lease id: LeaseIdMissing too
		if !errors.Is(err, locks.ErrSharingViolation) || leaseCode(err) != "" {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("lease before ReadOnly", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpSetMetadata, Facts: locks.Facts{ReadOnly: true}})
		if leaseCode(err) != locks.LeaseIDMissing {
			t.Fatalf("err=%v", err)
		}
		err = checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpSetMetadata, LeaseID: idA, Facts: locks.Facts{ReadOnly: true}})
		if !errors.Is(err, locks.ErrReadOnly) {
			t.Fatalf("with the lease id: err=%v", err)
		}
	})
	t.Run("ReadOnly before byte ranges", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd | wr, Share: locks.ShareAll})
		must(t, lock(t, tab, h.ID, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive))
		err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpPutRange, Range: locks.Range{Offset: 0, Length: 10}, Facts: locks.Facts{ReadOnly: true}})
		if !errors.Is(err, locks.ErrReadOnly) {
			t.Fatalf("err=%v", err)
		}
		err = checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpPutRange, Range: locks.Range{Offset: 0, Length: 10}})
		if !errors.Is(err, locks.ErrLockConflict) {
			t.Fatalf("without ReadOnly: err=%v", err)
		}
	})
	t.Run("lease before byte ranges", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, locks.OpenRequest{File: f, Access: rd, Share: locks.ShareAll})
		must(t, lock(t, tab, h.ID, locks.Range{Offset: 0, Length: 10}, locks.LockExclusive))
		setupLease(t, tab, f, stLeasedA)
		err := checkREST(t, tab, locks.RESTRequest{File: f, Op: locks.OpGetFile, LeaseID: idB, Range: locks.Range{Offset: 0, Length: 10}})
		if leaseCode(err) != locks.LeaseIDMismatchWithFileOperation {
			t.Fatalf("err=%v", err)
		}
	})
}
