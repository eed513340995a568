package locks

// This file is the agreed surface of package locks: the types and methods
// that fs, rest and the session command program against. Bodies live in the
// other files of the package.

import (
	"context"
	"log/slog"
	"time"
)

// FileID is the stable 64-bit id of a file or directory, assigned by the
// namespace (package fs). It survives renames. locks never interprets it.
type FileID uint64

// HandleID identifies one open handle. IDs are never reused within a
// database, so a force-closed handle's id cannot come back as another handle.
type HandleID uint64

// OwnerID identifies a process instance that owns handles. When the process
// dies, its handles, byte-range locks and the deletes they held up are
// cleaned by the next process that notices (at Open, or on a conflict with
// one of the dead owner's handles).
type OwnerID string

// Access is an SMB access mask reduced to the bits blobshare distinguishes.
// Only the data bits (Read, Execute, Write, Append, Delete) take part in
// sharing; ReadAttributes alone makes an attribute-only open.
type Access uint8

const (
	AccessRead           Access = 1 << iota // FILE_READ_DATA
	AccessWrite                             // FILE_WRITE_DATA
	AccessAppend                            // FILE_APPEND_DATA
	AccessExecute                           // FILE_EXECUTE
	AccessDelete                            // DELETE
	AccessReadAttributes                    // FILE_READ_ATTRIBUTES: no data bit
)

// ShareMode is the set of accesses an open lets later opens have.
// ShareNone (the zero value) shares nothing.
type ShareMode uint8

const (
	ShareRead ShareMode = 1 << iota
	ShareWrite
	ShareDelete

	ShareNone ShareMode = 0
	ShareAll            = ShareRead | ShareWrite | ShareDelete
)

// Range is a byte range [Offset, Offset+Length-1]. A zero Length never
// overlaps anything. Ranges whose last byte would pass 2^64-1 are invalid.
type Range struct {
	Offset, Length uint64
}

// WholeFile is the range a REST call without a Range header is checked as.
var WholeFile = Range{Offset: 0, Length: 1<<64 - 1}

// OpenRequest asks for a new handle.
type OpenRequest struct {
	File          FileID
	Access        Access
	Share         ShareMode
	DeleteOnClose bool // FILE_DELETE_ON_CLOSE: marks delete-pending when this handle closes

	// ReadOnly is the caller's statement that the existing file has the
	// SMB ReadOnly attribute: the open then fails for Write or Append
	// access or Overwrite (ErrReadOnly) and for DeleteOnClose
	// (ErrCannotDelete).
	ReadOnly bool
	// Overwrite says the open replaces the existing file's data
	// (FILE_OVERWRITE, FILE_OVERWRITE_IF or FILE_SUPERSEDE).
	Overwrite bool

	// Created says File came into being in this transaction, so nothing
	// else can hold, lease or have marked it: the open is decided against
	// an empty state without reading the table. (It saves a file create
	// one statement.)
	Created bool

	// Descriptive fields reported by List Handles; they decide nothing.
	SessionID  uint64
	ClientName string
	ClientIP   string
}

// Handle is one open handle as stored in the table.
type Handle struct {
	ID            HandleID
	File          FileID
	Owner         OwnerID
	Access        Access
	Share         ShareMode // current share mode (nothing changes it since flock is a lock of its own, Flock)
	OpenShare     ShareMode // share mode given at open
	DeleteOnClose bool
	SessionID     uint64
	ClientName    string
	ClientIP      string
	OpenTime      time.Time
}

// CloseResult says what closing a handle did to its file.
type CloseResult struct {
	// Removed is true when this was the last handle of a delete-pending
	// file: the RemoveFunc has run in the same transaction.
	Removed bool
}

// Facts are what the namespace knows about a file that some rules need.
// Callers fill them from the namespace inside the same transaction.
type Facts struct {
	ReadOnly    bool // SMB ReadOnly attribute
	Directory   bool
	NonEmptyDir bool // a directory with children
}

// Op is a FileREST operation as the lock rules see it (locking.md §1.3).
type Op int

const (
	OpGetProperties   Op = iota + 1 // Get File Properties, Get File Metadata
	OpList                          // List Directories and Files
	OpGetFile                       // Get File (Range = requested range or WholeFile)
	OpListRanges                    // List Ranges
	OpPutRange                      // Put Range update/clear, Put Range From URL destination
	OpSetProperties                 // Set File Properties (incl. resize)
	OpSetMetadata                   // Set File Metadata
	OpCreateOverwrite               // Create File over an existing file, Copy File destination
	OpDelete                        // Delete File
	OpCopySource                    // Copy File / Put Range From URL source (Read)
	OpRenameSource                  // Rename: the source (Delete)
	OpRenameReplace                 // Rename: a destination that gets replaced (like Create)
)

// RESTRequest is one REST call to check. A REST call is not a handle: it is
// checked once and leaves nothing behind.
type RESTRequest struct {
	File    FileID
	Op      Op
	LeaseID string // x-ms-lease-id, "" when absent
	Range   Range  // for OpGetFile and OpPutRange; ignored otherwise
	Facts   Facts
}

// LeaseAction is an x-ms-lease-action.
type LeaseAction int

const (
	LeaseAcquire LeaseAction = iota + 1
	LeaseChange
	LeaseRelease
	LeaseBreak
)

// LeaseRequest is one Lease File call. Header syntax (duration -1 only,
// GUID format) is checked by the caller; the state machine is here.
type LeaseRequest struct {
	File       FileID
	Action     LeaseAction
	LeaseID    string // x-ms-lease-id
	ProposedID string // x-ms-proposed-lease-id
}

// LeaseState is a file lease's state (x-ms-lease-state).
type LeaseState int

const (
	LeaseAvailable LeaseState = iota
	LeaseLeased
	LeaseBroken
)

// LeaseInfo is the lease status of a file, for Get File / Get Properties.
type LeaseInfo struct {
	State LeaseState
	ID    string // the current lease id while Leased or Broken
}

// LockKind is shared or exclusive.
type LockKind int

const (
	LockShared LockKind = iota + 1
	LockExclusive
)

// ByteLock is one byte-range lock.
type ByteLock struct {
	Handle HandleID
	Key    uint64 // lock key: the POSIX lock owner for FUSE locks, 0 for SMB locks
	Range  Range
	Kind   LockKind
	POSIX  bool // taken through SetPOSIXLock (POSIX replace/split semantics)
	// Flock is a flock(2) lock (Flock): one per handle, over WholeFile. It
	// is a whole-file byte-range lock to REST and SMB, and advisory to
	// POSIX requesters (CheckIOKey, SetPOSIXLock), as on a local disk.
	Flock bool
}

// RemoveFunc removes a file from the namespace in the same transaction that
// closed its last handle while it was delete-pending (or that reaped a dead
// owner's last handle on it). It runs on the connection of that transaction.
type RemoveFunc func(ctx context.Context, tx *Conn, file FileID) error

// Options configure Open.
type Options struct {
	// Remove is called to drop a file whose delete completes. Nil means the
	// lock table only forgets its own state for the file.
	Remove RemoveFunc
	// Now is the clock (for OpenTime); nil means time.Now.
	Now func() time.Time
	// Owner overrides the generated owner id (tests). It must be usable as
	// a file name: letters, digits, '-', '_' and '.'.
	Owner OwnerID
	// NewLeaseID generates the lease id of an acquire without a proposed
	// id; nil means a random UUID.
	NewLeaseID func() string
	// Logger receives the table's logs; nil means slog.Default().
	Logger *slog.Logger
	// HeartbeatInterval is how often the Table renews its owner session;
	// SessionExpiry how long past the last renewal, by the database's
	// clock, the session expires and any other owner may reap it (doc.go,
	// "Sessions"). Zero means DefaultHeartbeatInterval (2 s) and
	// DefaultSessionExpiry (10 s); the interval must be below the expiry.
	HeartbeatInterval time.Duration
	SessionExpiry     time.Duration
	// SessionClock is the database's clock for session deadlines; nil
	// means SQLite's: the system clock, read inside the write transaction
	// that sets or judges a deadline. Tests inject one to expire sessions
	// without waiting.
	SessionClock func() time.Time
	// Host and Program override what the session row says of this
	// process (tests); "" means the host name and the program with its
	// subcommand.
	Host, Program string
	// MaxHandlesPerFile refuses an open that would exceed this many
	// handles on one file with ErrHandleLimit (Azure Files allows 2000;
	// 400 HandleLimitExceeded). Zero means no limit.
	MaxHandlesPerFile int
	// FoldDelay bounds how long UpdateFolded's transaction stays open for
	// more folded changes (sqlmeta.Options.FoldDelay; 0: 1 ms).
	FoldDelay time.Duration

	// skipKeyLock names a decision of this package (OpenHandle,
	// CloseHandle, Lock ...) that leaves its key lock out: for the lock
	// audit's own test, which sees the audit catch it (keylock_test.go).
	skipKeyLock string
}
