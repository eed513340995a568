package fs

import (
	"context"
	"errors"

	"github.com/blobshare/blobshare/locks"
)

// Group commit of REST writes.
//
// A file's commits are serialised (the in-process commit lock and the
// intent row), and each costs the same whatever it carries: three short
// transactions, a read of the block list and a blob commit that syncs the
// new block list (three journal commits on the local store, each of which
// waits for whatever data other writers have in flight). With 4 ranges in
// flight, one commit per range made every range wait for the commits of
// those before it. Instead a REST write of whole blocks queues on the
// file and whoever takes the commit lock commits every write queued so
// far in one commit: one block list naming all their blocks, each write's
// own check (range, lease, locks) made in the transaction that takes the
// commit lock, a write refused there answered with its own error and left
// out. Every write of a group is answered with the entry after the group's
// commit. The data needs no sync there: REST stages whole blocks durably
// before queueing (stage.durable), all writers at once.

// rangeWrite is a REST write waiting in its file's queue. The fields after
// leaseID are set by the commit that takes it, before that commit
// releases the commit lock.
type rangeWrite struct {
	stage   *stage // whole blocks only, staged
	off, n  int64
	leaseID string

	done bool
	e    entry
	err  error
}

// errNoneAllowed: every write of a group was refused by its check (each
// has its own error).
var errNoneAllowed = errors.New("no write of the group allowed")

// wholeBlocksOnly reports whether everything staged is whole blocks
// (nothing to merge onto old content at commit).
func (s *stage) wholeBlocksOnly() bool {
	return len(s.full) > 0 && len(s.parts) == 0 && len(s.cleared) == 0 && s.spill == nil
}

// commitRanges queues w on file id and returns once a commit took it.
func (fsys *FileSystem) commitRanges(ctx context.Context, op, path string, id FileID, w *rangeWrite) (Attr, error) {
	if err := w.stage.settle(); err != nil {
		return Attr{}, pathErr(op, path, err)
	}
	st := fsys.acquireFile(id)
	defer fsys.releaseFile(id, st)
	st.queueMu.Lock()
	st.queue = append(st.queue, w)
	st.queueMu.Unlock()
	if fsys.queuedHook != nil {
		fsys.queuedHook()
	}
	st.commit.Lock()
	// Whoever holds the lock takes the queue: w itself, unless a commit
	// before took it along (w.done then).
	st.queueMu.Lock()
	group := st.queue
	st.queue = nil
	st.queueMu.Unlock()
	if len(group) > 0 {
		// The group's commit is other requests' too: the leader's
		// cancellation does not end it.
		fsys.commitGroup(context.WithoutCancel(ctx), id, group)
	}
	st.commit.Unlock()
	if !w.done { // cannot happen: the lock holder takes every queued write
		return Attr{}, pathErr(op, path, errors.New("fs: a queued write was left uncommitted"))
	}
	if w.err != nil {
		return Attr{}, pathErr(op, path, w.err)
	}
	return w.e.attr(path), nil
}

// commitGroup commits group as one commit and sets each write's outcome.
// The commit lock is held.
func (fsys *FileSystem) commitGroup(ctx context.Context, id FileID, group []*rangeWrite) {
	merged := newStage(fsys, id)
	// Every write's blocks, so that the commit sees whole blocks before
	// the check narrows them to the allowed writes' (an inline file then
	// moves to a blob as for a single write).
	merge := func(ws []*rangeWrite) {
		merged.full, merged.end = map[int64]string{}, 0
		for _, w := range ws {
			for idx, bid := range w.stage.full { // a later write of a block wins
				merged.full[idx] = bid
			}
			merged.end = max(merged.end, w.stage.end)
		}
	}
	merge(group)
	var allowed []*rangeWrite
	e, err := fsys.commitHeld(ctx, id, commitOp{
		op:    "put range",
		stage: merged,
		check: func(tx *locks.Tx, q *q, e entry) error {
			// Runs again if the transaction is retried: start over.
			allowed = allowed[:0]
			for _, w := range group {
				if w.err = checkPutRange(tx, q, e, id, w.off, w.n, w.leaseID); w.err == nil {
					allowed = append(allowed, w)
				}
			}
			merge(allowed)
			if len(allowed) == 0 {
				return errNoneAllowed
			}
			return nil
		},
	})
	for _, w := range group {
		w.done = true
		switch {
		case w.err != nil: // refused by its own check
		case err != nil:
			w.err = err
		default:
			w.e = e
		}
	}
}
