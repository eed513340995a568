package fusefs

import (
	"context"
	"errors"
	"io"
	"math"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// fileHandle is one open file description of the mount: one handle in the
// lock table (so one share mode, and one flock state).
type fileHandle struct {
	n *node
	h *fs.Handle

	flushed atomic.Bool // a close(2) of it was seen: RELEASE may be on its way
}

var _ = (gofs.FileReader)((*fileHandle)(nil))

// Read reads through the handle (its own unflushed writes included),
// checked as the reading process's I/O (its POSIX lock owner comes with
// direct I/O).
func (fh *fileHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	fh.n.flushWriters(ctx, fh)
	owner := fh.n.st.raw.ioOwner(ctx)
	total := 0
	for total < len(dest) {
		n, err := fh.h.ReadAtOwner(nc(ctx), dest[total:], off+int64(total), owner)
		total += n
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if total > 0 {
				break
			}
			return nil, toErrno(opOther, err)
		}
		if n == 0 {
			break
		}
	}
	return fuse.ReadResultData(dest[:total]), 0
}

var _ = (gofs.FileWriter)((*fileHandle)(nil))

// Write stages data in the handle; it reaches the file at flush.
func (fh *fileHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	// Commit what other descriptors staged first: overlapping writes must
	// land in the order they were made, not in the order of the handles'
	// flushes.
	fh.n.flushWriters(ctx, fh)
	n, err := fh.h.WriteAtOwner(nc(ctx), data, off, fh.n.st.raw.ioOwner(ctx))
	if err != nil {
		return uint32(n), toErrno(opOther, err)
	}
	return uint32(n), 0
}

var _ = (gofs.FileFlusher)((*fileHandle)(nil))

// Flush runs on every close(2) of a descriptor: it commits the staged
// writes (the error reaches close) and drops the POSIX locks of the closing
// process's lock owner on the file, as close(2) must.
func (fh *fileHandle) Flush(ctx context.Context) syscall.Errno {
	defer fh.n.st.enter(fh.n.id)()
	fh.flushed.Store(true)
	err := fh.h.Flush(nc(ctx))
	// Every FLUSH names the closing process's lock owner; only owners this
	// mount granted a lock to can hold any, so the others cost nothing.
	if req, ok := fh.n.st.raw.request(ctx); ok && req.lockOwner != 0 && fh.n.takeLockOwner(req.lockOwner) {
		// Unlocking must not be skipped because the commit failed, nor be
		// cut short by an interrupted close.
		if uerr := fh.h.ReleasePOSIXLocks(nc(ctx), req.lockOwner); uerr != nil && !errors.Is(uerr, locks.ErrHandleClosed) {
			fh.n.st.logger.Error("fusefs: release POSIX locks at flush", "file", fh.n.id, "handle", fh.h.ID(), "err", uerr)
			if err == nil {
				err = uerr
			}
		}
	}
	return toErrno(opOther, err)
}

var _ = (gofs.FileFsyncer)((*fileHandle)(nil))

// Fsync commits the staged writes durably, and the mount's folded
// namespace changes with them (fs.FileSystem.CommitFolded).
func (fh *fileHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	defer fh.n.st.enter(fh.n.id)()
	err := fh.h.Fsync(nc(ctx))
	if err == nil {
		err = fh.n.st.fsys.CommitFolded()
	}
	return toErrno(opOther, err)
}

var _ = (gofs.FileReleaser)((*fileHandle)(nil))

// Release closes the handle (the last reference to the open file
// description is gone; close(2) has long returned). Nobody waits for the
// result: errors are logged. The lock-table close rides along with the next
// write transaction (fs.Handle.Release): the next file's CREATE follows at
// once in a copy or an untar. Closing the handle also ends its flock state
// and, for a delete-pending file, may remove the file.
func (fh *fileHandle) Release(ctx context.Context) syscall.Errno {
	defer fh.n.st.enter(fh.n.id)()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	// Forgotten only once closed in the table: an open waiting in
	// awaitClosing must not retry before that.
	closed := func(err error) {
		if err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			fh.n.st.logger.Error("fusefs: release", "file", fh.n.id, "handle", fh.h.ID(), "err", err)
		}
		fh.n.removeHandle(fh)
	}
	err := fh.h.Release(cctx, closed)
	switch {
	case errors.Is(err, locks.ErrHandleClosed):
		fh.n.removeHandle(fh) // closed already (force-closed, or at shutdown)
	case err != nil:
		fh.n.st.logger.Error("fusefs: release", "file", fh.n.id, "handle", fh.h.ID(), "err", err)
		return toErrno(opOther, err)
	}
	return 0
}

var _ = (gofs.FileGetattrer)((*fileHandle)(nil))

// Getattr answers fstat with this handle's view of the size.
func (fh *fileHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return fh.n.Getattr(ctx, fh, out)
}

var _ = (gofs.FileAllocater)((*fileHandle)(nil))

// Allocate is fallocate(2), as the Linux SMB client serves it: mode 0
// extends the file (blocks are not reserved: a blob has none to reserve),
// KEEP_SIZE alone does nothing, PUNCH_HOLE (with KEEP_SIZE) and
// ZERO_RANGE zero the range through the handle's stage, as REST Put Range
// clear does, and ZERO_RANGE without KEEP_SIZE extends the file past its
// end. Other modes answer EOPNOTSUPP.
func (fh *fileHandle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	const (
		keepSize  = 0x01 // FALLOC_FL_KEEP_SIZE
		punchHole = 0x02 // FALLOC_FL_PUNCH_HOLE (only with KEEP_SIZE)
		zeroRange = 0x10 // FALLOC_FL_ZERO_RANGE
	)
	switch mode {
	case 0, keepSize, keepSize | punchHole, zeroRange, zeroRange | keepSize:
	default:
		return syscall.EOPNOTSUPP
	}
	end := off + size
	if end < off || end > math.MaxInt64 {
		return syscall.EFBIG
	}
	if mode == keepSize {
		return 0
	}
	cur, err := fh.h.Size(nc(ctx))
	if err != nil {
		return toErrno(opOther, err)
	}
	if mode&(punchHole|zeroRange) != 0 {
		// Within the file only: the clear must not move its end.
		if clearEnd := min(int64(end), cur); int64(off) < clearEnd {
			fh.n.flushWriters(ctx, fh) // in order with other descriptors' writes, as Write
			if err := fh.h.ClearRange(nc(ctx), int64(off), clearEnd-int64(off)); err != nil {
				return toErrno(opOther, err)
			}
		}
		if mode&keepSize != 0 {
			return 0
		}
	}
	if int64(end) <= cur {
		return 0
	}
	defer fh.n.st.enter(fh.n.id)()
	s := int64(end)
	_, err = fh.n.st.fsys.Setattr(nc(ctx), fh.n.id, fs.SetattrRequest{Size: &s, Handle: fh.h})
	return toErrno(opOther, err)
}

var _ = (gofs.FileGetlker)((*fileHandle)(nil))

// Getlk answers fcntl(F_GETLK): the first lock that would block lk, or
// F_UNLCK. The holder's pid is unknown to the table (it may be a REST
// client or another machine's session): reported as 0.
func (fh *fileHandle) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	if flags&fuse.FUSE_LK_FLOCK != 0 {
		return syscall.EINVAL // the kernel never asks: flock has no GETLK
	}
	r, kind, errno := posixRange(lk)
	if errno != 0 {
		return errno
	}
	if kind == 0 {
		return syscall.EINVAL
	}
	bl, found, err := fh.h.GetPOSIXLock(nc(ctx), owner, r, kind)
	if err != nil {
		return toErrno(opSetlk, err)
	}
	if !found {
		*out = fuse.FileLock{Typ: syscall.F_UNLCK}
		return 0
	}
	out.Start = bl.Range.Offset
	out.End = bl.Range.Offset + bl.Range.Length - 1
	if bl.Range.Length == 0 || out.End < out.Start {
		out.End = math.MaxInt64
	}
	if out.End > math.MaxInt64 {
		out.End = math.MaxInt64
	}
	out.Typ = syscall.F_RDLCK
	if bl.Kind == locks.LockExclusive {
		out.Typ = syscall.F_WRLCK
	}
	out.Pid = 0
	return 0
}

var _ = (gofs.FileSetlker)((*fileHandle)(nil))

// Setlk is fcntl(F_SETLK) or a non-blocking flock.
func (fh *fileHandle) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return fh.setLock(ctx, owner, lk, flags, false)
}

var _ = (gofs.FileSetlkwer)((*fileHandle)(nil))

// Setlkw is fcntl(F_SETLKW) or a blocking flock: it polls until granted or
// the caller is interrupted (EINTR).
func (fh *fileHandle) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return fh.setLock(ctx, owner, lk, flags, true)
}

func (fh *fileHandle) setLock(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, wait bool) syscall.Errno {
	if flags&fuse.FUSE_LK_FLOCK != 0 {
		// flock(2): a lock of this handle (open file description) that
		// only other flocks refuse (locks.Tx.Flock).
		_, kind, errno := posixRange(lk)
		if errno != 0 {
			return errno
		}
		wait = wait && kind != 0
		err := fh.h.Flock(waitCtx(ctx, wait), kind, wait)
		if wait && err != nil && ctx.Err() != nil {
			return syscall.EINTR
		}
		return toErrno(opFlock, err)
	}
	r, kind, errno := posixRange(lk)
	if errno != 0 {
		return errno
	}
	wait = wait && kind != 0
	if kind != 0 {
		// Noted before asking, so a FLUSH racing with the grant still
		// releases it.
		fh.n.noteLockOwner(owner)
	}
	err := fh.h.SetPOSIXLock(waitCtx(ctx, wait), owner, r, kind, wait)
	if wait && err != nil && ctx.Err() != nil {
		return syscall.EINTR
	}
	return toErrno(opSetlk, err)
}

// posixRange converts a kernel lock (End inclusive, OFFSET_MAX for "to the
// end of file") to the table's range and kind (0 = unlock).
func posixRange(lk *fuse.FileLock) (locks.Range, locks.LockKind, syscall.Errno) {
	if lk.End < lk.Start {
		return locks.Range{}, 0, syscall.EINVAL
	}
	r := locks.Range{Offset: lk.Start, Length: lk.End - lk.Start + 1}
	if lk.End >= math.MaxInt64 {
		// "To the end, however far it grows": the largest valid range.
		r.Length = math.MaxInt64 - lk.Start + 1
	}
	switch lk.Typ {
	case syscall.F_RDLCK:
		return r, locks.LockShared, 0
	case syscall.F_WRLCK:
		return r, locks.LockExclusive, 0
	case syscall.F_UNLCK:
		return r, 0, 0
	}
	return locks.Range{}, 0, syscall.EINVAL
}

// nc detaches a request's context from FUSE interrupts. The Go runtime's
// SIGURG alone interrupts requests of Go programs all the time; a commit,
// a staged write or a lookup is short and must not fail with EINTR (Go's
// close(2) does not retry it). Only lock waits honour interrupts.
func nc(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// waitCtx is ctx for a blocking lock wait (interruptible), else nc(ctx).
func waitCtx(ctx context.Context, wait bool) context.Context {
	if wait {
		return ctx
	}
	return nc(ctx)
}
