package locks

import (
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/meta"
)

// Outcomes of the lock rules. Each protocol maps them exactly once: fs to
// errno, rest to an HTTP status and Azure error code, session to NT status.
// Errors returned by the table wrap these with the file or handle concerned;
// match them with errors.Is.
var (
	ErrSharingViolation  = errors.New("sharing violation")   // STATUS_SHARING_VIOLATION, 409 SharingViolation
	ErrDeletePending     = errors.New("delete pending")      // STATUS_DELETE_PENDING, 409 SMBDeletePending
	ErrLockConflict      = errors.New("file lock conflict")  // STATUS_FILE_LOCK_CONFLICT, 409 FileLockConflict
	ErrLockNotGranted    = errors.New("lock not granted")    // STATUS_LOCK_NOT_GRANTED
	ErrRangeNotLocked    = errors.New("range not locked")    // STATUS_RANGE_NOT_LOCKED
	ErrInvalidLockRange  = errors.New("invalid lock range")  // STATUS_INVALID_LOCK_RANGE
	ErrReadOnly          = errors.New("read-only attribute") // 412 ReadOnlyAttribute
	ErrCannotDelete      = errors.New("cannot delete")       // STATUS_CANNOT_DELETE
	ErrAccessDenied      = errors.New("access denied")       // STATUS_ACCESS_DENIED
	ErrDirectoryNotEmpty = errors.New("directory not empty") // STATUS_DIRECTORY_NOT_EMPTY
	ErrHandleClosed      = errors.New("handle closed")       // STATUS_FILE_CLOSED; EIO on the mount
	ErrInvalidParameter  = errors.New("invalid parameter")   // STATUS_INVALID_PARAMETER; 400
	ErrHandleLimit       = errors.New("too many handles")    // STATUS_TOO_MANY_OPENED_FILES; 400 HandleLimitExceeded
)

// ErrSessionLost: this Table's owner session expired or was reaped by
// another owner (its heartbeat lapsed: the process was frozen or cut off),
// so it stopped deciding. Every write transaction fails with it until the
// Table has registered as a new owner, which Update does at once: the next
// Update decides again, but the old owner's handles are gone, as after a
// network drop (doc.go, "Sessions").
//
// It is the server's condition, not the request's: errors.Is reports it
// as meta.ErrUnavailable too, so front ends answer it as a database
// outage (503 ServerBusy, which clients retry) rather than a 500.
var ErrSessionLost error = sessionLostError{}

type sessionLostError struct{}

func (sessionLostError) Error() string { return "owner session lost" }

func (sessionLostError) Is(target error) bool { return target == meta.ErrUnavailable }

// ErrKeyNotLocked is the lock audit's failure, in test runs only: a
// decision read a file's state for update without holding the file's key
// lock (Tx.LockKeys). It is a bug in the decision, never a protocol
// outcome; no front end maps it.
var ErrKeyNotLocked = errors.New("key lock not held")

// errHandleGone: a handle read before its file's key was locked had been
// closed by the time the lock was granted (closeRow).
var errHandleGone = errors.New("handle closed meanwhile")

// LeaseCode names a lease outcome with its Azure error code.
type LeaseCode string

const (
	LeaseIDMissing                    LeaseCode = "LeaseIdMissing"                    // 412
	LeaseIDMismatchWithFileOperation  LeaseCode = "LeaseIdMismatchWithFileOperation"  // 412
	LeaseNotPresentWithFileOperation  LeaseCode = "LeaseNotPresentWithFileOperation"  // 412
	LeaseAlreadyPresent               LeaseCode = "LeaseAlreadyPresent"               // 409
	LeaseNotPresentWithLeaseOperation LeaseCode = "LeaseNotPresentWithLeaseOperation" // 409
	LeaseIDMismatchWithLeaseOperation LeaseCode = "LeaseIdMismatchWithLeaseOperation" // 409
)

// LeaseError is a lease rule's refusal. Lease File actions answer 409,
// other operations 412 (locking.md §4.2, §4.3, A2).
type LeaseError struct {
	Code LeaseCode
	File FileID
}

func (e *LeaseError) Error() string { return "lease: " + string(e.Code) }

// Status is the HTTP status Azure Files answers for the code.
func (e *LeaseError) Status() int {
	switch e.Code {
	case LeaseAlreadyPresent, LeaseNotPresentWithLeaseOperation, LeaseIDMismatchWithLeaseOperation:
		return 409
	}
	return 412
}

// ConflictError is a refusal caused by other holders: open handles, a
// lease, or byte-range locks. It wraps the outcome (ErrSharingViolation,
// ErrLockConflict, ErrLockNotGranted) so errors.Is still matches, and names
// what was in the way for logs and for the dead-owner check.
type ConflictError struct {
	Err     error      // the outcome sentinel
	File    FileID     // the file concerned
	Op      string     // what was refused ("open", "GetFile", "lock", ...)
	Handles []HandleID // the conflicting handles, in id order (empty for a lease)
	Lease   bool       // the active lease was in the way (locking.md §4.4)
}

func (e *ConflictError) Error() string {
	s := fmt.Sprintf("%s file %d: %v", e.Op, e.File, e.Err)
	if len(e.Handles) > 0 {
		s += fmt.Sprintf(" (handles %v)", e.Handles)
	}
	if e.Lease {
		s += " (leased)"
	}
	return s
}

func (e *ConflictError) Unwrap() error { return e.Err }

// ErrIncompatibleSchema: the database was created by a blobshare build
// whose tables this build cannot open (older without a migration, or
// newer): the data directory must be used with the build that created it.
// Returned wrapped in a *SchemaError. Both are the engine's (package meta).
var ErrIncompatibleSchema = meta.ErrIncompatibleSchema

// SchemaError reports a database whose schema version is not the one this
// build expects (meta.SchemaError): Part is "lock table" here, "namespace"
// in package fs.
type SchemaError = meta.SchemaError
