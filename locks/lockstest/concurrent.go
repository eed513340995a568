package lockstest

// The concurrent per-file check (../shared/spec/meta-engine.md §3.9): K
// processes on one database decide at once on a few files, and every
// outcome must be the one the reference model gives when the decisions
// are replayed in the order they were made.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// step is one decision taken by a client: its position, what it was and
// what the Table answered; replay asks the model the same question (and
// applies it to the model), returning the model's answer in got's terms.
type step struct {
	pos       uint64
	client    int
	desc      string
	got, gotX string
	replay    func(m *model) (want, wantX string)
}

// testConcurrentAgainstModel: K Tables (K processes, one goroutine each)
// on one database run random opens, closes, dispositions, byte-range
// locks and flocks on their own handles, REST and I/O checks, leases and
// unlinks on three files, all at once. Each decision runs in a write
// transaction and, once decided, takes a position from a counter shared
// by the clients, still inside its transaction: a decision holds its
// file's key lock from before it reads the file until its transaction
// ends (keylock.go; on SQLite the writer lock holds every key), so two
// decisions on one file take their positions in the order they decided,
// and an engine that let two decide at once on one file is caught when
// the replay in that order on the model disagrees. The final table must
// hold exactly the model's handles and leases.
func testConcurrentAgainstModel(t *testing.T, newDB func(*testing.T) Opener) {
	const procs = 3
	nops := 250
	if testing.Short() {
		nops = 80
	}
	db := newDB(t)
	tabs := make([]*locks.Table, procs)
	for i := range tabs {
		tabs[i] = openTable(t, db, locks.Options{})
	}
	var pos atomic.Uint64
	logs := make([][]step, procs)
	var wg sync.WaitGroup
	for c := range procs {
		wg.Go(func() { logs[c] = runClient(t.Context(), tabs[c], c, uint64(c+1), nops, &pos) })
	}
	wg.Wait()

	var steps []step
	for _, l := range logs {
		steps = append(steps, l...)
	}
	slices.SortFunc(steps, func(a, b step) int { return cmpPos(a.pos, b.pos) })
	m := newModel()
	tally := map[string]int{}
	for i, s := range steps {
		if i > 0 && s.pos == steps[i-1].pos {
			t.Fatalf("two decisions took position %d", s.pos)
		}
		want, wantX := s.replay(m)
		tally[want]++
		if s.got != want || s.gotX != wantX {
			t.Fatalf("decision %d (position %d), client %d: %s: got %s %s, model in decision order %s %s",
				i, s.pos, s.client, s.desc, s.got, s.gotX, want, wantX)
		}
	}
	checkInvariants(t, tabs[0], m, 0, len(steps))
	t.Logf("%d clients, %d decisions; outcomes %v", procs, len(steps), tally)
}

func cmpPos(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// runClient runs nops random decisions through tab as client c and
// returns them in its own order. It never fails the test itself (it runs
// on a goroutine of its own): an unexpected error becomes an outcome the
// model never gives.
func runClient(ctx context.Context, tab *locks.Table, c int, seed uint64, nops int, pos *atomic.Uint64) []step {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	files := []locks.FileID{1, 2, 3}
	accesses := []locks.Access{rd, wr, ap, ex, del, attr, rd | wr, rd | del, wr | del, rd | wr | del, rd | attr}
	shares := []locks.ShareMode{locks.ShareNone, locks.ShareRead, locks.ShareWrite, locks.ShareDelete, locks.ShareRead | locks.ShareWrite, locks.ShareRead | locks.ShareDelete, locks.ShareWrite | locks.ShareDelete, locks.ShareAll, locks.ShareAll, locks.ShareAll, locks.ShareAll, locks.ShareAll}
	leaseIDs := []string{"lease-a", "lease-b", "lease-c"}
	randRange := func() locks.Range { return locks.Range{Offset: rng.Uint64N(12), Length: 1 + rng.Uint64N(6)} }
	// decide runs fn in a write transaction and takes the decision's
	// position after fn decided, in the same transaction: the attempt
	// that Update committed (or whose refusal it returned) sets it last.
	decide := func(fn func(tx *locks.Tx) error) (uint64, error) {
		var p uint64
		err := tab.Update(ctx, func(tx *locks.Tx) error {
			err := fn(tx)
			p = pos.Add(1)
			return err
		})
		return p, err
	}
	var mine []locks.Handle // this client's open handles
	pick := func() (locks.Handle, int) {
		i := rng.IntN(len(mine))
		return mine[i], i
	}
	var log []step
	for range nops {
		var s step
		s.client = c
		k := rng.IntN(100)
		switch {
		case len(mine) == 0 && k >= 30 && k < 78:
			k = 0 // nothing of ours to act on: open instead
		case len(mine) >= 4 && k < 30:
			k = 30 // keep few handles open, or delete-pending marks stay for good
		}
		switch {
		case k < 30: // open
			req := locks.OpenRequest{File: files[rng.IntN(len(files))], Access: accesses[rng.IntN(len(accesses))], Share: shares[rng.IntN(len(shares))],
				DeleteOnClose: rng.IntN(20) == 0, ReadOnly: rng.IntN(10) == 0, Overwrite: rng.IntN(10) == 0}
			var h locks.Handle
			p, err := decide(func(tx *locks.Tx) error { var err error; h, err = tx.OpenHandle(req); return err })
			if err == nil {
				mine = append(mine, h)
			}
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("open %+v", req)
			s.replay = func(m *model) (string, string) {
				want := m.open(req.File, req.Access, req.Share, req.ReadOnly, req.Overwrite, req.DeleteOnClose)
				if want == "ok" && err == nil {
					m.handles = append(m.handles, &mHandle{h.ID, c, req.File, req.Access, req.Share, req.DeleteOnClose})
				}
				return want, ""
			}
		case k < 42: // close
			h, i := pick()
			var res locks.CloseResult
			p, err := decide(func(tx *locks.Tx) error { var err error; res, err = tx.CloseHandle(h.ID); return err })
			if err == nil {
				mine = slices.Delete(mine, i, i+1)
			}
			s.pos, s.got, s.gotX, s.desc = p, class(err), fmt.Sprint(res.Removed), fmt.Sprintf("close %d", h.ID)
			s.replay = func(m *model) (string, string) {
				mh := m.handle(h.ID) // nil only if the model closed what the Table kept
				if mh == nil {
					return "closed", "false"
				}
				return "ok", fmt.Sprint(m.closeH(mh))
			}
		case k < 47: // dispose
			h, _ := pick()
			val, facts := rng.IntN(3) == 0, locks.Facts{ReadOnly: rng.IntN(6) == 0}
			p, err := decide(func(tx *locks.Tx) error { return tx.Dispose(h.ID, val, facts) })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("dispose %d %v %+v", h.ID, val, facts)
			s.replay = func(m *model) (string, string) {
				mh := m.handle(h.ID) // nil only if the model closed what the Table kept
				if mh == nil {
					return "closed", ""
				}
				return m.dispose(mh, val, facts), ""
			}
		case k < 61: // byte-range lock or unlock
			h, _ := pick()
			r := randRange()
			if rng.IntN(3) == 0 {
				p, err := decide(func(tx *locks.Tx) error { return tx.Unlock(h.ID, r) })
				s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("unlock %d %v", h.ID, r)
				s.replay = func(m *model) (string, string) {
					mh := m.handle(h.ID) // nil only if the model closed what the Table kept
					if mh == nil {
						return "closed", ""
					}
					return m.unlock(mh, r), ""
				}
				break
			}
			excl := rng.IntN(2) == 0
			kind := locks.LockShared
			if excl {
				kind = locks.LockExclusive
			}
			p, err := decide(func(tx *locks.Tx) error { return tx.Lock(h.ID, r, kind) })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("lock %d %v excl=%v", h.ID, r, excl)
			s.replay = func(m *model) (string, string) {
				mh := m.handle(h.ID) // nil only if the model closed what the Table kept
				if mh == nil {
					return "closed", ""
				}
				return m.lock(mh, r, excl), ""
			}
		case k < 70: // I/O through a handle
			h, _ := pick()
			r, write := randRange(), rng.IntN(2) == 0
			p, err := decide(func(tx *locks.Tx) error { return tx.CheckIO(h.ID, r, write) })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("io %d %v write=%v", h.ID, r, write)
			s.replay = func(m *model) (string, string) {
				mh := m.handle(h.ID) // nil only if the model closed what the Table kept
				if mh == nil {
					return "closed", ""
				}
				return m.io(mh, r, write), ""
			}
		case k < 78: // flock
			h, _ := pick()
			kind := locks.LockKind(rng.IntN(3)) // 0 (LOCK_UN), shared, exclusive
			p, err := decide(func(tx *locks.Tx) error { return tx.Flock(h.ID, kind) })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("flock %d %v", h.ID, kind)
			s.replay = func(m *model) (string, string) {
				mh := m.handle(h.ID) // nil only if the model closed what the Table kept
				if mh == nil {
					return "closed", ""
				}
				return m.flock(mh, kind), ""
			}
		case k < 88: // REST check, decided in a write transaction
			req := locks.RESTRequest{File: files[rng.IntN(len(files))], Op: locks.Op(1 + rng.IntN(int(locks.OpRenameReplace))),
				LeaseID: []string{"", leaseIDs[0], leaseIDs[1]}[rng.IntN(3)], Range: randRange(), Facts: locks.Facts{ReadOnly: rng.IntN(5) == 0}}
			if rng.IntN(4) == 0 {
				req.Range = locks.WholeFile
			}
			p, err := decide(func(tx *locks.Tx) error { return tx.CheckREST(req) })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("rest %+v", req)
			s.replay = func(m *model) (string, string) { return m.rest(req), "" }
		case k < 97: // lease, always with a proposed id (no generated ids)
			req := locks.LeaseRequest{File: files[rng.IntN(len(files))], Action: locks.LeaseAction(1 + rng.IntN(4)),
				LeaseID: leaseIDs[rng.IntN(2)], ProposedID: leaseIDs[rng.IntN(len(leaseIDs))]}
			var id string
			p, err := decide(func(tx *locks.Tx) error { var err error; id, err = tx.Lease(req); return err })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("lease %+v", req)
			if s.got == "ok" {
				s.gotX = id
			}
			s.replay = func(m *model) (string, string) {
				want, wantX := m.leaseOp(req)
				if want != "ok" {
					wantX = ""
				}
				return want, wantX
			}
		default: // unlink through the mount
			f := files[rng.IntN(len(files))]
			facts := locks.Facts{ReadOnly: rng.IntN(6) == 0}
			var removed bool
			p, err := decide(func(tx *locks.Tx) error { var err error; removed, err = tx.UnlinkOpen(f, facts); return err })
			s.pos, s.got, s.desc = p, class(err), fmt.Sprintf("unlink %d %+v", f, facts)
			if err == nil {
				s.gotX = fmt.Sprint(removed)
			}
			s.replay = func(m *model) (string, string) {
				want := m.open(f, locks.AccessDelete, locks.ShareAll, false, false, false)
				if want == "ok" && facts.ReadOnly {
					want = "cannotdelete"
				}
				if want != "ok" {
					return want, ""
				}
				if len(m.onFile(f)) == 0 {
					m.dropFile(f)
					return want, "true"
				}
				m.pending[f] = true
				return want, "false"
			}
		}
		log = append(log, s)
	}
	return log
}
