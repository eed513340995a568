package locks

import (
	"slices"
	"testing"
)

// TestCachingTable: the rows of Azure's FileREST table (smb-leases.md
// §1.2, "Current oplock types | Oplock break performed | Resulting
// oplock") and MS-FSA/MS-SMB2 cases the smbtorture suites check, by name.
func TestCachingTable(t *testing.T) {
	other := LeaseIdentity{Client: [16]byte{1}, Key: LeaseKey{1}}
	mine := LeaseIdentity{Client: [16]byte{2}, Key: LeaseKey{2}}
	// lease is a file with one open (read, sharing all) under other's lease.
	lease := func(s CacheState) []CacheHolder {
		return []CacheHolder{{Lease: &LeaseInfoSMB{LeaseIdentity: other, State: s, Version: 2, Epoch: 4},
			Handles: []Handle{{ID: 1, Access: rd, Share: ShareAll}}}}
	}
	oplock := func(l OplockLevel, id HandleID) CacheHolder {
		return CacheHolder{Oplock: l, Handles: []Handle{{ID: id, Access: rd | wr, Share: ShareAll}}}
	}
	rest := func(op Op) CacheRequest { return CacheRequest{Who: RequesterREST, Kind: CacheOpREST, REST: op} }
	brk := func(from, to CacheState, ack bool) []CacheBreak { // of lease(...), epoch 4
		return []CacheBreak{{Holder: 0, From: from, To: to, ToOplock: oplockFor(to), AckRequired: ack, NewEpoch: 5}}
	}
	cases := []struct {
		name    string
		holders []CacheHolder
		req     CacheRequest
		breaks  []CacheBreak
		wait    bool
		grant   CacheState
		oplock  OplockLevel
	}{
		// Azure's table.
		{"Get File, RWH: blocking, RH", lease(CacheRWH), rest(OpGetFile), brk(CacheRWH, CacheRH, true), true, 0, 0},
		{"Get File, RH: no break", lease(CacheRH), rest(OpGetFile), nil, false, 0, 0},
		{"Get File, RW: blocking, R", lease(CacheRW), rest(OpGetFile), brk(CacheRW, CacheR, true), true, 0, 0},
		{"Put Range, RWH: blocking, none", lease(CacheRWH), rest(OpPutRange), brk(CacheRWH, CacheNone, true), true, 0, 0},
		{"Put Range, RH: non-blocking, none", lease(CacheRH), rest(OpPutRange), brk(CacheRH, CacheNone, true), false, 0, 0},
		{"Put Range, RW: blocking, none", lease(CacheRW), rest(OpPutRange), brk(CacheRW, CacheNone, true), true, 0, 0},
		{"Set File Properties, RH: non-blocking, none", lease(CacheRH), rest(OpSetProperties), brk(CacheRH, CacheNone, true), false, 0, 0},
		{"Delete File, RWH: blocking, RW", lease(CacheRWH), rest(OpDelete), brk(CacheRWH, CacheRW, true), true, 0, 0},
		{"Delete File, RH: blocking, R", lease(CacheRH), rest(OpDelete), brk(CacheRH, CacheR, true), true, 0, 0},
		{"Delete File, RW: no break", lease(CacheRW), rest(OpDelete), nil, false, 0, 0},
		{"List Files: no break", lease(CacheRWH), rest(OpList), nil, false, 0, 0},
		{"R only, Put Range: none, without waiting", lease(CacheR), rest(OpPutRange), brk(CacheR, CacheNone, false), false, 0, 0},
		// Derived rows (§1.3).
		{"Create File over RH: none, blocking (H)", lease(CacheRH), rest(OpCreateOverwrite), brk(CacheRH, CacheNone, true), true, 0, 0},
		{"Put Range meeting a sharing conflict with RH: H broken, blocking", []CacheHolder{{
			Lease: &LeaseInfoSMB{LeaseIdentity: other, State: CacheRH, Version: 2, Epoch: 4}, Handles: []Handle{{ID: 1, Access: rd, Share: ShareRead}}}},
			rest(OpPutRange), brk(CacheRH, CacheNone, true), true, 0, 0},
		{"a mount open for writing against RWH: W broken, blocking", lease(CacheRWH),
			CacheRequest{Who: RequesterMount, Kind: CacheOpOpen, Access: rd | wr, Share: ShareAll}, brk(CacheRWH, CacheRH, true), true, 0, 0},
		// SMB (MS-SMB2 3.3.1.4, MS-FSA 2.1.4.12, 2.1.5.18).
		{"own lease: never broken, upgraded", lease(CacheRH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd | wr, Share: ShareAll, Lease: &other, RequestLease: CacheRWH}, nil, false, CacheRWH, 0},
		{"another lease's RWH: W broken, wait", lease(CacheRWH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, Lease: &mine, RequestLease: CacheRWH}, brk(CacheRWH, CacheRH, true), true, 0, 0},
		{"beside another lease's RH: RH granted", lease(CacheRH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, Lease: &mine, RequestLease: CacheRWH}, nil, false, CacheRH, 0},
		{"sharing conflict with RH: H broken before the violation", lease(CacheRH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareNone, Lease: &mine, RequestLease: CacheRH}, brk(CacheRH, CacheR, true), true, 0, 0},
		{"stat open: nothing broken, nothing granted", lease(CacheRWH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: attr, Share: ShareNone, Lease: &mine, RequestLease: CacheRWH}, nil, false, CacheNone, 0},
		{"batch, second open: level II, wait", []CacheHolder{oplock(OplockBatch, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, RequestOplock: OplockBatch},
			[]CacheBreak{{Holder: 0, From: CacheRWH, To: CacheR, ToOplock: OplockLevelII, AckRequired: true}}, true, 0, 0},
		{"batch asked beside a level II: level II granted", []CacheHolder{oplock(OplockLevelII, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, RequestOplock: OplockBatch}, nil, false, CacheR, OplockLevelII},
		{"batch asked alone: batch", nil,
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd | wr, Share: ShareAll, RequestOplock: OplockBatch}, nil, false, CacheRWH, OplockBatch},
		{"write beside level II: none at once", []CacheHolder{oplock(OplockLevelII, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpWrite, Handle: 2},
			[]CacheBreak{{Holder: 0, From: CacheR, To: CacheNone, ToOplock: OplockNone}}, false, 0, 0},
		{"lock through the batch's own handle: no break", []CacheHolder{oplock(OplockBatch, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpLock, Handle: 1}, nil, false, 0, 0},
		{"lock through another handle: batch broken", []CacheHolder{oplock(OplockBatch, 1), oplock(OplockNone, 2)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpLock, Handle: 2},
			[]CacheBreak{{Holder: 0, From: CacheRWH, To: CacheNone, ToOplock: OplockNone, AckRequired: true}}, true, 0, 0},
		{"rename of a batch-oplocked file by another: level II (smbtorture oplock batch17)", []CacheHolder{oplock(OplockBatch, 1), oplock(OplockNone, 2)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpRename, Handle: 2},
			[]CacheBreak{{Holder: 0, From: CacheRWH, To: CacheR, ToOplock: OplockLevelII, AckRequired: true}}, true, 0, 0},
		{"rename of an exclusive-oplocked file: no break (smbtorture oplock exclusive6)", []CacheHolder{oplock(OplockExclusive, 1), oplock(OplockNone, 2)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpRename, Handle: 2}, nil, false, 0, 0},
		{"own lease RH asked RW, its new open among the holders: stays RH (smbtorture lease.upgrade)",
			append(lease(CacheRH), oplock(OplockNone, 7)),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd | wr, Share: ShareAll, Lease: &other, Handle: 7, RequestLease: CacheRW}, nil, false, CacheRH, 0},
		{"own lease R beside another lease's RH, asked RWH: stays R (smbtorture lease.break)",
			append(lease(CacheR), CacheHolder{Lease: &LeaseInfoSMB{LeaseIdentity: mine, State: CacheRH}, Handles: []Handle{{ID: 2, Access: rd, Share: ShareAll}}}),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, Lease: &other, RequestLease: CacheRWH}, nil, false, CacheR, 0},
		{"stat open asking a lease, alone: granted (smbtorture lease.statopen)", nil,
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: attr, Share: ShareNone, Lease: &mine, RequestLease: CacheRWH}, nil, false, CacheRWH, 0},
		{"exclusive oplock, an open that meets a sharing violation: no break (smbtorture oplock exclusive1)", []CacheHolder{oplock(OplockExclusive, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd | wr, Share: ShareNone}, nil, false, 0, 0},
		{"RWH lease, an open that meets a sharing violation: H broken, W kept", lease(CacheRWH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareNone}, brk(CacheRWH, CacheRW, true), true, 0, 0},
		{"level II asked beside another lease's RH: none (smbtorture lease.oplock)", lease(CacheRH),
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, RequestOplock: OplockLevelII}, nil, false, 0, 0},
		{"RH asked beside a level II oplock: R (smbtorture lease.oplock)", []CacheHolder{oplock(OplockLevelII, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: rd, Share: ShareAll, Lease: &mine, RequestLease: CacheRH}, nil, false, CacheR, 0},
		{"write through a level II's own open: none at once (smbtorture oplock batch1)", []CacheHolder{oplock(OplockLevelII, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpWrite, Handle: 1},
			[]CacheBreak{{Holder: 0, From: CacheR, To: CacheNone, ToOplock: OplockNone}}, false, 0, 0},
		{"attribute-only overwrite asking level II beside a broken exclusive: level II (smbtorture oplock exclusive5)",
			[]CacheHolder{oplock(OplockNone, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: attr, Share: ShareAll, Overwrite: true, RequestOplock: OplockLevelII}, nil, false, CacheR, OplockLevelII},
		{"attribute-only open that creates the file, asking batch: batch (smbtorture oplock batch9)", nil,
			CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: attr, Share: ShareNone, Created: true, RequestOplock: OplockBatch}, nil, false, CacheRWH, OplockBatch},
		{"lock through a level II's own open: none at once (smbtorture oplock brl1)", []CacheHolder{oplock(OplockLevelII, 1)},
			CacheRequest{Who: RequesterSMB, Kind: CacheOpLock, Handle: 1},
			[]CacheBreak{{Holder: 0, From: CacheR, To: CacheNone, ToOplock: OplockNone}}, false, 0, 0},
		{"a holder already breaking: wait, no second break", []CacheHolder{{
			Lease: &LeaseInfoSMB{LeaseIdentity: other, State: CacheRWH}, Handles: []Handle{{ID: 1, Access: rd, Share: ShareAll}},
			Breaking: true, BreakTo: CacheRH}}, rest(OpPutRange), nil, true, 0, 0},
		{"v1 lease: no epoch", []CacheHolder{{Lease: &LeaseInfoSMB{LeaseIdentity: other, State: CacheRW, Version: 1},
			Handles: []Handle{{ID: 1, Access: rd, Share: ShareAll}}}}, rest(OpGetFile),
			[]CacheBreak{{Holder: 0, From: CacheRW, To: CacheR, ToOplock: OplockLevelII, AckRequired: true}}, true, 0, 0},
		{"v2 epoch wraps", []CacheHolder{{Lease: &LeaseInfoSMB{LeaseIdentity: other, State: CacheRW, Version: 2, Epoch: 0xffff},
			Handles: []Handle{{ID: 1, Access: rd, Share: ShareAll}}}}, rest(OpGetFile),
			[]CacheBreak{{Holder: 0, From: CacheRW, To: CacheR, ToOplock: OplockLevelII, AckRequired: true, NewEpoch: 0}}, true, 0, 0},
	}
	for _, c := range cases {
		d := DecideCaching(c.holders, c.req)
		if !slices.Equal(d.Breaks, c.breaks) || d.Wait != c.wait || d.Grant != c.grant || d.GrantOplock != c.oplock {
			t.Errorf("%s: got breaks %+v wait %v grant %v/%#x; want %+v wait %v grant %v/%#x",
				c.name, d.Breaks, d.Wait, d.Grant, d.GrantOplock, c.breaks, c.wait, c.grant, c.oplock)
		}
		if m := mDecide(c.holders, c.req); !equalDecision(m, d) {
			t.Errorf("%s: the model says %+v", c.name, m)
		}
	}
}

func TestCacheStateValid(t *testing.T) {
	for s := CacheState(0); s < 16; s++ {
		want := s == CacheNone || s == CacheR || s == CacheRH || s == CacheRW || s == CacheRWH
		if s.Valid() != want {
			t.Errorf("%v (%#x).Valid() = %v", s, uint8(s), s.Valid())
		}
	}
}
