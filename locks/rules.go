package locks

// The rules of locking.md as pure functions: each decides from a fileState
// (what the table holds for one file) and a request, and returns the
// outcome plus, where state changes, the new state. Nothing here touches
// SQL; tx.go loads a fileState, calls a rule, and stores the result.

import (
	"fmt"
	"strings"
)

// fileState is everything the table holds about one file.
type fileState struct {
	file    FileID
	stored  bool // file has an lk_files row (pending mark or lease)
	pending bool
	lease   LeaseInfo
	handles []Handle  // in id order; ID, File, Owner, Access and Share only (loadState)
	locks   []lockRec // loaded only by the rules that need them
}

// hasHandle reports whether handle id is among the file's handles: a
// decision through a handle, whose row was read before the file's key was
// locked, re-checks with it that the handle is still open.
func (st *fileState) hasHandle(id HandleID) bool {
	for _, h := range st.handles {
		if h.ID == id {
			return true
		}
	}
	return false
}

// lockRec is a stored byte-range lock plus what the rules need about it.
type lockRec struct {
	ByteLock
	row   int64   // row id in lk_locks
	owner OwnerID // owner of the holding handle (POSIX lock owner scope)
}

func (a Access) reads() bool   { return a&(AccessRead|AccessExecute) != 0 }
func (a Access) writes() bool  { return a&(AccessWrite|AccessAppend) != 0 }
func (a Access) deletes() bool { return a&AccessDelete != 0 }

// sharingConflict is the MS-FSA 2.1.5.1.2.2 check between an existing open
// (ea, es) and a new open (na, ns): rows 1–6 of locking.md §1.2. Opens with
// no data bit take no part (A12).
func sharingConflict(ea Access, es ShareMode, na Access, ns ShareMode) bool {
	if !ea.HasData() || !na.HasData() {
		return false
	}
	return (es&ShareRead == 0 && na.reads()) || // row 1
		(es&ShareWrite == 0 && na.writes()) || // row 2
		(es&ShareDelete == 0 && na.deletes()) || // row 3
		(ea.reads() && ns&ShareRead == 0) || // row 4
		(ea.writes() && ns&ShareWrite == 0) || // row 5
		(ea.deletes() && ns&ShareDelete == 0) // row 6
}

func validateOpen(req OpenRequest) error {
	if !req.Access.Valid() {
		return fmt.Errorf("open file %d: access 0x%x: %w", req.File, uint8(req.Access), ErrInvalidParameter)
	}
	if !req.Share.Valid() {
		return fmt.Errorf("open file %d: share mode 0x%x: %w", req.File, uint8(req.Share), ErrInvalidParameter)
	}
	return nil
}

// decideOpen decides a new SMB open (locking.md §1.2, §2.2, §4.4/A14):
// delete-pending first, then the ReadOnly attribute, then the sharing
// check against every handle, then the lease (access only).
func decideOpen(st *fileState, req OpenRequest) error {
	if err := validateOpen(req); err != nil {
		return err
	}
	if st.pending {
		return fmt.Errorf("open file %d: %w", req.File, ErrDeletePending)
	}
	// MS-FSA 2.1.5.1.2.1: the access check, which precedes the sharing
	// check (2.1.5.1.2.2), refuses writing a ReadOnly file with
	// STATUS_ACCESS_DENIED and deleting it on close with
	// STATUS_CANNOT_DELETE.
	if req.ReadOnly && (req.Overwrite || req.Access.writes()) {
		return fmt.Errorf("open file %d for writing: %w", req.File, ErrReadOnly)
	}
	if req.ReadOnly && req.DeleteOnClose {
		return fmt.Errorf("open file %d delete-on-close: %w", req.File, ErrCannotDelete)
	}
	var blockers []HandleID
	for _, h := range st.handles {
		if sharingConflict(h.Access, h.Share, req.Access, req.Share) {
			blockers = append(blockers, h.ID)
		}
	}
	leased := st.lease.State == LeaseLeased && (req.Access.writes() || req.Access.deletes())
	if len(blockers) > 0 || leased {
		return &ConflictError{Err: ErrSharingViolation, File: req.File, Op: "open", Handles: blockers, Lease: leased}
	}
	return nil
}

// restNeeds is the access a REST operation is treated as having
// (locking.md §1.3), as share bits the handles must grant.
func restNeeds(op Op) ShareMode {
	switch op {
	case OpGetFile, OpListRanges, OpCopySource:
		return ShareRead
	case OpPutRange, OpSetProperties, OpSetMetadata:
		return ShareWrite
	case OpCreateOverwrite, OpRenameReplace:
		return ShareWrite | ShareDelete
	case OpDelete, OpRenameSource:
		return ShareDelete
	}
	return 0 // OpGetProperties, OpList
}

// restWrites reports whether op needs the lease id while the file is leased
// (locking.md §4.3, left column).
func restWrites(op Op) bool {
	switch op {
	case OpCreateOverwrite, OpSetProperties, OpSetMetadata, OpDelete, OpPutRange, OpRenameSource, OpRenameReplace:
		return true
	}
	return false
}

// restReadOnlyRefused reports whether op fails on a ReadOnly file
// (locking.md §1.7, A5; a replaced rename destination counts as a Create).
func restReadOnlyRefused(op Op) bool {
	switch op {
	case OpCreateOverwrite, OpSetProperties, OpSetMetadata, OpPutRange, OpRenameReplace:
		return true
	}
	return false
}

func validOp(op Op) bool { return op >= OpGetProperties && op <= OpRenameReplace }

// sameLeaseID compares lease ids (GUIDs) case-insensitively.
func sameLeaseID(a, b string) bool { return strings.EqualFold(a, b) }

// decideREST decides a FileREST call in the order of locking.md §0.2 with
// ReadOnly placed after the lease check and before byte ranges:
// delete-pending, share modes (any handle for Delete File), lease, ReadOnly,
// byte-range locks. st.locks must be loaded for OpGetFile and OpPutRange.
func decideREST(st *fileState, req RESTRequest) error {
	if !validOp(req.Op) {
		return fmt.Errorf("rest file %d: op %d: %w", req.File, int(req.Op), ErrInvalidParameter)
	}
	if (req.Op == OpGetFile || req.Op == OpPutRange) && !req.Range.Valid() {
		return fmt.Errorf("%v file %d range %v: %w", req.Op, req.File, req.Range, ErrInvalidLockRange)
	}
	// 2. delete-pending: every operation (A9).
	if st.pending {
		return fmt.Errorf("%v file %d: %w", req.Op, req.File, ErrDeletePending)
	}
	// 3. share modes, one direction; Delete File: any handle (A4, A12).
	need := restNeeds(req.Op)
	var blockers []HandleID
	for _, h := range st.handles {
		if req.Op == OpDelete || (h.Access.HasData() && need&^h.Share != 0) {
			blockers = append(blockers, h.ID)
		}
	}
	if len(blockers) > 0 {
		return &ConflictError{Err: ErrSharingViolation, File: req.File, Op: req.Op.String(), Handles: blockers}
	}
	// 4. lease preconditions (§4.3, A2).
	if err := leaseCheck(st, req); err != nil {
		return err
	}
	// ReadOnly (§1.7, A5).
	if req.Facts.ReadOnly && restReadOnlyRefused(req.Op) {
		return fmt.Errorf("%v file %d: %w", req.Op, req.File, ErrReadOnly)
	}
	// 5. byte-range locks (§3.3): a REST call holds no lock.
	switch req.Op {
	case OpGetFile, OpPutRange:
		write := req.Op == OpPutRange
		var holders []HandleID
		for _, l := range st.locks {
			if l.Range.Overlaps(req.Range) && (l.Kind == LockExclusive || write) {
				holders = appendUnique(holders, l.Handle)
			}
		}
		if len(holders) > 0 {
			return &ConflictError{Err: ErrLockConflict, File: req.File, Op: req.Op.String(), Handles: holders}
		}
	}
	return nil
}

// leaseCheck is locking.md §4.3 for one REST call.
func leaseCheck(st *fileState, req RESTRequest) error {
	if st.lease.State != LeaseLeased {
		if req.LeaseID != "" {
			return &LeaseError{Code: LeaseNotPresentWithFileOperation, File: req.File}
		}
		return nil
	}
	switch {
	case req.LeaseID == "":
		if restWrites(req.Op) {
			return &LeaseError{Code: LeaseIDMissing, File: req.File}
		}
	case !sameLeaseID(req.LeaseID, st.lease.ID):
		return &LeaseError{Code: LeaseIDMismatchWithFileOperation, File: req.File}
	}
	return nil
}

// decideLease runs the Lease File state machine (locking.md §4.2) and the
// acquire check against open handles (§1.5, A3). It returns the new lease
// state and the lease id to report ("" for release and break).
func decideLease(st *fileState, req LeaseRequest, newID func() string) (LeaseInfo, string, error) {
	cur := st.lease
	notPresent := &LeaseError{Code: LeaseNotPresentWithLeaseOperation, File: req.File}
	mismatch := &LeaseError{Code: LeaseIDMismatchWithLeaseOperation, File: req.File}
	switch req.Action {
	case LeaseAcquire, LeaseChange, LeaseRelease, LeaseBreak:
	default:
		return cur, "", fmt.Errorf("lease file %d: action %d: %w", req.File, int(req.Action), ErrInvalidParameter)
	}
	if req.Action == LeaseChange && (req.LeaseID == "" || req.ProposedID == "") {
		return cur, "", fmt.Errorf("lease change file %d: lease id and proposed id required: %w", req.File, ErrInvalidParameter)
	}
	if req.Action == LeaseRelease && req.LeaseID == "" {
		return cur, "", fmt.Errorf("lease release file %d: lease id required: %w", req.File, ErrInvalidParameter)
	}
	if st.pending { // every REST operation on a delete-pending file (A9)
		return cur, "", fmt.Errorf("lease %v file %d: %w", req.Action, req.File, ErrDeletePending)
	}
	switch req.Action {
	case LeaseAcquire:
		if cur.State == LeaseLeased {
			if req.ProposedID != "" && sameLeaseID(req.ProposedID, cur.ID) {
				return cur, cur.ID, nil // idempotent
			}
			return cur, "", &LeaseError{Code: LeaseAlreadyPresent, File: req.File}
		}
		var blockers []HandleID
		for _, h := range st.handles {
			if !h.Access.HasData() {
				continue // A12
			}
			if h.Access.writes() || h.Access.deletes() || h.Share&(ShareWrite|ShareDelete) != ShareWrite|ShareDelete {
				blockers = append(blockers, h.ID)
			}
		}
		if len(blockers) > 0 {
			return cur, "", &ConflictError{Err: ErrSharingViolation, File: req.File, Op: "lease acquire", Handles: blockers}
		}
		id := req.ProposedID
		if id == "" {
			id = newID()
		}
		return LeaseInfo{State: LeaseLeased, ID: id}, id, nil
	case LeaseBreak:
		if cur.State == LeaseAvailable {
			return cur, "", notPresent
		}
		return LeaseInfo{State: LeaseBroken, ID: cur.ID}, "", nil
	case LeaseChange:
		if cur.State != LeaseLeased {
			return cur, "", notPresent
		}
		switch {
		case sameLeaseID(req.LeaseID, cur.ID):
			return LeaseInfo{State: LeaseLeased, ID: req.ProposedID}, req.ProposedID, nil
		case sameLeaseID(req.ProposedID, cur.ID): // retry of a change already made
			return cur, cur.ID, nil
		}
		return cur, "", mismatch
	default: // LeaseRelease
		if cur.State == LeaseAvailable {
			return cur, "", notPresent
		}
		if !sameLeaseID(req.LeaseID, cur.ID) {
			return cur, "", mismatch
		}
		return LeaseInfo{State: LeaseAvailable}, "", nil
	}
}

// decideDispose is FileDispositionInformation through handle h
// (locking.md §2.1, MS-FSA 2.1.5.15.3).
func decideDispose(h Handle, deletePending bool, facts Facts) error {
	if !h.Access.deletes() {
		return fmt.Errorf("dispose handle %d: no DELETE access: %w", h.ID, ErrAccessDenied)
	}
	if !deletePending {
		return nil
	}
	if facts.ReadOnly {
		return fmt.Errorf("dispose handle %d file %d: %w", h.ID, h.File, ErrCannotDelete)
	}
	if facts.Directory && facts.NonEmptyDir {
		return fmt.Errorf("dispose handle %d file %d: %w", h.ID, h.File, ErrDirectoryNotEmpty)
	}
	return nil
}

// lockRequester is who accesses or locks a range.
type lockRequester struct {
	handle HandleID // 0 for a REST call
	owner  OwnerID
	key    uint64
	posix  bool // a POSIX (fcntl) owner: own locks are (owner, key) wide
}

// ownLock reports whether l counts as the requester's own lock for §3.2:
// an SMB lock is own to its handle; a POSIX lock is own to its (owner, key)
// for POSIX requesters and to its handle for the others.
func ownLock(l lockRec, r lockRequester) bool {
	if r.handle == 0 {
		return false
	}
	if l.POSIX && r.posix && r.key != 0 {
		return l.owner == r.owner && l.Key == r.key
	}
	return l.Handle == r.handle
}

// advisory reports whether l binds r only by agreement: flocks do not
// bind POSIX requesters (their I/O and fcntl locks), as on a local disk.
func advisory(l lockRec, r lockRequester) bool { return l.Flock && r.posix }

// ioConflicts lists the handles whose locks block a read or write of rng
// (locking.md §3.2 read/write columns).
func ioConflicts(locks []lockRec, r lockRequester, rng Range, write bool) []HandleID {
	var holders []HandleID
	for _, l := range locks {
		if !l.Range.Overlaps(rng) || advisory(l, r) {
			continue
		}
		if (l.Kind == LockExclusive && !ownLock(l, r)) || (l.Kind == LockShared && write) {
			holders = appendUnique(holders, l.Handle)
		}
	}
	return holders
}

// lockBlocker returns the first lock that refuses a lock request of kind
// over rng (§3.2 lock columns), skipping POSIX locks of a POSIX requester's
// own (owner, key), which the request replaces instead.
func lockBlocker(locks []lockRec, r lockRequester, rng Range, kind LockKind) (lockRec, bool) {
	for _, l := range locks {
		if !lockRangesOverlap(l.Range, rng) || advisory(l, r) {
			continue
		}
		if r.posix && l.POSIX && l.owner == r.owner && l.Key == r.key {
			continue
		}
		if kind == LockExclusive || (l.Kind == LockExclusive && !ownLock(l, r)) {
			return l, true
		}
	}
	return lockRec{}, false
}

// lockRangesOverlap decides whether two lock ranges conflict as lock
// against lock, with the arithmetic of MS-FSA 2.1.4.10 on half-open
// ranges [Offset, Offset+Length) that Samba's smbd uses too (locking.md
// A15, smbd the oracle): a zero-length lock conflicts with a lock whose
// bytes lie on both sides of its offset, never with one it starts or ends
// at, and {0, 0} with nothing; equal non-empty ranges always conflict.
// Reads and writes keep to Overlaps: a zero-length lock covers no byte.
func lockRangesOverlap(a, b Range) bool {
	if a.Length != 0 && a == b {
		return true
	}
	return !endsBy(a, b.Offset) && !endsBy(b, a.Offset)
}

// endsBy reports whether r ends at or before off (r.Offset+r.Length <= off
// without overflow).
func endsBy(r Range, off uint64) bool { return r.Length <= off && r.Offset <= off-r.Length }

// flockBlockers lists the other handles whose flocks refuse a flock of
// kind through handle: any flock refuses an exclusive one, an exclusive
// flock a shared one. Nothing else refuses a flock.
func flockBlockers(locks []lockRec, handle HandleID, kind LockKind) []HandleID {
	var holders []HandleID
	for _, l := range locks {
		if l.Flock && l.Handle != handle && (kind == LockExclusive || l.Kind == LockExclusive) {
			holders = appendUnique(holders, l.Handle)
		}
	}
	return holders
}

// validLockRange checks an SMB lock or unlock range: zero lengths are
// valid (MS-FSA 2.1.5.8, locking.md A15), only a last byte past 2^64-1 is
// not.
func validLockRange(rng Range) error {
	if !rng.Valid() {
		return fmt.Errorf("lock range %v: %w", rng, ErrInvalidLockRange)
	}
	return nil
}

// validPOSIXRange checks a POSIX lock range: fcntl's length 0 means "to
// the end of the file", which the FUSE binding has already turned into a
// length, so a zero length here is a caller's bug.
func validPOSIXRange(rng Range) error {
	if rng.Length == 0 {
		return fmt.Errorf("lock range %v: zero length: %w", rng, ErrInvalidParameter)
	}
	return validLockRange(rng)
}

func validKind(kind LockKind) bool { return kind == LockShared || kind == LockExclusive }

// posixApply computes a POSIX owner's locks after setting kind over rng
// (kind 0 unlocks): the owner's pieces outside rng stay, split where rng
// cuts them; the new lock, taken through handle, covers rng; adjacent or
// overlapping pieces of the same kind and handle merge.
func posixApply(own []ByteLock, handle HandleID, key uint64, rng Range, kind LockKind) []ByteLock {
	var out []ByteLock
	for _, l := range own {
		if !l.Range.Overlaps(rng) {
			out = append(out, l)
			continue
		}
		if l.Range.Offset < rng.Offset {
			p := l
			p.Range = Range{Offset: l.Range.Offset, Length: rng.Offset - l.Range.Offset}
			out = append(out, p)
		}
		if l.Range.Last() > rng.Last() {
			p := l
			p.Range = Range{Offset: rng.Last() + 1, Length: l.Range.Last() - rng.Last()}
			out = append(out, p)
		}
	}
	if kind == 0 {
		return out
	}
	n := ByteLock{Handle: handle, Key: key, Range: rng, Kind: kind, POSIX: true}
	// Merge same-kind, same-handle pieces that touch the new lock.
	var kept []ByteLock
	for _, l := range out {
		if l.Kind == n.Kind && l.Handle == n.Handle && touches(l.Range, n.Range) && !(min(l.Range.Offset, n.Range.Offset) == 0 && max(l.Range.Last(), n.Range.Last()) == ^uint64(0)) {
			// (a span of all 2^64 bytes has no Length; such pieces stay apart)
			n.Range = span(l.Range, n.Range)
			continue
		}
		kept = append(kept, l)
	}
	return append(kept, n)
}

// touches reports whether a and b (both non-empty) overlap or are adjacent.
func touches(a, b Range) bool {
	if a.Overlaps(b) {
		return true
	}
	return (a.Last() != ^uint64(0) && a.Last()+1 == b.Offset) || (b.Last() != ^uint64(0) && b.Last()+1 == a.Offset)
}

func span(a, b Range) Range {
	lo := min(a.Offset, b.Offset)
	hi := max(a.Last(), b.Last())
	return Range{Offset: lo, Length: hi - lo + 1}
}

func appendUnique(ids []HandleID, id HandleID) []HandleID {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}
