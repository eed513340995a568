package locks

import (
	"context"
	"errors"
	"testing"
	"time"
)

// decideCache runs one DecideCache in its own transaction.
func decideCache(t *testing.T, tab *Table, c CacheCall) CacheResult {
	t.Helper()
	var r CacheResult
	if err := tab.Update(context.Background(), func(tx *Tx) error {
		var err error
		r, err = tx.DecideCache(c)
		return err
	}); err != nil {
		t.Fatalf("DecideCache(%+v): %v", c.Req, err)
	}
	return r
}

func takeBreaks(t *testing.T, tab *Table) []BreakNote {
	t.Helper()
	var out []BreakNote
	if err := tab.Update(context.Background(), func(tx *Tx) error {
		var err error
		out, err = tx.TakeBreaks()
		return err
	}); err != nil {
		t.Fatalf("TakeBreaks: %v", err)
	}
	return out
}

// TestCacheStoredBreaks: caching lives in the lock table. A batch oplock
// granted to one open is broken to level II by a second open (written to
// the outbox, the opener waits), the acknowledgment completes it; a lease
// is granted RWH with a v2 epoch, a second client's open breaks it to RH
// and waits, an unacknowledged break completes to none at its deadline,
// and a client never breaks its own lease.
func TestCacheStoredBreaks(t *testing.T) {
	now := time.Unix(1000, 0)
	tab := openTable(t, "", Options{Now: func() time.Time { return now }})
	const file = FileID(7)
	ctx := context.Background()
	rwShare := ShareRead | ShareWrite

	// An oplock: batch granted, broken to level II by another open.
	h1 := mustOpen(t, tab, OpenRequest{File: file, Access: AccessRead | AccessWrite, Share: rwShare})
	r := decideCache(t, tab, CacheCall{File: file, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead | AccessWrite, Share: rwShare, Handle: h1.ID, RequestOplock: OplockBatch}})
	if r.Wait || r.GrantOplock != OplockBatch {
		t.Fatalf("first open: %+v, want batch", r)
	}
	second := CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: rwShare, RequestOplock: OplockBatch}
	pre := decideCache(t, tab, CacheCall{File: file, Req: second})
	if !pre.Wait || len(pre.Breaks) != 1 || pre.Breaks[0].ToOplock != OplockLevelII || !pre.Breaks[0].AckRequired {
		t.Fatalf("second open: %+v, want a wait for a break to level II", pre)
	}
	notes := takeBreaks(t, tab)
	if len(notes) != 1 || notes[0].Handle != h1.ID || notes[0].ToOplock != OplockLevelII || !notes[0].AckRequired {
		t.Fatalf("outbox: %+v", notes)
	}
	if again := decideCache(t, tab, CacheCall{File: file, Req: second}); !again.Wait || len(again.Breaks) != 0 {
		t.Fatalf("while breaking: %+v, want a wait and no second break", again)
	}
	changed := tab.CacheChanges()
	must(t, tab.Update(ctx, func(tx *Tx) error {
		lvl, err := tx.AckOplockBreak(file, h1.ID, OplockLevelII)
		if err != nil || lvl != OplockLevelII {
			t.Errorf("ack: %v %v", lvl, err)
		}
		return nil
	}))
	select {
	case <-changed:
	default:
		t.Fatal("an acknowledgment did not signal CacheChanges")
	}
	h2 := mustOpen(t, tab, OpenRequest{File: file, Access: AccessRead, Share: rwShare})
	r = decideCache(t, tab, CacheCall{File: file, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: rwShare, Handle: h2.ID, RequestOplock: OplockBatch}})
	if r.Wait || r.GrantOplock != OplockLevelII {
		t.Fatalf("second open after the ack: %+v, want level II", r)
	}
	must(t, tab.Update(ctx, func(tx *Tx) error {
		if _, err := tx.AckOplockBreak(file, h1.ID, OplockLevelII); !errors.Is(err, ErrNoBreak) {
			t.Errorf("ack without a break: %v, want ErrNoBreak", err)
		}
		return nil
	}))

	// A lease on another file.
	const lf = FileID(8)
	a := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{0xa}}
	b := LeaseIdentity{Client: [16]byte{2}, Key: LeaseKey{0xb}}
	ha := mustOpen(t, tab, OpenRequest{File: lf, Access: AccessRead | AccessWrite, Share: rwShare})
	r = decideCache(t, tab, CacheCall{File: lf, LeaseVersion: 2, LeaseEpoch: 0x10,
		Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead | AccessWrite, Share: rwShare, Handle: ha.ID, Lease: &a, RequestLease: CacheRWH}})
	if r.Grant != CacheRWH || r.Lease == nil || r.Lease.Epoch != 0x11 || r.GrantOplock != OplockLease {
		t.Fatalf("lease grant: %+v lease %+v, want RWH epoch 0x11", r, r.Lease)
	}
	// Same key, second open: nothing breaks, the lease is kept.
	ha2 := mustOpen(t, tab, OpenRequest{File: lf, Access: AccessRead, Share: rwShare})
	r = decideCache(t, tab, CacheCall{File: lf, LeaseVersion: 2, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: rwShare, Handle: ha2.ID, Lease: &a, RequestLease: CacheRWH}})
	if r.Wait || len(r.Breaks) != 0 || r.Grant != CacheRWH || r.Lease.Epoch != 0x11 {
		t.Fatalf("own lease again: %+v", r)
	}
	// The key on another file is refused.
	must(t, tab.Update(ctx, func(tx *Tx) error {
		_, err := tx.DecideCache(CacheCall{File: file, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Lease: &a, RequestLease: CacheR}})
		if !errors.Is(err, ErrLeaseKeyInUse) {
			t.Errorf("key on another file: %v", err)
		}
		return nil
	}))
	pre = decideCache(t, tab, CacheCall{File: lf, BreakTimeout: time.Second, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: rwShare, Lease: &b, RequestLease: CacheRWH}})
	if !pre.Wait || len(pre.Breaks) != 1 || pre.Breaks[0].To != CacheRH || pre.Breaks[0].NewEpoch != 0x12 {
		t.Fatalf("other client: %+v", pre)
	}
	notes = takeBreaks(t, tab)
	if len(notes) != 1 || notes[0].Lease == nil || *notes[0].Lease != a || notes[0].To != CacheRH || notes[0].NewEpoch != 0x12 {
		t.Fatalf("outbox: %+v", notes)
	}
	must(t, tab.Update(ctx, func(tx *Tx) error {
		if _, err := tx.AckLeaseBreak(a, CacheRWH); !errors.Is(err, ErrBadAck) {
			t.Errorf("ack asking RWH after a break to RH: %v, want ErrBadAck", err)
		}
		return nil
	}))
	// Nobody acknowledges: at the deadline the break completes to none.
	now = now.Add(time.Second)
	hb := mustOpen(t, tab, OpenRequest{File: lf, Access: AccessRead, Share: rwShare})
	r = decideCache(t, tab, CacheCall{File: lf, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: rwShare, Handle: hb.ID, Lease: &b, RequestLease: CacheRWH}})
	if r.Wait || r.Grant != CacheRH {
		t.Fatalf("after the deadline: %+v, want RH granted", r)
	}
	must(t, tab.View(ctx, func(tx *Tx) error {
		_, l, err := tx.CacheOf(lf, ha.ID)
		if err != nil || l == nil || l.State != CacheNone {
			t.Errorf("timed-out lease: %+v %v, want none", l, err)
		}
		return nil
	}))
	// Closing every open of a lease forgets it.
	for _, id := range []HandleID{ha.ID, ha2.ID} {
		if _, err := closeH(t, tab, id); err != nil {
			t.Fatal(err)
		}
		must(t, tab.Update(ctx, func(tx *Tx) error { return tx.DropCache(lf, id) }))
	}
	must(t, tab.View(ctx, func(tx *Tx) error {
		var n int64
		must(t, tx.queryRow(`SELECT count(*) FROM lk_smbleases WHERE client = ?`, []any{a.Client[:]}, &n))
		if n != 0 {
			t.Errorf("%d lease rows after its opens closed", n)
		}
		return nil
	}))
}

// TestCacheBreaksAcrossOwners: the outbox and the polls carry a break
// between two owners (two Tables on one database, as two processes):
// B's REST Get File against A's RWH lease records a break addressed to A
// and waits; A finds it by polling its outbox (no signal crosses
// owners), acknowledges, and B's wait ends at its next poll.
func TestCacheBreaksAcrossOwners(t *testing.T) {
	path := t.TempDir() + "/locks.db"
	a := openTable(t, path, Options{})
	b := openTable(t, path, Options{})
	ctx := context.Background()
	const file = FileID(9)
	id := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{1}}
	h := mustOpen(t, a, OpenRequest{File: file, Access: AccessRead | AccessWrite, Share: ShareAll})
	r := decideCache(t, a, CacheCall{File: file, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead | AccessWrite,
		Share: ShareAll, Handle: h.ID, Lease: &id, RequestLease: CacheRWH}})
	if r.Grant != CacheRWH {
		t.Fatalf("grant: %+v", r)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.WaitCache(ctx, CacheCall{File: file, Req: CacheRequest{Who: RequesterREST, Kind: CacheOpREST, REST: OpGetFile}}, 5*time.Millisecond)
		done <- err
	}()
	var notes []BreakNote
	for len(notes) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the REST wait ended before the acknowledgment: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		notes = takeBreaks(t, a)
	}
	if len(notes) != 1 || notes[0].Lease == nil || *notes[0].Lease != id || notes[0].To != CacheRH {
		t.Fatalf("A's outbox: %+v", notes)
	}
	if n := takeBreaks(t, b); len(n) != 0 {
		t.Fatalf("B's outbox holds A's break: %+v", n)
	}
	must(t, a.Update(ctx, func(tx *Tx) error {
		_, err := tx.AckLeaseBreak(id, CacheRH)
		return err
	}))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("REST wait: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the REST wait did not end after the acknowledgment")
	}
}
