package fs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// releaseDelay bounds how long a released handle (Handle.Release) stays
// open in the lock table, waiting for a write transaction of this process
// to carry its close.
const releaseDelay = time.Millisecond

// releases are handles whose owner has let go of them (Handle.Release) but
// that are still open in the lock table. Their closes ride along with the
// next write transaction of this FileSystem — a FUSE RELEASE is followed at
// once by the next file's CREATE, so the close costs no commit of its own —
// or run on their own after releaseDelay.
//
// The timer is the FileSystem's goroutine: close stops it and waits for a
// run already started (pending counts an armed timer or a running
// callback), so nothing touches the lock table after Close returns.
type releases struct {
	mu      sync.Mutex
	queue   []release
	timer   *time.Timer    // settles the queue after releaseDelay; nil until first used
	armed   bool           // timer is set
	stopped bool           // FileSystem.close has begun: no more timers
	pending sync.WaitGroup // one per armed timer, until its callback returns or it is stopped
	n       atomic.Int32   // len(queue), read without mu
}

type release struct {
	h    *Handle
	done func(error) // the lock-table close's outcome; may be nil
}

// closed is what closing one handle did, for after the commit.
type closed struct {
	r       release
	err     error
	removed bool
	parent  FileID
	name    string
}

// queueRelease queues the lock-table close of h (already flushed and
// marked closed).
// After close has begun the queue is settled at once, on the caller's
// goroutine, as no timer may start any more.
func (fsys *FileSystem) queueRelease(h *Handle, done func(error)) {
	rs := &fsys.rel
	rs.mu.Lock()
	rs.queue = append(rs.queue, release{h: h, done: done})
	rs.n.Add(1)
	if rs.stopped {
		rs.mu.Unlock()
		fsys.settleReleases(context.Background())
		return
	}
	defer rs.mu.Unlock()
	if rs.armed {
		return
	}
	rs.pending.Add(1)
	if rs.timer == nil {
		rs.timer = time.AfterFunc(releaseDelay, func() {
			defer rs.pending.Done()
			rs.mu.Lock()
			rs.armed = false
			rs.mu.Unlock()
			// The mount's releases: with the mount's changes folded,
			// their closes fold too rather than commit the fold.
			fsys.settleVia(context.Background(), fsys.updateMount)
		})
	} else {
		rs.timer.Reset(releaseDelay)
	}
	rs.armed = true
}

// stopReleaseTimer stops the timer for good and waits for a callback
// already running; the queue is left for close to settle.
func (fsys *FileSystem) stopReleaseTimer() {
	rs := &fsys.rel
	rs.mu.Lock()
	rs.stopped = true
	if rs.armed && rs.timer.Stop() {
		rs.armed = false
		rs.pending.Done()
	}
	rs.mu.Unlock()
	rs.pending.Wait()
}

// takeReleases empties the queue (and stops its timer: when a write takes
// the queue, as it does in a stream of small files, no timer ever fires).
func (fsys *FileSystem) takeReleases() []release {
	rs := &fsys.rel
	if rs.n.Load() == 0 {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	q := rs.queue
	rs.queue = nil
	rs.n.Store(0)
	if rs.armed && rs.timer.Stop() {
		rs.armed = false
		rs.pending.Done() // its callback will not run
	}
	return q
}

// settleReleases closes the released handles now, so that what follows
// sees them closed.
func (fsys *FileSystem) settleReleases(ctx context.Context) {
	fsys.settleVia(ctx, fsys.update)
}

// settleVia closes the released handles in a transaction run by update.
func (fsys *FileSystem) settleVia(ctx context.Context, update func(context.Context, func(*locks.Tx, *q) ([]Change, error)) error) {
	if fsys.rel.n.Load() == 0 {
		return
	}
	if err := update(ctx, nil); err != nil {
		fsys.log.Warn("fs: close released handles", "err", err)
	}
}

// closeNow closes a detached handle in the lock table (with the released
// handles waiting in the queue).
func (fsys *FileSystem) closeNow(ctx context.Context, h *Handle) error {
	var cs []closed
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		var err error
		cs, err = q.closeInTx(tx, []release{{h: h}}, cs[:0])
		return nil, err
	})
	if err != nil {
		return h.op("close", err)
	}
	fsys.finishCloses(cs)
	return h.op("close", cs[0].err)
}

// closeInTx closes the released handles in tx, appending what happened to
// out. A handle already closed (force-closed meanwhile) is reported to its
// done and skipped; any other error ends the transaction.
func (q *q) closeInTx(tx *locks.Tx, rs []release, out []closed) ([]closed, error) {
	for _, r := range rs {
		c := closed{r: r}
		// The entry is read only for a close that may remove the file
		// (to name it in the Change): most closes are quiet.
		if done, err := tx.CloseQuiet(r.h.h.id); err != nil {
			return out, err
		} else if done {
			out = append(out, c)
			continue
		}
		e, eerr := q.get(r.h.h.file)
		if eerr == nil {
			c.parent, c.name = e.parent, e.name
		}
		res, err := tx.CloseHandle(r.h.h.id)
		switch {
		case errors.Is(err, locks.ErrHandleClosed):
			c.err = err
		case err != nil:
			return out, err
		}
		c.removed = res.Removed
		if eerr == nil && err == nil && !res.Removed && e.kind.IsDir() {
			// A delete-on-close directory others keep open is now
			// delete pending: its watchers hear of it.
			if err := q.recordDirPending(tx, e.id); err != nil {
				return out, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// finishCloses runs, after the commit, what closing handles leaves to do:
// collect removed files' blobs, tell subscribers, tell the releasers.
func (fsys *FileSystem) finishCloses(cs []closed) {
	var chs []Change
	kick := false
	for _, c := range cs {
		if c.removed {
			kick = true
			chs = append(chs, Change{Kind: ChangeRemove, File: c.r.h.h.file, Parent: c.parent, Name: c.name})
		}
	}
	if kick {
		fsys.kickGC()
	}
	fsys.notify(chs...)
	for _, c := range cs {
		if c.r.done != nil {
			c.r.done(c.r.h.op("close", c.err))
		}
	}
}

// closeApart closes released handles each in a transaction of its own
// (after the transaction they rode along with failed).
func (fsys *FileSystem) closeApart(ctx context.Context, rs []release) {
	for _, r := range rs {
		err := fsys.closeNow(context.WithoutCancel(ctx), r.h)
		if err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			fsys.log.Error("fs: close released handle", "file", r.h.h.file, "handle", r.h.h.id, "err", err)
		}
		if r.done != nil {
			r.done(err)
		}
	}
}

// errCloses marks a failure of the released handles' closes inside a
// transaction, to tell it from fn's own.
type errCloses struct{ err error }

func (e *errCloses) Error() string { return "close released handles: " + e.err.Error() }
func (e *errCloses) Unwrap() error { return e.err }
