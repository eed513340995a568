package locks

import (
	"context"
	"slices"
	"testing"
	"time"
)

// mDirGrant is the model of a directory's grant (MS-FSA 2.1.5.18 on a
// directory): the lease states a directory may hold, largest first, the
// first within what was asked and holding the lease's own state; failing
// that the lease keeps what it holds. No oplock, ever.
func mDirGrant(holders []CacheHolder, req CacheRequest, breaks []CacheBreak) (CacheState, OplockLevel) {
	if req.Lease == nil {
		return CacheNone, OplockNone
	}
	var own CacheState
	for i, h := range holders {
		if h.Lease == nil || h.Lease.LeaseIdentity != *req.Lease {
			continue
		}
		s := h.State()
		for _, b := range breaks {
			if b.Holder == i {
				s = b.To
			}
		}
		own |= s
	}
	for _, s := range []CacheState{CacheRH, CacheR, CacheNone} {
		if s&^req.RequestLease == 0 && own&^s == 0 {
			return s, OplockNone
		}
	}
	return own, OplockNone
}

// TestDirGrant: rows of MS-FSA 2.1.5.18 for directories, through
// DecideCaching: never Write, never an oplock, Handle only with Read, a
// lease keeps what it holds.
func TestDirGrant(t *testing.T) {
	a := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{0xa}}
	b := LeaseIdentity{Client: [16]byte{2}, Key: LeaseKey{0xb}}
	held := func(id LeaseIdentity, s CacheState, h HandleID) CacheHolder {
		return CacheHolder{Lease: &LeaseInfoSMB{LeaseIdentity: id, State: s, Version: 2},
			Handles: []Handle{{ID: h, Access: AccessRead, Share: ShareAll}}}
	}
	for _, tc := range []struct {
		name    string
		holders []CacheHolder
		lease   *LeaseIdentity
		ask     CacheState
		oplock  OplockLevel
		want    CacheState
	}{
		{"RWH asked gives RH", nil, &a, CacheRWH, 0, CacheRH},
		{"RW asked gives R", nil, &a, CacheRW, 0, CacheR},
		{"RH asked gives RH", nil, &a, CacheRH, 0, CacheRH},
		{"R asked gives R", nil, &a, CacheR, 0, CacheR},
		{"H alone is no state", nil, &a, CacheHandle, 0, CacheNone},
		{"W alone is no state", nil, &a, CacheWrite, 0, CacheNone},
		{"batch oplock on a directory: none", nil, nil, 0, OplockBatch, CacheNone},
		{"level II oplock on a directory: none", nil, nil, 0, OplockLevelII, CacheNone},
		{"beside another client's RH: RH", []CacheHolder{held(b, CacheRH, 1)}, &a, CacheRWH, 0, CacheRH},
		{"own RH asked R keeps RH", []CacheHolder{held(a, CacheRH, 1)}, &a, CacheR, 0, CacheRH},
		{"own R asked RH grows to RH", []CacheHolder{held(a, CacheR, 1)}, &a, CacheRH, 0, CacheRH},
		{"own none after a break asked RH: RH", []CacheHolder{held(a, CacheNone, 1)}, &a, CacheRWH, 0, CacheRH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: AccessRead, Share: ShareAll, Directory: true,
				Lease: tc.lease, RequestLease: tc.ask, RequestOplock: tc.oplock, Handle: 99}
			d := DecideCaching(tc.holders, req)
			if d.Wait || d.Grant != tc.want || d.GrantOplock != OplockNone {
				t.Fatalf("got %+v, want grant %v and no oplock", d, tc.want)
			}
			if g, o := mDirGrant(tc.holders, req, d.Breaks); g != d.Grant || o != d.GrantOplock {
				t.Fatalf("model %v/%v, rule %v/%v", g, o, d.Grant, d.GrantOplock)
			}
		})
	}
}

// TestDecideDirChange: rows of MS-SMB2 3.3.1.4 ("READ caching on a
// directory") with MS-FSA 2.1.4.12.2's parent key: every Read-caching
// lease breaks to none, an ack required when it loses Handle, the v2 epoch
// one more; the changing open's parent lease (same client and key) and a
// lease already breaking are left alone.
func TestDecideDirChange(t *testing.T) {
	a := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{0xa}}
	aOther := LeaseIdentity{Client: [16]byte{9}, Key: LeaseKey{0xa}} // same key, another client
	b := LeaseIdentity{Client: [16]byte{2}, Key: LeaseKey{0xb}}
	l := func(id LeaseIdentity, s CacheState, v uint8, epoch uint16, breaking bool) DirLease {
		return DirLease{LeaseInfoSMB: LeaseInfoSMB{LeaseIdentity: id, State: s, Version: v, Epoch: epoch}, Breaking: breaking}
	}
	for _, tc := range []struct {
		name   string
		leases []DirLease
		by     *LeaseIdentity
		want   []CacheBreak
	}{
		{"RH v2 breaks to none, ack, epoch+1", []DirLease{l(a, CacheRH, 2, 4, false)}, nil,
			[]CacheBreak{{Holder: 0, From: CacheRH, To: CacheNone, AckRequired: true, NewEpoch: 5}}},
		{"R v1 breaks to none without ack", []DirLease{l(a, CacheR, 1, 0, false)}, nil,
			[]CacheBreak{{Holder: 0, From: CacheR, To: CacheNone}}},
		{"own parent key: no break", []DirLease{l(a, CacheRH, 2, 1, false)}, &a, nil},
		{"same key of another client still breaks", []DirLease{l(aOther, CacheRH, 2, 1, false)}, &a,
			[]CacheBreak{{Holder: 0, From: CacheRH, To: CacheNone, AckRequired: true, NewEpoch: 2}}},
		{"only the other lease breaks", []DirLease{l(a, CacheRH, 2, 1, false), l(b, CacheRH, 2, 3, false)}, &a,
			[]CacheBreak{{Holder: 1, From: CacheRH, To: CacheNone, AckRequired: true, NewEpoch: 4}}},
		{"none already: nothing", []DirLease{l(a, CacheNone, 2, 1, false)}, nil, nil},
		{"breaking: left to its break", []DirLease{l(a, CacheRH, 2, 1, true)}, nil, nil},
		{"epoch wraps", []DirLease{l(b, CacheR, 2, 0xffff, false)}, nil,
			[]CacheBreak{{Holder: 0, From: CacheR, To: CacheNone, NewEpoch: 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideDirChange(tc.leases, tc.by); !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDirLeaseStored: a directory lease lives in the lock table like a
// file's. Two clients hold RH on a directory (asked RWH); a change made
// with client A's parent lease key breaks only B's (outbox row, ack
// required, epoch one more, this process signalled); a change without a
// parent key breaks A's; a lease whose opens closed is not broken; a
// Read-only lease goes to none at once; the change never waits.
func TestDirLeaseStored(t *testing.T) {
	now := time.Unix(1000, 0)
	tab := openTable(t, "", Options{Now: func() time.Time { return now }})
	const dir = FileID(40)
	ctx := context.Background()
	a := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{0xa}}
	b := LeaseIdentity{Client: [16]byte{2}, Key: LeaseKey{0xb}}
	c := LeaseIdentity{Client: [16]byte{3}, Key: LeaseKey{0xc}}
	grant := func(id LeaseIdentity, ask CacheState) (Handle, CacheResult) {
		h := mustOpen(t, tab, OpenRequest{File: dir, Access: AccessRead, Share: ShareAll})
		r := decideCache(t, tab, CacheCall{File: dir, LeaseVersion: 2, LeaseEpoch: 1, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen,
			Access: AccessRead, Share: ShareAll, Directory: true, Handle: h.ID, Lease: &id, RequestLease: ask}})
		return h, r
	}
	if _, r := grant(a, CacheRWH); r.Wait || r.Grant != CacheRH || r.Lease == nil || r.Lease.Epoch != 2 {
		t.Fatalf("A: %+v, want RH epoch 2", r)
	}
	if _, r := grant(b, CacheRWH); r.Wait || r.Grant != CacheRH || len(r.Breaks) != 0 {
		t.Fatalf("B: %+v, want RH beside A without breaks", r)
	}
	hc, r := grant(c, CacheR)
	if r.Grant != CacheR {
		t.Fatalf("C: %+v, want R", r)
	}
	// C's open closes: its lease is not broken (nothing to deliver to).
	must(t, tab.Update(ctx, func(tx *Tx) error { _, err := tx.CloseHandle(hc.ID); return err }))

	changed := tab.CacheChanges()
	must(t, tab.Update(WithParentLease(ctx, a), func(tx *Tx) error { return tx.BreakDirCaching(dir) }))
	select {
	case <-changed:
	default:
		t.Fatal("a directory break did not signal CacheChanges")
	}
	notes := takeBreaks(t, tab)
	if len(notes) != 1 || notes[0].Lease == nil || *notes[0].Lease != b || notes[0].From != CacheRH || notes[0].To != CacheNone ||
		!notes[0].AckRequired || notes[0].NewEpoch != 3 || notes[0].File != dir {
		t.Fatalf("outbox after A's change: %+v, want B RH → none, ack, epoch 3", notes)
	}
	// B's break is outstanding: another change leaves it to that break.
	must(t, tab.Update(ctx, func(tx *Tx) error { return tx.BreakDirCaching(dir) }))
	notes = takeBreaks(t, tab)
	if len(notes) != 1 || *notes[0].Lease != a || notes[0].To != CacheNone || notes[0].NewEpoch != 3 {
		t.Fatalf("outbox after a change without a parent key: %+v, want A alone RH → none", notes)
	}
	must(t, tab.Update(ctx, func(tx *Tx) error {
		l, err := tx.AckLeaseBreak(a, CacheNone)
		if err != nil || l.State != CacheNone {
			t.Errorf("A's ack: %+v %v", l, err)
		}
		return nil
	}))
	// A asks again: RH, epoch one more (MS-SMB2: a state change).
	if _, r := grant(a, CacheRWH); r.Grant != CacheRH || r.Lease.Epoch != 4 {
		t.Fatalf("A again: %+v, want RH epoch 4", r)
	}
}

// TestDirLeaseReadOnlyBreaksAtOnce: a lease of Read caching alone loses
// it at once (no acknowledgment), so the next change finds nothing.
func TestDirLeaseReadOnlyBreaksAtOnce(t *testing.T) {
	tab := openTable(t, "", Options{})
	const dir = FileID(41)
	ctx := context.Background()
	id := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{0xa}}
	h := mustOpen(t, tab, OpenRequest{File: dir, Access: AccessRead, Share: ShareAll})
	if r := decideCache(t, tab, CacheCall{File: dir, LeaseVersion: 1, Req: CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen,
		Access: AccessRead, Share: ShareAll, Directory: true, Handle: h.ID, Lease: &id, RequestLease: CacheR}}); r.Grant != CacheR {
		t.Fatalf("grant %+v, want R", r)
	}
	must(t, tab.Update(ctx, func(tx *Tx) error { return tx.BreakDirCaching(dir) }))
	notes := takeBreaks(t, tab)
	if len(notes) != 1 || notes[0].AckRequired || notes[0].To != CacheNone {
		t.Fatalf("outbox: %+v, want one break to none without ack", notes)
	}
	must(t, tab.Update(ctx, func(tx *Tx) error { return tx.BreakDirCaching(dir) }))
	if notes := takeBreaks(t, tab); len(notes) != 0 {
		t.Fatalf("second change: %+v, want nothing (the lease is none)", notes)
	}
	var lvl OplockLevel
	var l *LeaseInfoSMB
	must(t, tab.View(ctx, func(tx *Tx) error {
		var err error
		lvl, l, err = tx.CacheOf(dir, h.ID)
		return err
	}))
	if lvl != OplockLease || l == nil || l.State != CacheNone {
		t.Fatalf("lease after the break: %v %+v, want none", lvl, l)
	}
}
