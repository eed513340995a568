package locks

// SMB client caching (oplocks and leases) as a pure rule, like share modes
// in rules.go: DecideCaching takes the caching the holders of one file have
// and an incoming open or operation from any protocol, and says which
// holders break to what, whether the requester must wait for their
// acknowledgment, and what an opening requester is granted. Nothing here is
// stored yet (see "SMB caching" in doc.go). References: MS-FSA 2.1.4.12
// (the break check) and 2.1.5.18 (granting), MS-SMB2 3.3.1.4, and for
// FileREST Azure's table "Interaction between FileREST and SMB
// opportunistic locks" (../shared/spec/smb-leases.md §1.2, §1.3).

import "fmt"

// CacheState is what a client may cache, as SMB2 lease state bits
// (MS-SMB2 2.2.13.2.8): Read, Handle, Write. An oplock is the state it
// amounts to (OplockLevel.State).
type CacheState uint8

const (
	CacheRead   CacheState = 0x01 // SMB2_LEASE_READ_CACHING
	CacheHandle CacheState = 0x02 // SMB2_LEASE_HANDLE_CACHING
	CacheWrite  CacheState = 0x04 // SMB2_LEASE_WRITE_CACHING

	CacheNone CacheState = 0
	CacheR               = CacheRead
	CacheRH              = CacheRead | CacheHandle
	CacheRW              = CacheRead | CacheWrite
	CacheRWH             = CacheRead | CacheWrite | CacheHandle
)

// Valid reports whether s is a state a lease may hold (MS-FSA 2.1.5.18:
// none, R, RH, RW, RWH; Handle or Write caching without Read is not one).
func (s CacheState) Valid() bool {
	return s&^CacheRWH == 0 && (s == CacheNone || s&CacheRead != 0)
}

func (s CacheState) String() string {
	if s == CacheNone {
		return "none"
	}
	out := ""
	for _, b := range []struct {
		bit CacheState
		c   string
	}{{CacheRead, "R"}, {CacheWrite, "W"}, {CacheHandle, "H"}} {
		if s&b.bit != 0 {
			out += b.c
		}
	}
	if s&^CacheRWH != 0 {
		out += fmt.Sprintf("+%#x", uint8(s&^CacheRWH))
	}
	return out
}

// OplockLevel is an SMB2 oplock (MS-SMB2 2.2.13 RequestedOplockLevel).
type OplockLevel uint8

const (
	OplockNone      OplockLevel = 0x00
	OplockLevelII   OplockLevel = 0x01
	OplockExclusive OplockLevel = 0x08
	OplockBatch     OplockLevel = 0x09
)

// State is what an oplock lets its client cache: level II reads, an
// exclusive oplock reads and writes, a batch oplock also keeps the handle
// (MS-FSA 2.1.5.18: LEVEL_TWO, LEVEL_ONE, LEVEL_BATCH).
func (l OplockLevel) State() CacheState {
	switch l {
	case OplockLevelII:
		return CacheR
	case OplockExclusive:
		return CacheRW
	case OplockBatch:
		return CacheRWH
	}
	return CacheNone
}

// oplockFor is the oplock a break leaves: an oplock breaks only to level
// II or none, so whatever keeps Read is level II.
func oplockFor(s CacheState) OplockLevel {
	if s&CacheRead != 0 {
		return OplockLevelII
	}
	return OplockNone
}

// LeaseKey is an SMB2 lease key (a client-chosen GUID).
type LeaseKey [16]byte

// LeaseIdentity names a lease: MS-SMB2 3.3.1.11 keeps one lease table per
// ClientGuid, so a lease is (ClientGuid, LeaseKey).
type LeaseIdentity struct {
	Client [16]byte
	Key    LeaseKey
}

// CacheHolder is one cache on a file: a lease (every open of one client
// with one lease key shares it) or the oplock of one open.
type CacheHolder struct {
	Owner OwnerID
	// Lease is set for a lease; nil for an oplock.
	Lease *LeaseInfoSMB
	// Oplock is the level of an oplock holder (Lease nil).
	Oplock OplockLevel
	// Handles are the opens the cache covers (one for an oplock), with
	// their access and share modes: a sharing conflict with one of them
	// breaks Handle caching.
	Handles []Handle
	// Breaking: a break to BreakTo was sent and not yet acknowledged.
	Breaking bool
	BreakTo  CacheState
}

// LeaseInfoSMB is a lease's identity and state (MS-SMB2 3.3.1.12).
type LeaseInfoSMB struct {
	LeaseIdentity
	State CacheState
	// Epoch is the v2 lease epoch (MS-SMB2 2.2.13.2.10): one more on
	// every state change; Version 1 leases keep 0.
	Epoch   uint16
	Version uint8 // 1 or 2
	// Parent is the parent directory's lease key (v2, when the client
	// sets SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET).
	Parent    LeaseKey
	HasParent bool
}

// State is what the holder may cache now.
func (h CacheHolder) State() CacheState {
	if h.Lease != nil {
		return h.Lease.State
	}
	return h.Oplock.State()
}

// Requester is who comes: its protocol and, for SMB, its cache identity.
type Requester int

const (
	RequesterSMB     Requester = iota + 1 // an SMB open or operation (Lease, Oplock or neither)
	RequesterREST                         // a FileREST call (CacheRequest.REST)
	RequesterMount                        // the FUSE mount: a local open with no cache
	RequesterSession                      // `blobshare session`: likewise
)

// CacheOpKind is what the requester does.
type CacheOpKind int

const (
	CacheOpOpen   CacheOpKind = iota + 1 // an open (Access, Share, Overwrite)
	CacheOpRead                          // reading data through an open
	CacheOpWrite                         // writing data or changing the size through an open
	CacheOpLock                          // a byte-range lock through an open
	CacheOpDelete                        // unlink, or setting the delete disposition, through an open
	CacheOpRename                        // renaming the file through an open
	CacheOpREST                          // a FileREST operation (REST)
)

// CacheRequest is an incoming open or operation on one file.
type CacheRequest struct {
	Who  Requester
	Kind CacheOpKind
	// REST is the FileREST operation of a CacheOpREST.
	REST Op
	// Access and Share are an open's (CacheOpOpen).
	Access Access
	Share  ShareMode
	// Overwrite: the open overwrites or supersedes the file.
	Overwrite bool
	// Mask is an SMB open's whole access mask (generic rights mapped),
	// which says whether it is a stat open (statOpen); 0 when the
	// requester has none (the mount, session: Access alone says).
	Mask Mask
	// Created: the open created the file. Neither an overwriting nor a
	// creating open is a stat open, whatever its access (smbtorture
	// smb2.oplock.exclusive5, batch9).
	Created bool
	// Directory: the file is a directory (granted a lease of Read and
	// Handle caching at most, never an oplock: dirlease.go).
	Directory bool
	// Lease is an SMB requester's lease (its own lease is never broken,
	// MS-SMB2 3.3.1.4); nil without one.
	Lease *LeaseIdentity
	// Handle is the open an operation goes through (0 for an open or a
	// REST call): its own oplock is not broken.
	Handle HandleID
	// RequestLease and RequestOplock are what an opening SMB requester
	// asks for (a lease state with Lease set, else an oplock level).
	RequestLease  CacheState
	RequestOplock OplockLevel
}

// CacheBreak is one break to send: holder Holder (an index into the
// holders given) goes From → To; AckRequired when it loses Write or
// Handle caching (MS-SMB2 2.2.23: SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED;
// an oplock break from exclusive or batch), else the state changes at
// once (level II or R to none). ToOplock is To as an oplock level.
// NewEpoch is a v2 lease's epoch after the break (MS-SMB2 3.3.4.7: one
// more than its epoch, wrapping at 16 bits; 0 for v1 leases and oplocks),
// the Lease Break Notification's NewEpoch.
type CacheBreak struct {
	Holder      int
	From, To    CacheState
	ToOplock    OplockLevel
	AckRequired bool
	NewEpoch    uint16
}

// CacheDecision is DecideCaching's answer.
type CacheDecision struct {
	Breaks []CacheBreak
	// Wait: the requester must wait for the acknowledgments (or the
	// break timeout) and then decide again from the start — an SMB
	// CREATE goes async, REST waits at most its timeout, the mount and
	// session block. Nothing is granted while Wait is set.
	Wait bool
	// Grant is what an opening SMB requester gets: Lease state (with a
	// lease) or Oplock.
	Grant       CacheState
	GrantOplock OplockLevel
}

// DecideCaching decides caching for one request against the file's
// holders: every open of the file, grouped by cache — one holder per
// lease (its opens), one per other open (its oplock, OplockNone for an
// open without one, as every mount, session and uncached SMB open is). It
// does not check share modes: the caller runs decideOpen or decideREST
// after the breaks are acknowledged, and a sharing conflict that remains
// then is a sharing violation.
func DecideCaching(holders []CacheHolder, req CacheRequest) CacheDecision {
	var d CacheDecision
	for i, h := range holders {
		if ownCache(h, req) {
			continue
		}
		cur := h.State()
		if cur == CacheNone {
			continue
		}
		lose, wait := cacheLoss(h, cur, req)
		if lose&cur == 0 {
			continue
		}
		if h.Breaking {
			// One break at a time per holder: the requester waits for
			// the outstanding one and decides again (chains such as
			// RWH → RH → R happen one acknowledgment after another) —
			// unless it would not wait for its own break and the
			// outstanding one already takes away all it needs gone
			// (smbtorture smb2.lease.breaking4: a second overwrite
			// while RH breaks to none goes on).
			if wait || lose&h.BreakTo != 0 {
				d.Wait = true
			}
			continue
		}
		to := cur &^ lose
		if h.Lease == nil {
			// An oplock breaks to level II or none.
			to = oplockFor(to).State()
		}
		br := CacheBreak{Holder: i, From: cur, To: to, ToOplock: oplockFor(to), AckRequired: cur&(CacheWrite|CacheHandle) != 0}
		if h.Lease != nil && h.Lease.Version == 2 {
			br.NewEpoch = h.Lease.Epoch + 1
		}
		d.Breaks = append(d.Breaks, br)
		d.Wait = d.Wait || wait
	}
	if req.Kind == CacheOpOpen && req.Who == RequesterSMB && !d.Wait {
		d.Grant, d.GrantOplock = grantCaching(holders, req, d.Breaks)
	}
	return d
}

// ownCache reports whether h is the requester's own cache: its lease
// (same client and key) or the oplock of the open it acts through.
func ownCache(h CacheHolder, req CacheRequest) bool {
	if h.Lease != nil {
		return req.Lease != nil && h.Lease.LeaseIdentity == *req.Lease
	}
	if (req.Kind == CacheOpWrite || req.Kind == CacheOpLock) && h.Oplock == OplockLevelII {
		// A write or a byte-range lock breaks every level II oplock,
		// its own open's too (smbtorture smb2.oplock.batch1: "writing
		// should generate a self break to none"; brl1: "should break
		// our own oplock during BRL acquisition"); a lease is never
		// broken by its own client (smb2.lease.nobreakself).
		return false
	}
	return req.Handle != 0 && len(h.Handles) == 1 && h.Handles[0].ID == req.Handle
}

// cacheLoss is what holder h (caching cur) must lose for req, and
// whether the requester waits for it.
func cacheLoss(h CacheHolder, cur CacheState, req CacheRequest) (lose CacheState, wait bool) {
	if req.Kind == CacheOpREST {
		return restLoss(h, cur, req.REST)
	}
	switch req.Kind {
	case CacheOpOpen:
		if statOpen(req, h.Lease != nil) {
			return 0, false // a stat open breaks nothing (MS-FSA 2.1.4.12)
		}
		if holderConflicts(h, req.Access, req.Share) {
			// The open meets a sharing violation: only a cached
			// handle is given up first, so that the violation is
			// checked against the handles the client really keeps
			// (MS-SMB2 3.3.1.4; smbd's delay_for_oplock); Write
			// caching stays, as the open will not read anything.
			return CacheHandle, cur&CacheHandle != 0
		}
		if req.Overwrite {
			// Every cache goes; only a holder that writes is waited
			// for (its data must reach the file before it is
			// truncated): Read and Handle caching go without waiting,
			// the Handle caching's acknowledgment completing on its
			// own (smbtorture smb2.lease.breaking4: RH → none, the
			// overwrite not blocked).
			return CacheRWH, cur&CacheWrite != 0
		}
		lose = CacheWrite // another open: the writer flushes
		return lose, cur&lose != 0
	case CacheOpRead:
		return CacheWrite, cur&CacheWrite != 0
	case CacheOpWrite, CacheOpLock:
		// Read caching goes without waiting; a writer is waited for.
		return CacheRWH, cur&CacheWrite != 0
	case CacheOpDelete, CacheOpRename:
		return CacheHandle, cur&CacheHandle != 0
	}
	return 0, false
}

// restLoss is Azure's table (smb-leases.md §1.2) and the derived rows of
// §1.3: reads break Write (blocking), writes break everything (blocking
// when Write is held), Delete and a rename's source break Handle
// (blocking), Create File over a file and a replacing rename break
// everything and wait for Write or Handle, and a call that meets a
// sharing conflict with a handle of the holder breaks Handle first
// (blocking).
func restLoss(h CacheHolder, cur CacheState, op Op) (lose CacheState, wait bool) {
	switch op {
	case OpGetFile, OpGetProperties, OpListRanges, OpCopySource:
		lose, wait = CacheWrite, cur&CacheWrite != 0
	case OpPutRange, OpSetProperties, OpSetMetadata:
		lose, wait = CacheRWH, cur&CacheWrite != 0
	case OpDelete, OpRenameSource:
		lose, wait = CacheHandle, cur&CacheHandle != 0
	case OpCreateOverwrite, OpRenameReplace:
		lose, wait = CacheRWH, cur&(CacheWrite|CacheHandle) != 0
	}
	if need := restNeeds(op); need != 0 || op == OpDelete {
		for _, x := range h.Handles {
			if op == OpDelete || (x.Access.HasData() && need&^x.Share != 0) {
				if cur&CacheHandle != 0 {
					lose, wait = lose|CacheHandle, true
				}
				break
			}
		}
	}
	return lose, wait
}

// holderConflicts reports whether an open (a, s) conflicts with one of
// h's opens in share modes.
func holderConflicts(h CacheHolder, a Access, s ShareMode) bool {
	for _, x := range h.Handles {
		if sharingConflict(x.Access, x.Share, a, s) {
			return true
		}
	}
	return false
}

// grantCaching is what an SMB open gets once nothing is left to wait for
// (MS-FSA 2.1.5.18): nothing for a stat open; a directory's by
// grantDirCaching (dirlease.go); a lease
// keeps what its own lease already holds and adds what it asks for that
// the other caches allow — Write only when no other cache or open is on
// the file, Handle and Read beside other Read and Handle caches; an
// exclusive or batch oplock only when no other open exists, else level II
// when asked for any oplock and nobody else writes.
func grantCaching(holders []CacheHolder, req CacheRequest, breaks []CacheBreak) (CacheState, OplockLevel) {
	if req.Directory {
		return grantDirCaching(holders, req, breaks) // dirlease.go
	}
	if statOpen(req, false) && !req.Created && req.Lease == nil {
		// A stat open gets no oplock, but a lease request is granted
		// as for any open (smbtorture smb2.lease.statopen); an
		// attribute-only open that overwrites is no stat open
		// (smb2.oplock.exclusive5).
		return CacheNone, OplockNone
	}
	after := make([]CacheState, len(holders))
	for i, h := range holders {
		after[i] = h.State()
	}
	for _, b := range breaks {
		after[b.Holder] = b.To
	}
	var own CacheState
	others, otherOpens, otherWrite := false, false, false
	// otherHandle: another cache keeps handles; otherOplock: another
	// open holds an oplock. Leases and oplocks share Read caching only:
	// no Handle caching beside an oplock, no oplock beside Handle
	// caching (smbtorture smb2.lease.oplock, Windows' results).
	otherHandle, otherOplock := false, false
	for i, h := range holders {
		if ownCache(h, req) {
			// The requester's lease, and (nothing) for its new open.
			own |= after[i]
			continue
		}
		for _, x := range h.Handles {
			if x.Access.HasData() { // stat opens do not count
				otherOpens = true
			}
		}
		if after[i] != CacheNone {
			others = true
		}
		if after[i]&CacheWrite != 0 {
			otherWrite = true
		}
		if after[i]&CacheHandle != 0 {
			otherHandle = true
		}
		if h.Lease == nil && after[i] != CacheNone {
			otherOplock = true
		}
	}
	if req.Lease != nil {
		ask := req.RequestLease
		if !ask.Valid() {
			ask = CacheNone
		}
		if otherWrite {
			return own, OplockNone
		}
		if own != CacheNone {
			return upgradeLease(own, ask, others || otherOpens, otherOplock), OplockNone
		}
		if others || otherOpens {
			ask &^= CacheWrite
		}
		if otherOplock {
			ask &^= CacheHandle
		}
		return ask, OplockNone
	}
	if otherHandle {
		return CacheNone, OplockNone
	}
	switch req.RequestOplock {
	case OplockExclusive, OplockBatch:
		if !otherOpens && !others {
			return req.RequestOplock.State(), req.RequestOplock
		}
		fallthrough
	case OplockLevelII:
		if otherWrite {
			return CacheNone, OplockNone
		}
		return CacheR, OplockLevelII
	}
	return CacheNone, OplockNone
}

// statOpen reports whether an open is a stat open towards an oplock, or
// towards a lease (lease): one that neither gets an oplock nor breaks
// caching. It does not overwrite, and its access is at most
// FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES and SYNCHRONIZE — and
// READ_CONTROL towards a lease (MS-FSA 2.1.4.12; smbtorture
// smb2.oplock.statopen1: FILE_READ_EA and READ_CONTROL break a batch
// oplock; smb2.lease.statopen4: READ_CONTROL leaves an RWH lease alone,
// as Windows and smbd do).
func statOpen(req CacheRequest, lease bool) bool {
	if req.Overwrite || req.Access.HasData() {
		return false
	}
	if req.Mask == 0 {
		return true
	}
	stat := MaskReadAttributes | MaskWriteAttributes | MaskSynchronize
	if lease {
		stat |= MaskReadControl
	}
	return req.Mask&^stat == 0
}

// upgradeLease is what an existing lease holding own becomes when another
// open of it asks for ask (MS-SMB2 3.3.5.9.8): ask when it holds all of
// own and can be granted whole — no Write caching beside other caches or
// opens (shared), no Handle caching beside an oplock — else own unchanged;
// a lease is never upgraded in part (smbtorture smb2.lease.upgrade,
// upgrade2: RH asked for RW stays RH; upgrade3: R beside another lease
// asked for RH becomes RH, asked for RHW stays R).
func upgradeLease(own, ask CacheState, shared, otherOplock bool) CacheState {
	if ask&own != own {
		return own
	}
	if (shared && ask&CacheWrite != 0) || (otherOplock && ask&CacheHandle != 0) {
		return own
	}
	return ask
}
