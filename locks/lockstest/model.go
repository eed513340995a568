package lockstest

// A reference model of locking.md: in memory, slow, written from the spec
// text independently of rules.go (symmetric share check, per-op access
// tables, a literal lease state table). RandomizedAgainstModel drives
// the real Table (two owners on one database of the engine under test) and
// the model with the same seeded operations and compares every outcome.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

type mHandle struct {
	id     locks.HandleID
	client int
	file   locks.FileID
	access locks.Access
	share  locks.ShareMode
	doc    bool
}

type mLock struct {
	handle locks.HandleID
	r      locks.Range
	excl   bool
	flock  bool // a flock: WholeFile, one per handle
}

type mLease struct {
	state locks.LeaseState
	id    string
}

type model struct {
	handles []*mHandle // in id order
	pending map[locks.FileID]bool
	lease   map[locks.FileID]mLease
	locks   []mLock
	removed []locks.FileID
	leaseN  int
}

func newModel() *model {
	return &model{pending: map[locks.FileID]bool{}, lease: map[locks.FileID]mLease{}}
}

// classes: which of Read, Write, Delete an access uses / a share allows.
func uses(a locks.Access) [3]bool {
	return [3]bool{a&locks.AccessRead != 0 || a&locks.AccessExecute != 0, a&locks.AccessWrite != 0 || a&locks.AccessAppend != 0, a&locks.AccessDelete != 0}
}

func allows(s locks.ShareMode) [3]bool {
	return [3]bool{s&locks.ShareRead != 0, s&locks.ShareWrite != 0, s&locks.ShareDelete != 0}
}

func anyOf(b [3]bool) bool { return b[0] || b[1] || b[2] }

// mConflict: two opens with data access conflict when either uses a class
// the other does not allow.
func mConflict(a locks.Access, as locks.ShareMode, b locks.Access, bs locks.ShareMode) bool {
	ua, ub := uses(a), uses(b)
	if !anyOf(ua) || !anyOf(ub) {
		return false
	}
	aa, ab := allows(as), allows(bs)
	for k := 0; k < 3; k++ {
		if (ua[k] && !ab[k]) || (ub[k] && !aa[k]) {
			return true
		}
	}
	return false
}

func (m *model) onFile(f locks.FileID) []*mHandle {
	var out []*mHandle
	for _, h := range m.handles {
		if h.file == f {
			out = append(out, h)
		}
	}
	return out
}

func (m *model) handle(id locks.HandleID) *mHandle {
	for _, h := range m.handles {
		if h.id == id {
			return h
		}
	}
	return nil
}

func (m *model) open(f locks.FileID, a locks.Access, s locks.ShareMode, readOnly, overwrite, deleteOnClose bool) string {
	if m.pending[f] {
		return "pending"
	}
	if readOnly && (overwrite || uses(a)[1]) {
		return "readonly"
	}
	if readOnly && deleteOnClose {
		return "cannotdelete"
	}
	for _, h := range m.onFile(f) {
		if mConflict(h.access, h.share, a, s) {
			return "sharing"
		}
	}
	if m.lease[f].state == locks.LeaseLeased && (uses(a)[1] || uses(a)[2]) {
		return "sharing"
	}
	return "ok"
}

func (m *model) dropFile(f locks.FileID) {
	m.removed = append(m.removed, f)
	delete(m.pending, f)
	delete(m.lease, f)
	var hs []*mHandle
	for _, h := range m.handles {
		if h.file != f {
			hs = append(hs, h)
		}
	}
	m.handles = hs
}

// closeH closes h; reports whether the file was removed.
func (m *model) closeH(h *mHandle) bool {
	var ls []mLock
	for _, l := range m.locks {
		if l.handle != h.id {
			ls = append(ls, l)
		}
	}
	m.locks = ls
	m.handles = slices.DeleteFunc(m.handles, func(x *mHandle) bool { return x == h })
	if h.doc {
		m.pending[h.file] = true
	}
	if m.pending[h.file] && len(m.onFile(h.file)) == 0 {
		m.dropFile(h.file)
		return true
	}
	return false
}

func (m *model) locksOn(f locks.FileID) []mLock {
	var out []mLock
	for _, l := range m.locks {
		if h := m.handle(l.handle); h != nil && h.file == f {
			out = append(out, l)
		}
	}
	return out
}

var mNeeds = map[locks.Op][3]bool{
	locks.OpGetProperties: {}, locks.OpList: {},
	locks.OpGetFile: {true, false, false}, locks.OpListRanges: {true, false, false}, locks.OpCopySource: {true, false, false},
	locks.OpPutRange: {false, true, false}, locks.OpSetProperties: {false, true, false}, locks.OpSetMetadata: {false, true, false},
	locks.OpCreateOverwrite: {false, true, true}, locks.OpRenameReplace: {false, true, true},
	locks.OpDelete: {false, false, true}, locks.OpRenameSource: {false, false, true},
}

var mLeaseNeeded = map[locks.Op]bool{
	locks.OpCreateOverwrite: true, locks.OpSetProperties: true, locks.OpSetMetadata: true, locks.OpDelete: true, locks.OpPutRange: true,
	locks.OpRenameSource: true, locks.OpRenameReplace: true,
}

var mReadOnlyRefused = map[locks.Op]bool{
	locks.OpCreateOverwrite: true, locks.OpSetProperties: true, locks.OpSetMetadata: true, locks.OpPutRange: true, locks.OpRenameReplace: true,
}

func (m *model) rest(req locks.RESTRequest) string {
	f := req.File
	if m.pending[f] {
		return "pending"
	}
	for _, h := range m.onFile(f) {
		if req.Op == locks.OpDelete {
			return "sharing"
		}
		if !anyOf(uses(h.access)) {
			continue
		}
		need, ok := mNeeds[req.Op], allows(h.share)
		for k := 0; k < 3; k++ {
			if need[k] && !ok[k] {
				return "sharing"
			}
		}
	}
	ls := m.lease[f]
	if ls.state != locks.LeaseLeased {
		if req.LeaseID != "" {
			return string(locks.LeaseNotPresentWithFileOperation)
		}
	} else if req.LeaseID == "" {
		if mLeaseNeeded[req.Op] {
			return string(locks.LeaseIDMissing)
		}
	} else if req.LeaseID != ls.id {
		return string(locks.LeaseIDMismatchWithFileOperation)
	}
	if req.Facts.ReadOnly && mReadOnlyRefused[req.Op] {
		return "readonly"
	}
	if req.Op == locks.OpGetFile || req.Op == locks.OpPutRange {
		for _, l := range m.locksOn(f) {
			if l.r.Overlaps(req.Range) && (l.excl || req.Op == locks.OpPutRange) {
				return "lockconflict"
			}
		}
	}
	return "ok"
}

func (m *model) leaseOp(req locks.LeaseRequest) (string, string) {
	f := req.File
	if m.pending[f] {
		return "pending", ""
	}
	cur := m.lease[f]
	switch req.Action {
	case locks.LeaseAcquire:
		if cur.state == locks.LeaseLeased {
			if req.ProposedID == cur.id {
				return "ok", cur.id
			}
			return string(locks.LeaseAlreadyPresent), ""
		}
		for _, h := range m.onFile(f) {
			u := uses(h.access)
			if !anyOf(u) {
				continue
			}
			s := allows(h.share)
			if u[1] || u[2] || !s[1] || !s[2] {
				return "sharing", ""
			}
		}
		id := req.ProposedID
		if id == "" {
			m.leaseN++
			id = "gen-" + strconv.Itoa(m.leaseN)
		}
		m.lease[f] = mLease{locks.LeaseLeased, id}
		return "ok", id
	case locks.LeaseBreak:
		if cur.state == locks.LeaseAvailable {
			return string(locks.LeaseNotPresentWithLeaseOperation), ""
		}
		m.lease[f] = mLease{locks.LeaseBroken, cur.id}
		return "ok", ""
	case locks.LeaseChange:
		if cur.state != locks.LeaseLeased {
			return string(locks.LeaseNotPresentWithLeaseOperation), ""
		}
		if req.LeaseID == cur.id {
			m.lease[f] = mLease{locks.LeaseLeased, req.ProposedID}
			return "ok", req.ProposedID
		}
		if req.ProposedID == cur.id {
			return "ok", cur.id
		}
		return string(locks.LeaseIDMismatchWithLeaseOperation), ""
	default:
		if cur.state == locks.LeaseAvailable {
			return string(locks.LeaseNotPresentWithLeaseOperation), ""
		}
		if req.LeaseID != cur.id {
			return string(locks.LeaseIDMismatchWithLeaseOperation), ""
		}
		delete(m.lease, f)
		return "ok", ""
	}
}

// dispose sets or clears the delete-pending mark through h (a TRUE
// disposition needs Delete access and a file that is not ReadOnly).
func (m *model) dispose(h *mHandle, val bool, facts locks.Facts) string {
	switch {
	case h.access&locks.AccessDelete == 0:
		return "accessdenied"
	case val && facts.ReadOnly:
		return "cannotdelete"
	}
	m.pending[h.file] = val
	if !val {
		delete(m.pending, h.file)
	}
	return "ok"
}

func (m *model) lock(h *mHandle, r locks.Range, excl bool) string {
	for _, l := range m.locksOn(h.file) {
		if !l.r.Overlaps(r) {
			continue
		}
		if excl || (l.excl && l.handle != h.id) {
			return "notgranted"
		}
	}
	m.locks = append(m.locks, mLock{handle: h.id, r: r, excl: excl})
	return "ok"
}

func (m *model) unlock(h *mHandle, r locks.Range) string {
	best := -1
	for i, l := range m.locks {
		if l.handle == h.id && !l.flock && l.r == r && (best < 0 || (l.excl && !m.locks[best].excl)) {
			best = i
		}
	}
	if best < 0 {
		return "rangenotlocked"
	}
	m.locks = slices.Delete(m.locks, best, best+1)
	return "ok"
}

// flock applies a flock (kind 0: LOCK_UN): only other handles' flocks
// refuse it.
func (m *model) flock(h *mHandle, kind locks.LockKind) string {
	if kind != 0 {
		for _, l := range m.locksOn(h.file) {
			if l.flock && l.handle != h.id && (kind == locks.LockExclusive || l.excl) {
				return "notgranted"
			}
		}
	}
	m.locks = slices.DeleteFunc(m.locks, func(l mLock) bool { return l.flock && l.handle == h.id })
	if kind != 0 {
		m.locks = append(m.locks, mLock{handle: h.id, r: locks.WholeFile, excl: kind == locks.LockExclusive, flock: true})
	}
	return "ok"
}

func (m *model) io(h *mHandle, r locks.Range, write bool) string {
	for _, l := range m.locksOn(h.file) {
		if l.r.Overlaps(r) && ((l.excl && l.handle != h.id) || (!l.excl && write)) {
			return "lockconflict"
		}
	}
	return "ok"
}

// class names an error for comparison with the model.
func class(err error) string {
	if err == nil {
		return "ok"
	}
	if c := leaseCode(err); c != "" {
		return string(c)
	}
	for _, e := range []struct {
		err  error
		name string
	}{
		{locks.ErrSharingViolation, "sharing"}, {locks.ErrDeletePending, "pending"}, {locks.ErrLockConflict, "lockconflict"},
		{locks.ErrLockNotGranted, "notgranted"}, {locks.ErrRangeNotLocked, "rangenotlocked"}, {locks.ErrReadOnly, "readonly"},
		{locks.ErrCannotDelete, "cannotdelete"}, {locks.ErrAccessDenied, "accessdenied"}, {locks.ErrHandleClosed, "closed"},
		{locks.ErrInvalidParameter, "invalid"}, {locks.ErrInvalidLockRange, "invalidrange"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return "unexpected: " + err.Error()
}

func testRandomizedAgainstModel(t *testing.T, newDB func(*testing.T) Opener) {
	ops := 3000
	if testing.Short() {
		ops = 800
	}
	if s := os.Getenv("BLOBSHARE_LOCKS_MODEL_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runModel(t, newDB(t), seed, ops) })
	}
}

func runModel(t *testing.T, db Opener, seed uint64, nops int) {
	ctx := context.Background()
	var implRemoved []locks.FileID
	gen := 0
	opts := func(o locks.OwnerID) locks.Options {
		return locks.Options{
			Owner: o,
			Remove: func(_ context.Context, _ *locks.Conn, f locks.FileID) error {
				implRemoved = append(implRemoved, f)
				return nil
			},
			NewLeaseID: func() string { gen++; return "gen-" + strconv.Itoa(gen) },
		}
	}
	tabs := []*locks.Table{openTable(t, db, opts("owner-a")), openTable(t, db, opts("owner-b"))}
	const clients = 4
	tabOf := func(c int) *locks.Table { return tabs[c%2] }
	m := newModel()
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	files := []locks.FileID{1, 2, 3}
	accesses := []locks.Access{rd, wr, ap, ex, del, attr, rd | wr, rd | del, wr | del, rd | wr | del, rd | attr}
	shares := []locks.ShareMode{locks.ShareNone, locks.ShareRead, locks.ShareWrite, locks.ShareDelete, locks.ShareRead | locks.ShareWrite, locks.ShareRead | locks.ShareDelete, locks.ShareWrite | locks.ShareDelete, locks.ShareAll, locks.ShareAll, locks.ShareAll, locks.ShareAll, locks.ShareAll, locks.ShareAll}
	leaseIDs := []string{"", "lease-a", "lease-b"}
	randRange := func() locks.Range { return locks.Range{Offset: rng.Uint64N(12), Length: 1 + rng.Uint64N(6)} }
	// pickHandle returns a random model handle (or a made-up id).
	pickHandle := func() (locks.HandleID, int) {
		if len(m.handles) == 0 || rng.IntN(20) == 0 {
			return locks.HandleID(1 << 40), rng.IntN(clients) // unknown id
		}
		h := m.handles[rng.IntN(len(m.handles))]
		c := h.client
		if rng.IntN(10) == 0 {
			c = rng.IntN(clients) // maybe another owner's client
		}
		return h.id, c
	}
	tally := map[string]int{}
	for i := 0; i < nops; i++ {
		var (
			desc        string
			got, want   string
			gotX, wantX string // extra results to compare
		)
		switch k := rng.IntN(100); {
		case k < 30: // open
			c, f := rng.IntN(clients), files[rng.IntN(len(files))]
			req := locks.OpenRequest{File: f, Access: accesses[rng.IntN(len(accesses))], Share: shares[rng.IntN(len(shares))], DeleteOnClose: rng.IntN(16) == 0, ReadOnly: rng.IntN(8) == 0, Overwrite: rng.IntN(8) == 0}
			desc = fmt.Sprintf("client %d open %+v", c, req)
			want = m.open(f, req.Access, req.Share, req.ReadOnly, req.Overwrite, req.DeleteOnClose)
			var h locks.Handle
			err := tabOf(c).Update(ctx, func(tx *locks.Tx) error { var err error; h, err = tx.OpenHandle(req); return err })
			got = class(err)
			if err == nil && want == "ok" {
				m.handles = append(m.handles, &mHandle{h.ID, c, f, req.Access, req.Share, req.DeleteOnClose})
			}
		case k < 40: // close
			id, c := pickHandle()
			desc = fmt.Sprintf("client %d close %d", c, id)
			mh := m.handle(id)
			want, wantX = "closed", "false"
			if mh != nil && mh.client%2 == c%2 {
				want, wantX = "ok", fmt.Sprint(m.closeH(mh))
			}
			var res locks.CloseResult
			err := tabOf(c).Update(ctx, func(tx *locks.Tx) error { var err error; res, err = tx.CloseHandle(id); return err })
			got, gotX = class(err), fmt.Sprint(res.Removed)
		case k < 44: // dispose
			id, c := pickHandle()
			val := rng.IntN(3) > 0
			facts := locks.Facts{ReadOnly: rng.IntN(6) == 0}
			desc = fmt.Sprintf("client %d dispose %d %v %+v", c, id, val, facts)
			mh := m.handle(id)
			want = "closed"
			if mh != nil && mh.client%2 == c%2 {
				want = m.dispose(mh, val, facts)
			}
			got = class(tabOf(c).Update(ctx, func(tx *locks.Tx) error { return tx.Dispose(id, val, facts) }))
		case k < 58: // REST check
			req := locks.RESTRequest{File: files[rng.IntN(len(files))], Op: locks.Op(1 + rng.IntN(int(locks.OpRenameReplace))),
				LeaseID: leaseIDs[rng.IntN(len(leaseIDs))], Range: randRange(), Facts: locks.Facts{ReadOnly: rng.IntN(5) == 0}}
			if rng.IntN(4) == 0 {
				req.Range = locks.WholeFile
			}
			desc = fmt.Sprintf("rest %+v", req)
			want = m.rest(req)
			got = class(tabs[rng.IntN(2)].View(ctx, func(tx *locks.Tx) error { return tx.CheckREST(req) }))
		case k < 66: // lease
			req := locks.LeaseRequest{File: files[rng.IntN(len(files))], Action: locks.LeaseAction(1 + rng.IntN(4)),
				LeaseID: leaseIDs[1+rng.IntN(2)], ProposedID: leaseIDs[rng.IntN(len(leaseIDs))]}
			if req.Action == locks.LeaseChange && req.ProposedID == "" {
				req.ProposedID = "lease-c"
			}
			desc = fmt.Sprintf("lease %+v", req)
			want, wantX = m.leaseOp(req)
			var id string
			err := tabs[rng.IntN(2)].Update(ctx, func(tx *locks.Tx) error { var err error; id, err = tx.Lease(req); return err })
			got, gotX = class(err), id
			if got != "ok" || want != "ok" {
				gotX, wantX = "", ""
			}
		case k < 78: // byte-range lock / unlock
			id, c := pickHandle()
			r := randRange()
			mh := m.handle(id)
			if rng.IntN(3) == 0 {
				desc = fmt.Sprintf("client %d unlock %d %v", c, id, r)
				want = "closed"
				if mh != nil && mh.client%2 == c%2 {
					want = m.unlock(mh, r)
				}
				got = class(tabOf(c).Update(ctx, func(tx *locks.Tx) error { return tx.Unlock(id, r) }))
			} else {
				excl := rng.IntN(2) == 0
				desc = fmt.Sprintf("client %d lock %d %v excl=%v", c, id, r, excl)
				want = "closed"
				if mh != nil && mh.client%2 == c%2 {
					want = m.lock(mh, r, excl)
				}
				kind := locks.LockShared
				if excl {
					kind = locks.LockExclusive
				}
				got = class(tabOf(c).Update(ctx, func(tx *locks.Tx) error { return tx.Lock(id, r, kind) }))
			}
		case k < 86: // I/O through a handle
			id, c := pickHandle()
			r, write := randRange(), rng.IntN(2) == 0
			desc = fmt.Sprintf("client %d io %d %v write=%v", c, id, r, write)
			want = "closed"
			if mh := m.handle(id); mh != nil {
				want = m.io(mh, r, write)
			}
			got = class(tabOf(c).View(ctx, func(tx *locks.Tx) error { return tx.CheckIO(id, r, write) }))
		case k < 88: // force close from anyone
			id, _ := pickHandle()
			desc = fmt.Sprintf("force close %d", id)
			want = "ok"
			wantX = "false"
			if mh := m.handle(id); mh != nil {
				wantX = "true"
				m.closeH(mh)
			}
			var found bool
			err := tabs[rng.IntN(2)].Update(ctx, func(tx *locks.Tx) error { var err error; found, err = tx.ForceClose(id); return err })
			got, gotX = class(err), fmt.Sprint(found)
		case k < 91: // unlink through the mount
			f := files[rng.IntN(len(files))]
			facts := locks.Facts{ReadOnly: rng.IntN(6) == 0}
			desc = fmt.Sprintf("unlink %d %+v", f, facts)
			want = m.open(f, locks.AccessDelete, locks.ShareAll, false, false, false)
			if want == "ok" && facts.ReadOnly {
				want = "cannotdelete"
			}
			if want == "ok" {
				if len(m.onFile(f)) == 0 {
					m.dropFile(f)
					wantX = "true"
				} else {
					m.pending[f] = true
					wantX = "false"
				}
			}
			var removed bool
			err := tabs[rng.IntN(2)].Update(ctx, func(tx *locks.Tx) error { var err error; removed, err = tx.UnlinkOpen(f, facts); return err })
			got = class(err)
			if err == nil {
				gotX = fmt.Sprint(removed)
			}
		default: // flock
			id, c := pickHandle()
			kind := locks.LockKind(rng.IntN(3)) // 0 (LOCK_UN), shared, exclusive
			desc = fmt.Sprintf("client %d flock %d %v", c, id, kind)
			mh := m.handle(id)
			want = "closed"
			if mh != nil && mh.client%2 == c%2 {
				want = m.flock(mh, kind)
			}
			got = class(tabOf(c).Update(ctx, func(tx *locks.Tx) error { return tx.Flock(id, kind) }))
		}
		tally[want]++
		if got != want || gotX != wantX {
			t.Fatalf("seed %d op %d: %s: got %s %s, model %s %s", seed, i, desc, got, gotX, want, wantX)
		}
		checkInvariants(t, tabs[0], m, seed, i)
	}
	if !slices.Equal(implRemoved, m.removed) {
		t.Fatalf("seed %d: removed files %v, model %v", seed, implRemoved, m.removed)
	}
	t.Logf("seed %d: %d ops, %d handles open at the end, %d removals; outcomes %v", seed, nops, len(m.handles), len(m.removed), tally)
}

// checkInvariants: the table holds exactly the model's handles, no two
// granted opens conflict, and a leased file has no handle with Write or
// Delete access.
func checkInvariants(t *testing.T, tab *locks.Table, m *model, seed uint64, i int) {
	t.Helper()
	var hs []locks.Handle
	must(t, tab.View(context.Background(), func(tx *locks.Tx) error {
		var err error
		hs, err = tx.AllHandles()
		return err
	}))
	if len(hs) != len(m.handles) {
		t.Fatalf("seed %d op %d: table has %d handles, model %d", seed, i, len(hs), len(m.handles))
	}
	sorted := slices.Clone(m.handles)
	slices.SortFunc(sorted, func(a, b *mHandle) int { return cmpID(a.id, b.id) })
	for j, h := range hs {
		mh := sorted[j]
		if h.ID != mh.id || h.File != mh.file || h.Access != mh.access || h.Share != mh.share {
			t.Fatalf("seed %d op %d: handle %+v, model %+v", seed, i, h, *mh)
		}
		for _, o := range hs[j+1:] {
			if o.File == h.File && mConflict(h.Access, h.Share, o.Access, o.Share) {
				t.Fatalf("seed %d op %d: granted opens conflict: %+v and %+v", seed, i, h, o)
			}
		}
	}
	// Leases: the table agrees with the model, and a leased file has no
	// handle with Write or Delete access (acquire refuses them, A3; opens
	// asking for them are refused while leased, A14).
	must(t, tab.View(context.Background(), func(tx *locks.Tx) error {
		for _, f := range []locks.FileID{1, 2, 3} {
			li, err := tx.LeaseInfo(f)
			if err != nil {
				return err
			}
			ml := m.lease[f]
			if li.State != ml.state || (li.State != locks.LeaseAvailable && li.ID != ml.id) {
				return fmt.Errorf("seed %d op %d: file %d lease %+v, model %+v", seed, i, f, li, ml)
			}
			if li.State != locks.LeaseLeased {
				continue
			}
			for _, h := range hs {
				if h.File == f && (uses(h.Access)[1] || uses(h.Access)[2]) {
					return fmt.Errorf("seed %d op %d: leased file %d has handle %+v", seed, i, f, h)
				}
			}
		}
		return nil
	}))
}

func cmpID(a, b locks.HandleID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
