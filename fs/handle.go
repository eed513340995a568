package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// handleState is the per-open state behind a *Handle.
type handleState struct {
	fsys   *FileSystem
	id     locks.HandleID
	file   FileID
	access locks.Access
	posix  bool // OpenOptions.POSIX
	// visible: OpenOptions.VisibleWrites; marked: the handle is in
	// FileSystem.unflushed (under mu).
	visible bool
	marked  bool
	// rowed: the handle has its row in ns_unflushed (under mu).
	rowed bool

	mu     sync.Mutex
	closed bool
	stage  *stage
	rd     *seqReader

	// breaker: a handle of the mount (Open) or of `blobshare session`
	// (OpenByPath), whose writes and size changes break the SMB clients'
	// Read caching (breaks.go); zero for SMB's and REST's opens, whose
	// front ends break it themselves.
	breaker locks.Requester

	// locked: the handle asked for a byte-range lock at least once. Its
	// close then never waits in the release queue, so checks that do not
	// settle releases (peek) never meet a released handle's locks.
	locked atomic.Bool
}

func (fsys *FileSystem) newHandle(lh locks.Handle, opts OpenOptions) *Handle {
	h := &Handle{h: handleState{fsys: fsys, id: lh.ID, file: lh.File, access: lh.Access, posix: opts.POSIX, visible: opts.VisibleWrites}}
	st := fsys.acquireFile(lh.File)
	fsys.mu.Lock()
	st.handles[h] = struct{}{}
	fsys.handles[h] = struct{}{}
	fsys.mu.Unlock()
	return h
}

func (h *Handle) op(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, File: h.h.file, Err: fmt.Errorf("handle %d: %w", h.h.id, err)}
}

const readAccess = locks.AccessRead | locks.AccessExecute
const writeAccess = locks.AccessWrite | locks.AccessAppend

// checkIO checks n bytes of I/O at off through the handle against the
// byte-range locks, as its owner's I/O (owner: the POSIX lock owner of a
// POSIX handle's I/O, 0 unknown).
func (h *Handle) checkIO(tx *locks.Tx, off, n int64, owner uint64, write bool) error {
	r := locks.Range{Offset: uint64(off), Length: uint64(n)}
	if h.h.posix {
		return tx.CheckIOKey(h.h.id, owner, r, write)
	}
	return tx.CheckIO(h.h.id, r, write)
}

func (h *Handle) readAt(ctx context.Context, p []byte, off int64, owner uint64) (int, error) {
	h.h.fsys.commitReaders(ctx, h.h.file, h) // before h.h.mu: writers may be reading too
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return 0, h.op("read", locks.ErrHandleClosed)
	}
	if h.h.access&readAccess == 0 {
		return 0, h.op("read", locks.ErrAccessDenied)
	}
	if off < 0 {
		return 0, h.op("read", ErrInvalidRange)
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Read-your-writes: staged data in range is committed first.
	if s := h.h.stage; s != nil && (s.touches(off, int64(len(p))) || s.end > off) {
		if err := h.flushLocked(ctx); err != nil {
			return 0, h.op("read", err)
		}
	}
	fsys := h.h.fsys
	var c content
	err := fsys.peek(ctx, func(tx *locks.Tx, q *q) error {
		if err := h.checkIO(tx, off, int64(len(p)), owner, false); err != nil {
			return err
		}
		var err error
		c, err = q.content(h.h.file)
		if errors.Is(err, ErrNotFound) {
			return ErrStaleHandle
		}
		return err
	})
	if err != nil {
		return 0, h.op("read", err)
	}
	if off >= c.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if off+n > c.size {
		n = c.size - off
	}
	if !c.blob {
		copyInline(p[:n], c.inline, off)
	} else if err := h.readSeq(ctx, p[:n], off, c.version); err != nil {
		return 0, h.op("read", err)
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readWindow is how much of a blob one sequential reader covers before it
// is reopened (bounds the block files it holds open).
const readWindow = 16 << 20

// seqReader is a handle's open stream over one committed version of the
// blob, reused while reads stay sequential and the version unchanged.
type seqReader struct {
	rc      io.ReadCloser
	off     int64 // next offset the stream delivers
	end     int64 // end of the window
	version uint64
	eof     bool // the blob ended: zeros from here
}

func (h *Handle) dropReader() {
	if r := h.h.rd; r != nil {
		if r.rc != nil {
			r.rc.Close()
		}
		h.h.rd = nil
	}
}

// readSeq fills p from the blob at off as of version (h.h.mu held).
func (h *Handle) readSeq(ctx context.Context, p []byte, off int64, version uint64) error {
	r := h.h.rd
	if r == nil || r.off != off || r.version != version || (!r.eof && off+int64(len(p)) > r.end) {
		h.dropReader()
		r = &seqReader{off: off, end: off + max(readWindow, int64(len(p))), version: version}
		// The stream outlives this call's context: it serves later reads.
		rc, _, err := h.h.fsys.store.ReadRange(context.WithoutCancel(ctx), blobKey(h.h.file), off, r.end-off)
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
			r.eof = true
		case err != nil:
			return err
		default:
			r.rc = rc
		}
		h.h.rd = r
	}
	n := 0
	if !r.eof {
		var err error
		n, err = io.ReadFull(r.rc, p)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			r.eof = true
		case err != nil:
			h.dropReader()
			return err
		}
	}
	clear(p[n:])
	r.off += int64(len(p))
	return nil
}

func (h *Handle) writeAt(ctx context.Context, p []byte, off int64, owner uint64) (int, error) {
	if len(p) > 0 {
		if err := h.breakOnWrite(ctx); err != nil {
			return 0, h.op("write", err)
		}
	}
	err := h.stageLocked(ctx, "write", off, int64(len(p)), owner, func(s *stage) error { return s.write(ctx, p, off) })
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *Handle) clearAt(ctx context.Context, off, n int64) error {
	if n > 0 {
		if err := h.breakOnWrite(ctx); err != nil {
			return h.op("clear", err)
		}
	}
	return h.stageLocked(ctx, "clear", off, n, 0, func(s *stage) error { return s.clearRange(ctx, off, n) })
}

// stageLocked checks a write of n bytes at off through the handle (open,
// write access, byte-range locks) and runs stageIt on its stage, which it
// makes first if need be. With n == 0 it only checks. owner is the POSIX
// lock owner making the write (see checkIO).
func (h *Handle) stageLocked(ctx context.Context, op string, off, n int64, owner uint64, stageIt func(s *stage) error) error {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return h.op(op, locks.ErrHandleClosed)
	}
	if h.h.access&writeAccess == 0 {
		return h.op(op, locks.ErrAccessDenied)
	}
	if off < 0 || n < 0 || off+n < off {
		return h.op(op, ErrInvalidRange)
	}
	if n == 0 {
		return nil
	}
	fsys := h.h.fsys
	err := fsys.peek(ctx, func(tx *locks.Tx, q *q) error {
		return h.checkIO(tx, off, n, owner, true)
	})
	if err != nil {
		return h.op(op, err)
	}
	if h.h.stage == nil {
		h.h.stage = newStage(fsys, h.h.file)
	}
	s := h.h.stage
	// A block staged whole cannot be read back to merge a new write into
	// it: commit first.
	for i := off / BlockSize; i <= (off+n-1)/BlockSize; i++ {
		if s.hasFull(i) {
			if err := h.flushLocked(ctx); err != nil {
				return h.op(op, err)
			}
			break
		}
	}
	err = stageIt(s)
	if !s.empty() {
		h.markUnflushed()
	}
	return h.op(op, err)
}

func (h *Handle) stagedEnd() int64 {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed || h.h.stage == nil {
		return 0
	}
	return h.h.stage.end
}

func (h *Handle) size(ctx context.Context) (int64, error) {
	a, err := h.attr(ctx, false)
	return a.Size, err
}

func (h *Handle) attr(ctx context.Context, full bool) (Attr, error) {
	h.h.fsys.commitReaders(ctx, h.h.file, h)
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return Attr{}, h.op("getattr", locks.ErrHandleClosed)
	}
	get := h.h.fsys.getAttr
	if full {
		get = h.h.fsys.handleAttr
	}
	a, err := get(ctx, h.h.file)
	if err != nil {
		return Attr{}, h.op("getattr", err)
	}
	if s := h.h.stage; s != nil && s.end > a.Size {
		a.Size = s.end
	}
	return a, nil
}

func (h *Handle) flush(ctx context.Context) error {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return h.op("flush", locks.ErrHandleClosed)
	}
	return h.op("flush", h.flushLocked(ctx))
}

// flushLocked commits the stage (h.h.mu held).
func (h *Handle) flushLocked(ctx context.Context) error {
	_, _, err := h.commitStageLocked(ctx, nil)
	return err
}

// flushTouch is flush with touch applied to the entry in the commit's own
// transaction (after the commit's time stamps). committed is false, and
// nothing ran, when nothing was staged.
func (h *Handle) flushTouch(ctx context.Context, touch func(q *q, e *entry)) (e entry, committed bool, err error) {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return entry{}, false, h.op("flush", locks.ErrHandleClosed)
	}
	e, committed, err = h.commitStageLocked(ctx, touch)
	return e, committed, h.op("flush", err)
}

// commitStageLocked commits the stage, if any, with touch (h.h.mu held).
func (h *Handle) commitStageLocked(ctx context.Context, touch func(q *q, e *entry)) (entry, bool, error) {
	s := h.h.stage
	if s == nil || s.empty() {
		h.dropUnflushedRow(ctx)
		h.clearUnflushed()
		return entry{}, false, nil
	}
	e, err := h.h.fsys.commit(ctx, h.h.file, commitOp{
		op:    "flush",
		stage: s,
		check: func(tx *locks.Tx, q *q, e entry) error {
			return tx.HandleOpen(h.h.id) // force-closed handles lose their writes
		},
		touch:     touch,
		committed: h.unflushedRowGone,
	})
	if err != nil {
		return entry{}, false, err
	}
	s.reset()
	if h.h.rowed {
		h.rowGone() // deleted by the commit (unflushedRowGone)
	}
	h.clearUnflushed()
	return e, true, nil
}

func (h *Handle) close(ctx context.Context) error {
	ferr, err := h.detach(ctx)
	if err != nil {
		return err
	}
	cerr := h.h.fsys.closeNow(context.WithoutCancel(ctx), h)
	if ferr != nil {
		return h.op("close", ferr)
	}
	return cerr
}

// release is close without waiting for the lock table (see Release).
func (h *Handle) release(ctx context.Context, done func(error)) error {
	ferr, err := h.detach(ctx)
	if err != nil {
		return err
	}
	fsys := h.h.fsys
	if h.h.locked.Load() {
		cerr := fsys.closeNow(context.WithoutCancel(ctx), h)
		if done != nil {
			done(cerr)
		}
	} else {
		fsys.queueRelease(h, done)
	}
	return h.op("close", ferr)
}

// detach commits the staged writes and makes the handle closed for this
// process (every later call fails with ErrHandleClosed); the lock-table
// handle stays open. It returns the commit's error, and err when the
// handle was closed already.
func (h *Handle) detach(ctx context.Context) (flushErr, err error) {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return nil, h.op("close", locks.ErrHandleClosed)
	}
	flushErr = h.flushLocked(ctx)
	h.dropReader()
	if h.h.stage != nil {
		h.h.stage.reset()
	}
	h.dropUnflushedRow(ctx)
	h.clearUnflushed()
	h.h.closed = true
	fsys := h.h.fsys
	fsys.mu.Lock()
	delete(fsys.handles, h)
	if st := fsys.files[h.h.file]; st != nil {
		delete(st.handles, h)
	}
	fsys.mu.Unlock()
	if st := fsys.peekFile(h.h.file); st != nil {
		fsys.releaseFile(h.h.file, st)
	}
	return flushErr, nil
}

// peekFile returns the file state without taking a reference.
func (fsys *FileSystem) peekFile(id FileID) *fileState {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	return fsys.files[id]
}

func (h *Handle) discard() {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.stage != nil {
		h.h.stage.reset()
	}
	h.dropUnflushedRow(context.Background())
	h.clearUnflushed()
}

func (h *Handle) dispose(ctx context.Context, deletePending bool) error {
	if err := h.checkOpen("dispose"); err != nil {
		return err
	}
	return h.op("dispose", h.h.fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.getLocked("dispose", h.h.file) // a directory's "empty" is decided under its key
		if err != nil {
			return nil, err
		}
		f, err := q.facts(e)
		if err != nil {
			return nil, err
		}
		if err := tx.Dispose(h.h.id, deletePending, f); err != nil {
			return nil, err
		}
		if deletePending && e.kind.IsDir() {
			return nil, q.recordDirPending(tx, e.id)
		}
		return nil, nil
	}))
}

func (h *Handle) checkOpen(op string) error {
	h.h.mu.Lock()
	defer h.h.mu.Unlock()
	if h.h.closed {
		return h.op(op, locks.ErrHandleClosed)
	}
	return nil
}

func (h *Handle) lock(ctx context.Context, r locks.Range, kind locks.LockKind) error {
	if err := h.checkOpen("lock"); err != nil {
		return err
	}
	h.h.locked.Store(true)
	return h.op("lock", h.h.fsys.update(ctx, func(tx *locks.Tx, _ *q) ([]Change, error) { return nil, tx.Lock(h.h.id, r, kind) }))
}

func (h *Handle) unlock(ctx context.Context, r locks.Range) error {
	if err := h.checkOpen("unlock"); err != nil {
		return err
	}
	return h.op("unlock", h.h.fsys.update(ctx, func(tx *locks.Tx, _ *q) ([]Change, error) { return nil, tx.Unlock(h.h.id, r) }))
}

// poll retries fn while it fails with retryable, until ctx ends.
func poll(ctx context.Context, wait bool, retryable error, fn func() error) error {
	backoff := time.Millisecond
	for {
		err := fn()
		if err == nil || !wait || !errors.Is(err, retryable) {
			return err
		}
		if serr := sleepCtx(ctx, backoff); serr != nil {
			return serr
		}
		if backoff < 20*time.Millisecond {
			backoff *= 2
		}
	}
}

func (h *Handle) setPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind, wait bool) error {
	if err := h.checkOpen("setlk"); err != nil {
		return err
	}
	if kind != 0 {
		h.h.locked.Store(true)
	}
	return h.op("setlk", poll(ctx, wait, locks.ErrLockNotGranted, func() error {
		return h.h.fsys.update(ctx, func(tx *locks.Tx, _ *q) ([]Change, error) { return nil, tx.SetPOSIXLock(h.h.id, key, r, kind) })
	}))
}

func (h *Handle) getPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind) (locks.ByteLock, bool, error) {
	if err := h.checkOpen("getlk"); err != nil {
		return locks.ByteLock{}, false, err
	}
	var bl locks.ByteLock
	var ok bool
	err := h.h.fsys.view(ctx, func(tx *locks.Tx, _ *q) error {
		var err error
		bl, ok, err = tx.GetPOSIXLock(h.h.id, key, r, kind)
		return err
	})
	return bl, ok, h.op("getlk", err)
}

func (h *Handle) releasePOSIXLocks(ctx context.Context, key uint64) error {
	if err := h.checkOpen("unlock"); err != nil {
		return err
	}
	return h.op("unlock", h.h.fsys.update(ctx, func(tx *locks.Tx, _ *q) ([]Change, error) { return nil, tx.ReleasePOSIXLocks(h.h.id, key) }))
}

func (h *Handle) flock(ctx context.Context, kind locks.LockKind, wait bool) error {
	if err := h.checkOpen("flock"); err != nil {
		return err
	}
	if kind != 0 {
		h.h.locked.Store(true) // as a byte-range lock (see handleState.locked)
	}
	return h.op("flock", poll(ctx, wait, locks.ErrLockNotGranted, func() error {
		return h.h.fsys.update(ctx, func(tx *locks.Tx, _ *q) ([]Change, error) { return nil, tx.Flock(h.h.id, kind) })
	}))
}

// copyInline fills p with inline content at off (zeros past its end).
func copyInline(p, inline []byte, off int64) {
	n := 0
	if off < int64(len(inline)) {
		n = copy(p, inline[off:])
	}
	clear(p[n:])
}
