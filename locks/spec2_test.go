package locks

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func lock(t *testing.T, tab *Table, id HandleID, r Range, k LockKind) error {
	t.Helper()
	return update(t, tab, func(tx *Tx) error { return tx.Lock(id, r, k) })
}

func checkIO(t *testing.T, tab *Table, id HandleID, r Range, write bool) error {
	t.Helper()
	return update(t, tab, func(tx *Tx) error { return tx.CheckIO(id, r, write) })
}

// §3.2: an access overlapping an existing lock.
func TestByteRangeConflictTable(t *testing.T) {
	tab := openTable(t, "", Options{})
	type access int
	const (
		read access = iota
		write
		sharedReq
		exclusiveReq
	)
	names := []string{"read", "write", "shared-lock", "exclusive-lock"}
	rows := []struct {
		existing LockKind
		holder   string // "other" | "same"
		want     [4]bool
	}{
		{LockExclusive, "other", [4]bool{true, true, true, true}},
		{LockExclusive, "same", [4]bool{false, false, false, true}},
		{LockShared, "other", [4]bool{false, true, false, true}},
		{LockShared, "same", [4]bool{false, true, false, true}},
	}
	for _, row := range rows {
		for a := read; a <= exclusiveReq; a++ {
			t.Run(fmt.Sprintf("%v/%s/%s", row.existing, row.holder, names[a]), func(t *testing.T) {
				f := newFile()
				h1 := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
				h2 := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
				must(t, lock(t, tab, h1.ID, Range{100, 50}, row.existing))
				who := h2.ID
				if row.holder == "same" {
					who = h1.ID
				}
				r := Range{120, 100} // overlaps [100,149]
				var err error
				var wantErr error
				switch a {
				case read, write:
					err = checkIO(t, tab, who, r, a == write)
					wantErr = ErrLockConflict
				case sharedReq:
					err = lock(t, tab, who, r, LockShared)
					wantErr = ErrLockNotGranted
				case exclusiveReq:
					err = lock(t, tab, who, r, LockExclusive)
					wantErr = ErrLockNotGranted
				}
				want := row.want[a]
				if want != errors.Is(err, wantErr) || (!want && err != nil) {
					t.Fatalf("err=%v, want conflict=%v (%v)", err, want, wantErr)
				}
				// A non-overlapping access never conflicts.
				far := Range{150, 10}
				if a == read || a == write {
					must(t, checkIO(t, tab, who, far, a == write))
				} else {
					k := LockShared
					if a == exclusiveReq {
						k = LockExclusive
					}
					must(t, lock(t, tab, who, far, k))
				}
			})
		}
	}
}

// §3.1: overlap arithmetic, zero length, the 2^64 edge, unlock rules.
func TestByteRangeModel(t *testing.T) {
	tab := openTable(t, "", Options{})
	const max = ^uint64(0)
	t.Run("overlap cases", func(t *testing.T) {
		cases := []struct {
			a, b Range
			want bool
		}{
			{Range{0, 10}, Range{9, 1}, true},
			{Range{0, 10}, Range{10, 1}, false},
			{Range{10, 1}, Range{0, 11}, true},
			{Range{5, 0}, Range{0, 100}, false},
			{Range{0, 0}, Range{0, 0}, false},
			{Range{max, 1}, Range{max - 1, 2}, true},
			{Range{1, max}, Range{max, 1}, true},
		}
		for _, c := range cases {
			if got := c.a.Overlaps(c.b); got != c.want || c.b.Overlaps(c.a) != c.want {
				t.Errorf("%v overlaps %v = %v, want %v", c.a, c.b, got, c.want)
			}
		}
	})
	f := newFile()
	h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	o := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
	t.Run("lock ending exactly at 2^64-1 is valid", func(t *testing.T) {
		must(t, lock(t, tab, h.ID, Range{max, 1}, LockExclusive))
		must(t, lock(t, tab, h.ID, Range{1, max}, LockShared)) // last byte 2^64-1, overlaps own exclusive: ok
	})
	t.Run("lock past 2^64-1 is INVALID_LOCK_RANGE", func(t *testing.T) {
		if err := lock(t, tab, h.ID, Range{max, 2}, LockShared); !errors.Is(err, ErrInvalidLockRange) {
			t.Fatalf("err=%v", err)
		}
		if err := lock(t, tab, h.ID, Range{2, max}, LockShared); !errors.Is(err, ErrInvalidLockRange) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("zero-length access never conflicts", func(t *testing.T) {
		must(t, checkIO(t, tab, o.ID, Range{max, 0}, true))
		must(t, checkIO(t, tab, o.ID, Range{0, 0}, true))
		must(t, checkREST(t, tab, RESTRequest{File: f, Op: OpPutRange, Range: Range{max, 0}}))
	})
	t.Run("zero-length locks are granted (A15)", func(t *testing.T) {
		// Granted beside an exclusive lock of another handle, twice on one
		// range, and unlocked by naming the same empty range.
		must(t, lock(t, tab, o.ID, Range{0, 0}, LockExclusive))
		must(t, lock(t, tab, o.ID, Range{0, 0}, LockExclusive))
		must(t, lock(t, tab, o.ID, Range{max, 0}, LockShared))
		must(t, checkIO(t, tab, h.ID, Range{0, 1}, true))
		for _, r := range []Range{{0, 0}, {0, 0}, {max, 0}} {
			must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(o.ID, r) }))
		}
		if err := update(t, tab, func(tx *Tx) error { return tx.Unlock(o.ID, Range{0, 0}) }); !errors.Is(err, ErrRangeNotLocked) {
			t.Fatalf("unlock of a zero-length range not held: err=%v", err)
		}
	})
	t.Run("unlock must match exactly", func(t *testing.T) {
		for _, r := range []Range{{max, 2}, {max - 1, 2}, {0, 1}} {
			err := update(t, tab, func(tx *Tx) error { return tx.Unlock(h.ID, r) })
			if !errors.Is(err, ErrRangeNotLocked) && !errors.Is(err, ErrInvalidLockRange) {
				t.Fatalf("unlock %v: err=%v", r, err)
			}
		}
		// Another handle cannot unlock h's lock.
		if err := update(t, tab, func(tx *Tx) error { return tx.Unlock(o.ID, Range{max, 1}) }); !errors.Is(err, ErrRangeNotLocked) {
			t.Fatalf("unlock by other handle: err=%v", err)
		}
		must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(h.ID, Range{max, 1}) }))
		if err := update(t, tab, func(tx *Tx) error { return tx.Unlock(h.ID, Range{max, 1}) }); !errors.Is(err, ErrRangeNotLocked) {
			t.Fatalf("second unlock: err=%v", err)
		}
	})
	t.Run("stacked shared locks unlock one at a time", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		b := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		r := Range{0, 10}
		must(t, lock(t, tab, a.ID, r, LockShared))
		must(t, lock(t, tab, a.ID, r, LockShared))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(a.ID, r) }))
		if err := checkIO(t, tab, b.ID, r, true); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("write after one of two unlocks: err=%v", err)
		}
		must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(a.ID, r) }))
		must(t, checkIO(t, tab, b.ID, r, true))
	})
	t.Run("exclusive unlocked before shared on the same range", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		b := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		r := Range{0, 10}
		must(t, lock(t, tab, a.ID, r, LockExclusive))
		must(t, lock(t, tab, a.ID, r, LockShared))
		must(t, update(t, tab, func(tx *Tx) error { return tx.Unlock(a.ID, r) }))
		must(t, checkIO(t, tab, b.ID, r, false)) // only the shared lock is left
		if err := checkIO(t, tab, b.ID, r, true); !errors.Is(err, ErrLockConflict) {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("locks go on close and on force close", func(t *testing.T) {
		g := newFile()
		a := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		b := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		c := mustOpen(t, tab, OpenRequest{File: g, Access: rd | wr, Share: ShareAll})
		must(t, lock(t, tab, a.ID, Range{0, 10}, LockExclusive))
		must(t, lock(t, tab, b.ID, Range{20, 10}, LockExclusive))
		mustClose(t, tab, a.ID)
		must(t, checkIO(t, tab, c.ID, Range{0, 10}, true))
		must(t, update(t, tab, func(tx *Tx) error {
			ok, err := tx.ForceClose(b.ID)
			if !ok {
				return errors.New("force close: handle not found")
			}
			return err
		}))
		must(t, checkIO(t, tab, c.ID, Range{20, 10}, true))
	})
}

// §3.3: REST against byte-range locks.
func TestRESTVsByteRangeLocks(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		name string
		kind LockKind
		op   Op
		rng  Range
		want error
	}{
		{"ranged Get File over exclusive", LockExclusive, OpGetFile, Range{105, 10}, ErrLockConflict},
		{"ranged Get File over shared", LockShared, OpGetFile, Range{105, 10}, nil},
		{"ranged Get File missing every lock", LockExclusive, OpGetFile, Range{0, 100}, nil},
		{"Get File without Range over exclusive anywhere", LockExclusive, OpGetFile, WholeFile, ErrLockConflict},
		{"Get File without Range over shared", LockShared, OpGetFile, WholeFile, nil},
		{"Put Range over exclusive", LockExclusive, OpPutRange, Range{149, 1}, ErrLockConflict},
		{"Put Range over shared", LockShared, OpPutRange, Range{90, 11}, ErrLockConflict},
		{"Put Range beside the lock", LockShared, OpPutRange, Range{150, 10}, nil},
		{"List Ranges not checked", LockExclusive, OpListRanges, WholeFile, nil},
		{"Set Properties (resize) not checked", LockExclusive, OpSetProperties, WholeFile, nil},
		{"Get Properties not checked", LockExclusive, OpGetProperties, WholeFile, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFile()
			h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
			must(t, lock(t, tab, h.ID, Range{100, 50}, c.kind))
			err := checkREST(t, tab, RESTRequest{File: f, Op: c.op, Range: c.rng})
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

func setupLease(t *testing.T, tab *Table, f FileID, s leaseSetup) {
	t.Helper()
	if s == stAvailable {
		return
	}
	must(t, update(t, tab, func(tx *Tx) error {
		if _, err := tx.Lease(LeaseRequest{File: f, Action: LeaseAcquire, ProposedID: idA}); err != nil {
			return err
		}
		if s == stBrokenA {
			_, err := tx.Lease(LeaseRequest{File: f, Action: LeaseBreak})
			return err
		}
		return nil
	}))
}

func leaseInfo(t *testing.T, tab *Table, f FileID) LeaseInfo {
	t.Helper()
	var li LeaseInfo
	must(t, tab.View(t.Context(), func(tx *Tx) error {
		var err error
		li, err = tx.LeaseInfo(f)
		return err
	}))
	return li
}

// §4.2: the full state machine.
func TestLeaseStateMachine(t *testing.T) {
	tab := openTable(t, "", Options{NewLeaseID: func() string { return idX }})
	type outcome struct {
		state LeaseState
		id    string    // lease id after
		ret   string    // returned id
		code  LeaseCode // "" = success
	}
	avail := LeaseInfo{State: LeaseAvailable}
	_ = avail
	ok := func(s LeaseState, id, ret string) outcome { return outcome{s, id, ret, ""} }
	fail := func(s leaseSetup, code LeaseCode) outcome {
		switch s {
		case stLeasedA:
			return outcome{LeaseLeased, idA, "", code}
		case stBrokenA:
			return outcome{LeaseBroken, idA, "", code}
		}
		return outcome{LeaseAvailable, "", "", code}
	}
	np, mm, ap := LeaseNotPresentWithLeaseOperation, LeaseIDMismatchWithLeaseOperation, LeaseAlreadyPresent
	rows := []struct {
		action string
		req    LeaseRequest
		want   [3]outcome // Available, Leased(A), Broken(A)
	}{
		{"acquire, no proposed id", LeaseRequest{Action: LeaseAcquire},
			[3]outcome{ok(LeaseLeased, idX, idX), fail(stLeasedA, ap), ok(LeaseLeased, idX, idX)}},
		{"acquire(A)", LeaseRequest{Action: LeaseAcquire, ProposedID: idA},
			[3]outcome{ok(LeaseLeased, idA, idA), ok(LeaseLeased, idA, idA), ok(LeaseLeased, idA, idA)}},
		{"acquire(B)", LeaseRequest{Action: LeaseAcquire, ProposedID: idB},
			[3]outcome{ok(LeaseLeased, idB, idB), fail(stLeasedA, ap), ok(LeaseLeased, idB, idB)}},
		{"break", LeaseRequest{Action: LeaseBreak},
			[3]outcome{fail(stAvailable, np), ok(LeaseBroken, idA, ""), ok(LeaseBroken, idA, "")}},
		{"change A→B", LeaseRequest{Action: LeaseChange, LeaseID: idA, ProposedID: idB},
			[3]outcome{fail(stAvailable, np), ok(LeaseLeased, idB, idB), fail(stBrokenA, np)}},
		{"change B→A", LeaseRequest{Action: LeaseChange, LeaseID: idB, ProposedID: idA},
			[3]outcome{fail(stAvailable, np), ok(LeaseLeased, idA, idA), fail(stBrokenA, np)}},
		{"change B→C", LeaseRequest{Action: LeaseChange, LeaseID: idB, ProposedID: idC},
			[3]outcome{fail(stAvailable, np), fail(stLeasedA, mm), fail(stBrokenA, np)}},
		{"release(A)", LeaseRequest{Action: LeaseRelease, LeaseID: idA},
			[3]outcome{fail(stAvailable, np), ok(LeaseAvailable, "", ""), ok(LeaseAvailable, "", "")}},
		{"release(B)", LeaseRequest{Action: LeaseRelease, LeaseID: idB},
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
				err := update(t, tab, func(tx *Tx) error {
					var err error
					ret, err = tx.Lease(req)
					return err
				})
				if got := leaseCode(err); got != want.code || (want.code == "" && err != nil) {
					t.Fatalf("err=%v code=%q, want code %q", err, got, want.code)
				}
				if want.code != "" {
					var le *LeaseError
					errors.As(err, &le)
					if le.Status() != 409 || le.File != f {
						t.Fatalf("lease action error status %d file %d, want 409 on %d", le.Status(), le.File, f)
					}
				}
				if ret != want.ret {
					t.Fatalf("returned id %q, want %q", ret, want.ret)
				}
				li := leaseInfo(t, tab, f)
				if li.State != want.state || (want.state != LeaseAvailable && li.ID != want.id) {
					t.Fatalf("after: %v %q, want %v %q", li.State, li.ID, want.state, want.id)
				}
			})
		}
	}
	t.Run("lease ids compare case-insensitively", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		must(t, update(t, tab, func(tx *Tx) error {
			_, err := tx.Lease(LeaseRequest{File: f, Action: LeaseRelease, LeaseID: strings.ToUpper(idA)})
			return err
		}))
	})
	t.Run("renew and unknown actions are invalid (A11)", func(t *testing.T) {
		for _, a := range []LeaseAction{0, LeaseBreak + 1, -1} {
			err := update(t, tab, func(tx *Tx) error { _, err := tx.Lease(LeaseRequest{File: newFile(), Action: a}); return err })
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("action %d: err=%v", a, err)
			}
		}
	})
	t.Run("change without ids, release without id: invalid", func(t *testing.T) {
		for _, req := range []LeaseRequest{
			{Action: LeaseChange, LeaseID: idA}, {Action: LeaseChange, ProposedID: idA}, {Action: LeaseRelease},
		} {
			req.File = newFile()
			err := update(t, tab, func(tx *Tx) error { _, err := tx.Lease(req); return err })
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("%+v: err=%v", req, err)
			}
		}
	})
}

// §4.3: leased file vs REST operations, both tables.
func TestLeaseVsREST(t *testing.T) {
	tab := openTable(t, "", Options{})
	writeOps := []Op{OpCreateOverwrite, OpSetProperties, OpSetMetadata, OpDelete, OpPutRange, OpRenameSource, OpRenameReplace}
	readOps := []Op{OpGetFile, OpGetProperties, OpListRanges, OpList, OpCopySource}
	type col int
	const (
		noID col = iota
		rightID
		wrongID
	)
	colName := []string{"no id", "correct id", "wrong id"}
	for _, st := range []leaseSetup{stAvailable, stLeasedA, stBrokenA} {
		for _, op := range append(append([]Op{}, writeOps...), readOps...) {
			isWrite := restWrites(op)
			for c := noID; c <= wrongID; c++ {
				var want LeaseCode
				switch {
				case st != stLeasedA && c != noID:
					want = LeaseNotPresentWithFileOperation
				case st == stLeasedA && c == noID && isWrite:
					want = LeaseIDMissing
				case st == stLeasedA && c == wrongID:
					want = LeaseIDMismatchWithFileOperation
				}
				t.Run(fmt.Sprintf("state%d/%v/%s", st, op, colName[c]), func(t *testing.T) {
					f := newFile()
					setupLease(t, tab, f, st)
					req := RESTRequest{File: f, Op: op, Range: WholeFile}
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
						var le *LeaseError
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
		must(t, checkREST(t, tab, RESTRequest{File: f, Op: OpCreateOverwrite, LeaseID: idA}))
		if li := leaseInfo(t, tab, f); li.State != LeaseLeased || li.ID != idA {
			t.Fatalf("lease after create: %+v", li)
		}
	})
	t.Run("the lease does not get a writer past share modes", func(t *testing.T) {
		f := newFile()
		mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
		setupLease(t, tab, f, stLeasedA)
		mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareRead}) // allowed while leased (A14)
		err := checkREST(t, tab, RESTRequest{File: f, Op: OpPutRange, LeaseID: idA, Range: Range{0, 1}})
		if !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("err=%v", err)
		}
	})
}

// §4.4 / A14: leased file vs SMB opens, by the new open's access only.
func TestLeaseVsOpens(t *testing.T) {
	tab := openTable(t, "", Options{})
	cases := []struct {
		acc   Access
		share ShareMode
		fails bool
	}{
		{rd, ShareAll, false},
		{rd, ShareRead, false}, // .NET File.OpenRead: shares Read only — succeeds (A14 (a))
		{rd, ShareNone, false},
		{ex, ShareNone, false},
		{attr, ShareNone, false},
		{wr, ShareAll, true},
		{ap, ShareAll, true},
		{del, ShareAll, true},
		{rd | wr, ShareAll, true},
	}
	for _, st := range []leaseSetup{stAvailable, stLeasedA, stBrokenA} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("state%d/%v/%v", st, c.acc, c.share), func(t *testing.T) {
				f := newFile()
				setupLease(t, tab, f, st)
				_, err := open(t, tab, OpenRequest{File: f, Access: c.acc, Share: c.share})
				want := c.fails && st == stLeasedA
				if want != errors.Is(err, ErrSharingViolation) || (!want && err != nil) {
					t.Fatalf("err=%v, want violation=%v", err, want)
				}
				if want {
					var ce *ConflictError
					if !errors.As(err, &ce) || !ce.Lease {
						t.Fatalf("want a ConflictError blaming the lease, got %v", err)
					}
				}
			})
		}
	}
}

// §0.2: the order of the checks, each pair of adjacent conditions.
func TestRESTCheckOrder(t *testing.T) {
	tab := openTable(t, "", Options{})
	t.Run("delete-pending before sharing (A9: Delete File too)", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: del, Share: ShareNone})
		must(t, update(t, tab, func(tx *Tx) error { return tx.Dispose(h.ID, true, Facts{}) }))
		for _, op := range []Op{OpDelete, OpGetFile, OpPutRange} {
			if err := checkREST(t, tab, RESTRequest{File: f, Op: op, Range: WholeFile}); !errors.Is(err, ErrDeletePending) {
				t.Fatalf("%v: err=%v", op, err)
			}
		}
	})
	t.Run("sharing before lease", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareRead})
		err := checkREST(t, tab, RESTRequest{File: f, Op: OpSetMetadata}) // no lease id: LeaseIdMissing too
		if !errors.Is(err, ErrSharingViolation) || leaseCode(err) != "" {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("lease before ReadOnly", func(t *testing.T) {
		f := newFile()
		setupLease(t, tab, f, stLeasedA)
		err := checkREST(t, tab, RESTRequest{File: f, Op: OpSetMetadata, Facts: Facts{ReadOnly: true}})
		if leaseCode(err) != LeaseIDMissing {
			t.Fatalf("err=%v", err)
		}
		err = checkREST(t, tab, RESTRequest{File: f, Op: OpSetMetadata, LeaseID: idA, Facts: Facts{ReadOnly: true}})
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("with the lease id: err=%v", err)
		}
	})
	t.Run("ReadOnly before byte ranges", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd | wr, Share: ShareAll})
		must(t, lock(t, tab, h.ID, Range{0, 10}, LockExclusive))
		err := checkREST(t, tab, RESTRequest{File: f, Op: OpPutRange, Range: Range{0, 10}, Facts: Facts{ReadOnly: true}})
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("err=%v", err)
		}
		err = checkREST(t, tab, RESTRequest{File: f, Op: OpPutRange, Range: Range{0, 10}})
		if !errors.Is(err, ErrLockConflict) {
			t.Fatalf("without ReadOnly: err=%v", err)
		}
	})
	t.Run("lease before byte ranges", func(t *testing.T) {
		f := newFile()
		h := mustOpen(t, tab, OpenRequest{File: f, Access: rd, Share: ShareAll})
		must(t, lock(t, tab, h.ID, Range{0, 10}, LockExclusive))
		setupLease(t, tab, f, stLeasedA)
		err := checkREST(t, tab, RESTRequest{File: f, Op: OpGetFile, LeaseID: idB, Range: Range{0, 10}})
		if leaseCode(err) != LeaseIDMismatchWithFileOperation {
			t.Fatalf("err=%v", err)
		}
	})
}
