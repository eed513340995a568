package fs

import (
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/locks"
)

// The namespace's own outcomes. Errors returned by this package wrap one of
// these (or one of locks' sentinels, a *locks.LeaseError (file leases) or a
// *lease.Error (share leases)) in an *Error
// that names the operation and the path or file concerned; match them with
// errors.Is / errors.As.
var (
	ErrNotFound       = errors.New("not found")                       // the file or directory does not exist (404 ResourceNotFound, STATUS_OBJECT_NAME_NOT_FOUND, ENOENT)
	ErrParentNotFound = errors.New("parent not found")                // a directory on the way does not exist (404 ParentNotFound, STATUS_OBJECT_PATH_NOT_FOUND, ENOENT)
	ErrShareNotFound  = errors.New("share not found")                 // 404 ShareNotFound; STATUS_BAD_NETWORK_NAME; ENOENT
	ErrExist          = errors.New("already exists")                  // 409 ResourceAlreadyExists, STATUS_OBJECT_NAME_COLLISION, EEXIST
	ErrShareExist     = errors.New("share already exists")            // 409 ShareAlreadyExists, EEXIST
	ErrIsDir          = errors.New("is a directory")                  // a file operation on a directory (EISDIR, STATUS_FILE_IS_A_DIRECTORY)
	ErrNotDir         = errors.New("not a directory")                 // a directory operation on a file (ENOTDIR, STATUS_NOT_A_DIRECTORY)
	ErrInvalidName    = errors.New("invalid name")                    // name rules of filerest.md §2.1 (400 InvalidFileOrDirectoryPathName / InvalidResourceName, STATUS_OBJECT_NAME_INVALID, EINVAL)
	ErrNameTooLong    = errors.New("name too long")                   // component > 255 or path > 2048 characters (ENAMETOOLONG); also matches ErrInvalidName
	ErrInvalidRange   = errors.New("invalid range")                   // a read starting at or past the end (416 InvalidRange) or a negative/overflowing range (400 OutOfRangeInput)
	ErrInvalidArg     = errors.New("invalid argument")                // malformed request values (400, STATUS_INVALID_PARAMETER, EINVAL)
	ErrCrossShare     = errors.New("cross-share rename")              // rename between shares (EXDEV; 400 on REST)
	ErrNotSupported   = errors.New("operation not supported")         // e.g. RENAME_EXCHANGE (ENOTSUP)
	ErrNotEmpty       = locks.ErrDirectoryNotEmpty                    // rmdir / delete of a non-empty directory: the same value as locks' sentinel
	ErrStaleHandle    = errors.New("file of the handle is gone")      // the file a handle refers to no longer exists (ESTALE)
	ErrInvalidEAName  = errors.New("invalid extended attribute name") // not ValidEAName (STATUS_INVALID_EA_NAME)
	ErrEATooLarge     = errors.New("extended attributes too large")   // over MaxEASize (STATUS_EA_TOO_LARGE)
)

// Error is the error type of package fs: an operation, the path (or file id)
// it concerned, and the cause.
type Error struct {
	Op   string       // "open", "create", "rename", "write", ...
	Path string       // share-relative path "share/dir/file", when known
	File locks.FileID // the file id, when known
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Path != "":
		return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
	case e.File != 0:
		return fmt.Sprintf("%s file %d: %v", e.Op, e.File, e.Err)
	}
	return e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// nameTooLong matches both ErrNameTooLong and ErrInvalidName.
type nameTooLong struct{}

func (nameTooLong) Error() string { return ErrNameTooLong.Error() }
func (nameTooLong) Is(target error) bool {
	return target == ErrNameTooLong || target == ErrInvalidName
}

func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) && fe.Op == op {
		return err
	}
	return &Error{Op: op, Path: path, Err: err}
}

func fileErr(op string, file locks.FileID, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) && fe.Op == op {
		return err
	}
	return &Error{Op: op, File: file, Err: err}
}
