package fusefs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

func TestToErrno(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("share/dir/file (handle 7): %w", err) }
	tests := []struct {
		name string
		op   errOp
		err  error
		want syscall.Errno
	}{
		{"nil", opOther, nil, 0},
		{"sharing violation", opOther, wrap(locks.ErrSharingViolation), syscall.EBUSY},
		{"delete pending", opOther, wrap(locks.ErrDeletePending), syscall.ENOENT},
		{"lock conflict on I/O", opOther, wrap(locks.ErrLockConflict), syscall.EACCES},
		{"lock not granted (SMB lock)", opOther, wrap(locks.ErrLockNotGranted), syscall.EACCES},
		{"range not locked", opOther, wrap(locks.ErrRangeNotLocked), syscall.EIO},
		{"invalid lock range", opOther, wrap(locks.ErrInvalidLockRange), syscall.EINVAL},
		{"read-only", opOther, wrap(locks.ErrReadOnly), syscall.EACCES},
		{"cannot delete", opOther, wrap(locks.ErrCannotDelete), syscall.EACCES},
		{"access denied", opOther, wrap(locks.ErrAccessDenied), syscall.EACCES},
		{"directory not empty", opOther, wrap(locks.ErrDirectoryNotEmpty), syscall.ENOTEMPTY},
		{"force-closed handle", opOther, wrap(locks.ErrHandleClosed), syscall.EIO},
		{"invalid parameter", opOther, wrap(locks.ErrInvalidParameter), syscall.EINVAL},
		{"handle limit", opOther, wrap(locks.ErrHandleLimit), syscall.EMFILE},
		{"lease", opOther, wrap(&locks.LeaseError{Code: locks.LeaseAlreadyPresent}), syscall.EBUSY},
		{"flock conflict", opFlock, wrap(locks.ErrSharingViolation), syscall.EWOULDBLOCK},
		{"flock: other errors unchanged", opFlock, wrap(locks.ErrHandleClosed), syscall.EIO},
		{"fcntl conflict", opSetlk, wrap(locks.ErrLockNotGranted), syscall.EAGAIN},
		{"fcntl conflict (I/O flavour)", opSetlk, wrap(locks.ErrLockConflict), syscall.EAGAIN},
		{"fcntl: sharing violation stays EBUSY", opSetlk, wrap(locks.ErrSharingViolation), syscall.EBUSY},
		{"errno passes through", opOther, wrap(syscall.ENAMETOOLONG), syscall.ENAMETOOLONG},
		{"interrupted", opOther, wrap(context.Canceled), syscall.EINTR},
		{"not exist", opOther, wrap(iofs.ErrNotExist), syscall.ENOENT},
		{"blob missing", opOther, wrap(blobstore.ErrNotFound), syscall.ENOENT},
		{"exists", opOther, wrap(iofs.ErrExist), syscall.EEXIST},
		{"invalid", opOther, wrap(iofs.ErrInvalid), syscall.EINVAL},
		{"anything else", opOther, errors.New("disk on fire"), syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toErrno(tt.op, tt.err); got != tt.want {
				t.Errorf("toErrno(%v) = %v (%d), want %v (%d)", tt.err, got, got, tt.want, tt.want)
			}
		})
	}
}
