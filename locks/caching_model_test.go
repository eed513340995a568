package locks

// A reference model of the caching rule, written from the spec text
// apart from caching.go: literal break tables per operation class and
// held state (Azure's table rows and MS-FSA's cases as smb-leases.md §1.2,
// §1.3 and §2.3 list them), and a grant found by trying every state from
// the largest down. TestCachingAgainstModel compares DecideCaching with it
// on random files; TestCachingTable checks the spec's rows by name.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mBreak is a table cell: the state left and whether the requester waits.
type mBreak struct {
	to   CacheState
	wait bool
}

// mLeaseTable[class][held] for a lease held by another client. A missing
// held state means "no break". Classes: see mClass.
var mLeaseTable = map[string]map[CacheState]mBreak{
	"open":           {CacheRW: {CacheR, true}, CacheRWH: {CacheRH, true}},
	"open+conflict":  {CacheRH: {CacheR, true}, CacheRWH: {CacheRW, true}},
	"overwrite":      {CacheR: {CacheNone, false}, CacheRH: {CacheNone, false}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"read":           {CacheRW: {CacheR, true}, CacheRWH: {CacheRH, true}},
	"write":          {CacheR: {CacheNone, false}, CacheRH: {CacheNone, false}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"delete":         {CacheRH: {CacheR, true}, CacheRWH: {CacheRW, true}},
	"rest-read":      {CacheRW: {CacheR, true}, CacheRWH: {CacheRH, true}},
	"rest-write":     {CacheR: {CacheNone, false}, CacheRH: {CacheNone, false}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"rest-delete":    {CacheRH: {CacheR, true}, CacheRWH: {CacheRW, true}},
	"rest-create":    {CacheR: {CacheNone, false}, CacheRH: {CacheNone, true}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"rest-read+sv":   {CacheRH: {CacheR, true}, CacheRW: {CacheR, true}, CacheRWH: {CacheR, true}},
	"rest-write+sv":  {CacheR: {CacheNone, false}, CacheRH: {CacheNone, true}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"rest-delete+sv": {CacheRH: {CacheR, true}, CacheRWH: {CacheRW, true}},
	"rest-create+sv": {CacheR: {CacheNone, false}, CacheRH: {CacheNone, true}, CacheRW: {CacheNone, true}, CacheRWH: {CacheNone, true}},
	"rest-none+sv":   {CacheRH: {CacheR, true}, CacheRWH: {CacheRW, true}},
}

// mOplockTable[class][level]: an oplock breaks to level II or none.
var mOplockTable = map[string]map[OplockLevel]struct {
	to   OplockLevel
	wait bool
}{
	"open":           {OplockExclusive: {OplockLevelII, true}, OplockBatch: {OplockLevelII, true}},
	"open+conflict":  {OplockBatch: {OplockLevelII, true}},
	"overwrite":      {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"read":           {OplockExclusive: {OplockLevelII, true}, OplockBatch: {OplockLevelII, true}},
	"write":          {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"delete":         {OplockBatch: {OplockLevelII, true}},
	"rest-read":      {OplockExclusive: {OplockLevelII, true}, OplockBatch: {OplockLevelII, true}},
	"rest-write":     {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"rest-delete":    {OplockBatch: {OplockLevelII, true}},
	"rest-create":    {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"rest-read+sv":   {OplockExclusive: {OplockLevelII, true}, OplockBatch: {OplockLevelII, true}},
	"rest-write+sv":  {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"rest-delete+sv": {OplockBatch: {OplockLevelII, true}},
	"rest-create+sv": {OplockLevelII: {OplockNone, false}, OplockExclusive: {OplockNone, true}, OplockBatch: {OplockNone, true}},
	"rest-none+sv":   {OplockBatch: {OplockLevelII, true}},
}

// mRESTClass: Azure's "file access equivalent" column per operation.
var mRESTClass = map[Op]string{
	OpGetFile: "rest-read", OpGetProperties: "rest-read", OpListRanges: "rest-read", OpCopySource: "rest-read",
	OpPutRange: "rest-write", OpSetProperties: "rest-write", OpSetMetadata: "rest-write",
	OpDelete: "rest-delete", OpRenameSource: "rest-delete",
	OpCreateOverwrite: "rest-create", OpRenameReplace: "rest-create",
	OpList: "rest-none",
}

// mRESTShares: the share bits a handle must grant for the REST call
// (locking.md §1.3), written out again.
var mRESTShares = map[Op][3]bool{ // read, write, delete
	OpGetFile: {true, false, false}, OpListRanges: {true, false, false}, OpCopySource: {true, false, false},
	OpPutRange: {false, true, false}, OpSetProperties: {false, true, false}, OpSetMetadata: {false, true, false},
	OpCreateOverwrite: {false, true, true}, OpRenameReplace: {false, true, true},
	OpDelete: {false, false, true}, OpRenameSource: {false, false, true},
}

// mClass names the table row of req against holder h.
func mClass(h CacheHolder, req CacheRequest) string {
	switch req.Kind {
	case CacheOpOpen:
		if !anyOf(uses(req.Access)) && !req.Overwrite {
			return ""
		}
		for _, x := range h.Handles {
			if mConflict(x.Access, x.Share, req.Access, req.Share) {
				return "open+conflict"
			}
		}
		if req.Overwrite {
			return "overwrite"
		}
		return "open"
	case CacheOpRead:
		return "read"
	case CacheOpWrite, CacheOpLock:
		return "write"
	case CacheOpDelete, CacheOpRename:
		return "delete"
	}
	c := mRESTClass[req.REST]
	for _, x := range h.Handles {
		if req.REST == OpDelete {
			return c + "+sv"
		}
		if !anyOf(uses(x.Access)) {
			continue
		}
		need, ok := mRESTShares[req.REST], allows(x.Share)
		for k := 0; k < 3; k++ {
			if need[k] && !ok[k] {
				return c + "+sv"
			}
		}
	}
	if c == "rest-none" {
		return ""
	}
	return c
}

func mOwn(h CacheHolder, req CacheRequest) bool {
	if h.Lease != nil {
		return req.Lease != nil && req.Lease.Client == h.Lease.Client && req.Lease.Key == h.Lease.Key
	}
	if (req.Kind == CacheOpWrite || req.Kind == CacheOpLock) && h.Oplock == OplockLevelII {
		return false // a write or lock breaks even its own level II oplock
	}
	return req.Handle != 0 && h.Handles[0].ID == req.Handle
}

// mDecide is the model's decision.
func mDecide(holders []CacheHolder, req CacheRequest) CacheDecision {
	var d CacheDecision
	for i, h := range holders {
		if mOwn(h, req) {
			continue
		}
		class := mClass(h, req)
		var from, to CacheState
		var wait, hit bool
		if h.Lease != nil {
			cell, ok := mLeaseTable[class][h.Lease.State]
			from, to, wait, hit = h.Lease.State, cell.to, cell.wait, ok
		} else {
			cell, ok := mOplockTable[class][h.Oplock]
			from, to, wait, hit = h.Oplock.State(), cell.to.State(), cell.wait, ok
		}
		if !hit {
			continue
		}
		if h.Breaking {
			// Waits for the outstanding break, unless its own would not
			// be waited for and the outstanding one takes all it needs.
			if wait || (from&^to)&h.BreakTo != 0 {
				d.Wait = true
			}
			continue
		}
		ack := from == CacheRH || from == CacheRW || from == CacheRWH
		lvl := OplockNone
		if to != CacheNone {
			lvl = OplockLevelII
		}
		var epoch uint16
		if h.Lease != nil && h.Lease.Version == 2 {
			epoch = uint16((int(h.Lease.Epoch) + 1) % 65536)
		}
		d.Breaks = append(d.Breaks, CacheBreak{Holder: i, From: from, To: to, ToOplock: lvl, AckRequired: ack, NewEpoch: epoch})
		if wait {
			d.Wait = true
		}
	}
	if req.Kind != CacheOpOpen || req.Who != RequesterSMB || d.Wait {
		return d
	}
	d.Grant, d.GrantOplock = mGrant(holders, req, d.Breaks)
	return d
}

// mGrant tries the states a lease may hold, largest first, and keeps the
// first the other caches allow and that holds the lease's own state; for
// oplocks, batch, exclusive, level II in that order.
func mGrant(holders []CacheHolder, req CacheRequest, breaks []CacheBreak) (CacheState, OplockLevel) {
	if req.Directory {
		return mDirGrant(holders, req, breaks) // dirlease_test.go
	}
	if !anyOf(uses(req.Access)) && !req.Overwrite && !req.Created && req.Lease == nil {
		return CacheNone, OplockNone
	}
	state := func(i int) CacheState {
		for _, b := range breaks {
			if b.Holder == i {
				return b.To
			}
		}
		return holders[i].State()
	}
	alone, nobodyWrites := true, true
	someoneHandles, someOplock := false, false
	var own CacheState
	for i, h := range holders {
		if mOwn(h, req) {
			own |= state(i)
			continue
		}
		if state(i) != CacheNone {
			alone = false
		}
		if state(i)&CacheWrite != 0 {
			nobodyWrites = false
		}
		if state(i)&CacheHandle != 0 {
			someoneHandles = true
		}
		if h.Lease == nil && state(i) != CacheNone {
			someOplock = true
		}
		for _, x := range h.Handles {
			if anyOf(uses(x.Access)) {
				alone = false
			}
		}
	}
	if req.Lease != nil {
		if !nobodyWrites {
			return own, OplockNone
		}
		asked := req.RequestLease
		switch asked {
		case CacheNone, CacheR, CacheRH, CacheRW, CacheRWH:
		default:
			asked = CacheNone
		}
		if own != CacheNone {
			// A held lease grows only to exactly what it asks, and only
			// when that can be granted whole.
			switch {
			case asked&^own == 0 || own&^asked != 0:
				return own, OplockNone
			case asked&CacheWrite != 0 && !alone:
				return own, OplockNone
			case asked&CacheHandle != 0 && someOplock:
				return own, OplockNone
			}
			return asked, OplockNone
		}
		for _, s := range []CacheState{CacheRWH, CacheRW, CacheRH, CacheR, CacheNone} {
			if s&^(own|asked) != 0 || own&^s != 0 {
				continue // more than asked and held, or less than held
			}
			if s&CacheWrite != 0 && own&CacheWrite == 0 && !alone {
				continue // a new Write needs the file to itself
			}
			if s&CacheHandle != 0 && someOplock {
				continue // no Handle caching beside an oplock
			}
			return s, OplockNone
		}
		return own, OplockNone
	}
	if someoneHandles {
		return CacheNone, OplockNone // no oplock beside Handle caching
	}
	for _, l := range []OplockLevel{OplockBatch, OplockExclusive, OplockLevelII} {
		if l == OplockLevelII && req.RequestOplock != OplockNone && nobodyWrites {
			return CacheR, OplockLevelII
		}
		if l == req.RequestOplock && alone {
			return l.State(), l
		}
	}
	return CacheNone, OplockNone
}

// randomHolders makes a file: a few opens, some under leases of two
// clients, some with oplocks, some with nothing, some breaking.
func randomHolders(rng *rand.Rand) []CacheHolder {
	accesses := []Access{rd, wr, rd | wr, del, rd | del, attr, rd | wr | del}
	shares := []ShareMode{ShareAll, ShareAll, ShareRead, ShareRead | ShareWrite, ShareRead | ShareDelete, ShareNone}
	leaseStates := []CacheState{CacheNone, CacheR, CacheRH, CacheRW, CacheRWH}
	oplocks := []OplockLevel{OplockNone, OplockLevelII, OplockExclusive, OplockBatch}
	var hs []CacheHolder
	id := HandleID(1)
	n := rng.IntN(4)
	for i := 0; i < n; i++ {
		h := CacheHolder{Owner: OwnerID(fmt.Sprint("o", rng.IntN(2)))}
		opens := 1
		if rng.IntN(2) == 0 {
			h.Lease = &LeaseInfoSMB{LeaseIdentity: LeaseIdentity{Client: [16]byte{byte(rng.IntN(2))}, Key: LeaseKey{byte(1 + i)}},
				State: leaseStates[rng.IntN(len(leaseStates))], Version: uint8(1 + rng.IntN(2)),
				Epoch: []uint16{0, 1, 7, 0xffff}[rng.IntN(4)]}
			opens = 1 + rng.IntN(2)
		} else {
			h.Oplock = oplocks[rng.IntN(len(oplocks))]
		}
		for j := 0; j < opens; j++ {
			h.Handles = append(h.Handles, Handle{ID: id, Access: accesses[rng.IntN(len(accesses))], Share: shares[rng.IntN(len(shares))]})
			id++
		}
		if h.State() != CacheNone && rng.IntN(6) == 0 {
			h.Breaking, h.BreakTo = true, CacheNone
		}
		hs = append(hs, h)
	}
	return hs
}

func randomCacheRequest(rng *rand.Rand, hs []CacheHolder) CacheRequest {
	accesses := []Access{rd, wr, rd | wr, del, rd | del, attr, rd | wr | del}
	shares := []ShareMode{ShareAll, ShareRead, ShareRead | ShareWrite, ShareNone}
	req := CacheRequest{Who: Requester(1 + rng.IntN(4))}
	if req.Who == RequesterREST {
		req.Kind, req.REST = CacheOpREST, Op(1+rng.IntN(int(OpRenameReplace)))
		return req
	}
	req.Kind = CacheOpKind(1 + rng.IntN(int(CacheOpRename)))
	if req.Kind != CacheOpOpen && len(hs) > 0 && rng.IntN(3) > 0 {
		h := hs[rng.IntN(len(hs))]
		req.Handle = h.Handles[rng.IntN(len(h.Handles))].ID
	}
	req.Access, req.Share = accesses[rng.IntN(len(accesses))], shares[rng.IntN(len(shares))]
	req.Overwrite = rng.IntN(6) == 0
	req.Directory = rng.IntN(10) == 0
	if req.Who == RequesterSMB {
		if rng.IntN(2) == 0 {
			req.Lease = &LeaseIdentity{Client: [16]byte{byte(rng.IntN(2))}, Key: LeaseKey{byte(1 + rng.IntN(4))}}
			req.RequestLease = CacheState(rng.IntN(8))
		} else {
			req.RequestOplock = []OplockLevel{OplockNone, OplockLevelII, OplockExclusive, OplockBatch}[rng.IntN(4)]
		}
	}
	return req
}

func TestCachingAgainstModel(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 20000
	}
	rng := rand.New(rand.NewPCG(30, 11))
	tally := map[string]int{}
	for i := 0; i < n; i++ {
		hs := randomHolders(rng)
		req := randomCacheRequest(rng, hs)
		got, want := DecideCaching(hs, req), mDecide(hs, req)
		if !equalDecision(got, want) {
			t.Fatalf("case %d: holders %s, request %+v:\n got   %+v\n model %+v", i, showHolders(hs), req, got, want)
		}
		switch {
		case got.Wait:
			tally["wait"]++
		case len(got.Breaks) > 0:
			tally["break, no wait"]++
		default:
			tally["nothing"]++
		}
		if got.Grant != CacheNone {
			tally["grant "+got.Grant.String()]++
		}
	}
	t.Logf("%d cases: %v", n, tally)
}

func equalDecision(a, b CacheDecision) bool {
	return a.Wait == b.Wait && a.Grant == b.Grant && a.GrantOplock == b.GrantOplock && slices.Equal(a.Breaks, b.Breaks)
}

func showHolders(hs []CacheHolder) string {
	out := ""
	for i, h := range hs {
		if h.Lease != nil {
			out += fmt.Sprintf("[%d lease %x/%x %v breaking=%v", i, h.Lease.Client[0], h.Lease.Key[0], h.Lease.State, h.Breaking)
		} else {
			out += fmt.Sprintf("[%d oplock %#x breaking=%v", i, h.Oplock, h.Breaking)
		}
		for _, x := range h.Handles {
			out += fmt.Sprintf(" h%d(%v/%v)", x.ID, x.Access, x.Share)
		}
		out += "] "
	}
	return out
}
