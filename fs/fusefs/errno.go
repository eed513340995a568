package fusefs

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/blobshare/blobshare/locks"
)

// errOp says which request an error answers, for the few outcomes whose
// errno depends on the call (see the table in doc.go).
type errOp int

const (
	opOther errOp = iota
	opFlock       // flock(2): a conflict is EWOULDBLOCK
	opSetlk       // fcntl F_SETLK/F_SETLKW: a conflict is EAGAIN (POSIX)
)

// errnoRule maps one sentinel to its errno.
type errnoRule struct {
	err   error
	errno syscall.Errno
}

// lockRules follow the Linux SMB client (fs/smb/client/smb2maperror.c),
// applied to the NT status each locks outcome stands for. Order matters
// only where one error wraps several sentinels: the first match wins.
var lockRules = [...]errnoRule{
	{locks.ErrSharingViolation, syscall.EBUSY},      // STATUS_SHARING_VIOLATION → -EBUSY
	{locks.ErrDeletePending, syscall.ENOENT},        // STATUS_DELETE_PENDING → -ENOENT
	{locks.ErrLockConflict, syscall.EACCES},         // STATUS_FILE_LOCK_CONFLICT → -EACCES
	{locks.ErrLockNotGranted, syscall.EACCES},       // STATUS_LOCK_NOT_GRANTED → -EACCES (flock/fcntl: see toErrno)
	{locks.ErrRangeNotLocked, syscall.EIO},          // STATUS_RANGE_NOT_LOCKED → -EIO
	{locks.ErrInvalidLockRange, syscall.EINVAL},     // STATUS_INVALID_LOCK_RANGE → -EIO in the kernel; EINVAL is what fcntl(2) promises
	{locks.ErrReadOnly, syscall.EACCES},             // the SMB server answers STATUS_ACCESS_DENIED → -EACCES
	{locks.ErrCannotDelete, syscall.EACCES},         // STATUS_CANNOT_DELETE → -EACCES
	{locks.ErrAccessDenied, syscall.EACCES},         // STATUS_ACCESS_DENIED → -EACCES
	{locks.ErrDirectoryNotEmpty, syscall.ENOTEMPTY}, // STATUS_DIRECTORY_NOT_EMPTY → -ENOTEMPTY
	{locks.ErrHandleClosed, syscall.EIO},            // force-closed handle: STATUS_FILE_FORCED_CLOSED → -EIO
	{locks.ErrInvalidParameter, syscall.EINVAL},     // STATUS_INVALID_PARAMETER → -EINVAL
	{locks.ErrHandleLimit, syscall.EMFILE},          // STATUS_TOO_MANY_OPENED_FILES → -EMFILE
}

// toErrno turns an error of the core, the lock table or the blob store into
// the errno the mount answers. It is the one place errno is decided; doc.go
// has the table. nil is OK (0).
func toErrno(op errOp, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	// Lock conflicts on lock requests get POSIX's answers, not the SMB
	// client's EACCES (flock(2): EWOULDBLOCK, fcntl(2) F_SETLK: EAGAIN).
	if op == opFlock && (errors.Is(err, locks.ErrSharingViolation) || errors.Is(err, locks.ErrLockNotGranted)) {
		return syscall.EWOULDBLOCK
	}
	if op == opSetlk && (errors.Is(err, locks.ErrLockNotGranted) || errors.Is(err, locks.ErrLockConflict)) {
		return syscall.EAGAIN
	}
	for _, r := range lockRules {
		if errors.Is(err, r.err) {
			return r.errno
		}
	}
	var le *locks.LeaseError
	if errors.As(err, &le) {
		// An SMB open against a leased file is STATUS_SHARING_VIOLATION.
		return syscall.EBUSY
	}
	for _, r := range coreRules() {
		if errors.Is(err, r.err) {
			return r.errno
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	switch {
	case errors.Is(err, context.Canceled):
		return syscall.EINTR // an interrupted request (fuse INTERRUPT)
	case errors.Is(err, context.DeadlineExceeded):
		return syscall.ETIMEDOUT // STATUS_IO_TIMEOUT is -EAGAIN; a deadline is ours, not the server's
	case errors.Is(err, iofs.ErrNotExist):
		return syscall.ENOENT // STATUS_OBJECT_NAME_NOT_FOUND → -ENOENT
	case errors.Is(err, iofs.ErrExist):
		return syscall.EEXIST // STATUS_OBJECT_NAME_COLLISION → -EEXIST
	case errors.Is(err, iofs.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, iofs.ErrInvalid):
		return syscall.EINVAL
	}
	return syscall.EIO
}
