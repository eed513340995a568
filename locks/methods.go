package locks

// Method contracts of the lock table. Every decision is taken inside one
// transaction (Table.Update); the methods on *Tx are the building blocks,
// the methods on *Table are one-transaction conveniences.

import (
	"context"
	"database/sql"
)

// Table is the lock table of one process (one owner) over a SQLite database
// shared with other processes and with the namespace (package fs).
type Table struct {
	// fields are the implementation's
}

// Tx is one transaction on the lock table. The namespace may run its own SQL
// in the same transaction through SQL(), so a path lookup, a sharing check
// and a namespace change commit together or not at all.
type Tx struct {
	// fields are the implementation's
}

// Open opens (creating if needed) the database at path, registers this
// process as a new owner, and cleans up the handles of owners that died.
// The database is in WAL mode with a busy timeout; writes are short
// IMMEDIATE transactions. Several processes may Open the same path.
func Open(ctx context.Context, path string, opts Options) (*Table, error) {
	panic("locks: unimplemented")
}

// DB returns the underlying database, for the namespace's own tables.
func (t *Table) DB() *sql.DB { panic("locks: unimplemented") }

// Owner returns this process instance's owner id.
func (t *Table) Owner() OwnerID { panic("locks: unimplemented") }

// Close closes every handle this owner still holds (running delete-on-close
// and completing pending deletes), deregisters the owner and closes the DB.
func (t *Table) Close(ctx context.Context) error { panic("locks: unimplemented") }

// Update runs fn in one write transaction (BEGIN IMMEDIATE), retrying with
// backoff while the database is busy. fn may run more than once; it must not
// have side effects outside the transaction. An error from fn rolls back.
func (t *Table) Update(ctx context.Context, fn func(tx *Tx) error) error {
	panic("locks: unimplemented")
}

// View runs fn in a read transaction.
func (t *Table) View(ctx context.Context, fn func(tx *Tx) error) error {
	panic("locks: unimplemented")
}

// ReapDeadOwners removes the handles and locks of owners whose process is
// gone and completes the deletes they held up. Open calls it; long-running
// processes may call it again. It returns how many owners were reaped.
func (t *Table) ReapDeadOwners(ctx context.Context) (int, error) {
	panic("locks: unimplemented")
}

// SQL returns the transaction for the namespace's statements.
func (tx *Tx) SQL() *sql.Tx { panic("locks: unimplemented") }

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { panic("locks: unimplemented") }

// OpenHandle grants a handle if the MS-FSA sharing check (both directions),
// the delete-pending state and an active lease (§4.4, A14) allow it.
// Errors: ErrDeletePending, ErrSharingViolation, ErrInvalidParameter.
func (tx *Tx) OpenHandle(req OpenRequest) (Handle, error) { panic("locks: unimplemented") }

// CloseHandle closes a handle of this owner: its byte-range locks go, a
// delete-on-close handle marks the file delete-pending, and if that leaves a
// delete-pending file with no handles the file is removed (Options.Remove).
// Errors: ErrHandleClosed for an unknown or force-closed id.
func (tx *Tx) CloseHandle(id HandleID) (CloseResult, error) { panic("locks: unimplemented") }

// Handle returns one handle. Errors: ErrHandleClosed.
func (tx *Tx) Handle(id HandleID) (Handle, error) { panic("locks: unimplemented") }

// Handles returns the handles open on file, in id order.
func (tx *Tx) Handles(file FileID) ([]Handle, error) { panic("locks: unimplemented") }

// AllHandles returns every handle in the table, in id order (List Handles on
// a directory filters these by the namespace's subtree).
func (tx *Tx) AllHandles() ([]Handle, error) { panic("locks: unimplemented") }

// Dispose sets (true) or clears (false) the delete disposition through a
// handle (FileDispositionInformation). Setting needs DELETE access
// (ErrAccessDenied), a file without ReadOnly (ErrCannotDelete) and, for a
// directory, no children (ErrDirectoryNotEmpty).
func (tx *Tx) Dispose(id HandleID, deletePending bool, facts Facts) error {
	panic("locks: unimplemented")
}

// DeletePending reports whether file is marked delete-pending.
func (tx *Tx) DeletePending(file FileID) (bool, error) { panic("locks: unimplemented") }

// UnlinkOpen is an unlink through the mount: the same as opening a handle
// with DELETE access (share all), disposing it and closing it. It fails with
// ErrSharingViolation if a handle does not share Delete, ErrDeletePending if
// already pending, ErrCannotDelete for ReadOnly. With no other handle open
// the file is removed at once (Options.Remove runs) and removed is true;
// otherwise the file is left delete-pending until its last handle closes.
func (tx *Tx) UnlinkOpen(file FileID, facts Facts) (removed bool, err error) {
	panic("locks: unimplemented")
}

// Reshare changes a handle's current share mode (flock: LOCK_SH → ShareRead,
// LOCK_EX → ShareNone, LOCK_UN → the open-time share mode), failing with
// ErrSharingViolation if another open handle's access would conflict with
// the new share mode, or the handle's access with theirs.
func (tx *Tx) Reshare(id HandleID, share ShareMode) error { panic("locks: unimplemented") }

// CheckREST decides a FileREST call in the order of locking.md §0.2:
// ErrDeletePending, ErrSharingViolation (share modes; any handle for
// OpDelete), lease errors (*LeaseError), ErrReadOnly, ErrLockConflict.
func (tx *Tx) CheckREST(req RESTRequest) error { panic("locks: unimplemented") }

// Lease runs one Lease File action (locking.md §4.2). Acquire is checked
// against open handles both ways (§1.5). It returns the lease id to report.
func (tx *Tx) Lease(req LeaseRequest) (string, error) { panic("locks: unimplemented") }

// LeaseInfo returns a file's lease status.
func (tx *Tx) LeaseInfo(file FileID) (LeaseInfo, error) { panic("locks: unimplemented") }

// Lock takes an SMB byte-range lock for a handle (no waiting).
// Errors: ErrLockNotGranted, ErrInvalidLockRange, ErrHandleClosed.
func (tx *Tx) Lock(id HandleID, r Range, kind LockKind) error { panic("locks: unimplemented") }

// Unlock removes exactly a range this handle locked (ErrRangeNotLocked).
func (tx *Tx) Unlock(id HandleID, r Range) error { panic("locks: unimplemented") }

// CheckIO decides a read or write through a handle against byte-range locks
// (§3.2). Errors: ErrLockConflict, ErrHandleClosed.
func (tx *Tx) CheckIO(id HandleID, r Range, write bool) error { panic("locks: unimplemented") }

// SetPOSIXLock applies an fcntl lock (F_SETLK) for lock owner key through a
// handle, with POSIX semantics among that owner's own locks on the file
// (a new lock replaces, an unlock splits; kind 0 unlocks) and the §3.2
// conflict rules against everyone else's. Errors: ErrLockNotGranted.
func (tx *Tx) SetPOSIXLock(id HandleID, key uint64, r Range, kind LockKind) error {
	panic("locks: unimplemented")
}

// GetPOSIXLock returns a lock that would block the given one (F_GETLK), or
// ok=false if none would.
func (tx *Tx) GetPOSIXLock(id HandleID, key uint64, r Range, kind LockKind) (ByteLock, bool, error) {
	panic("locks: unimplemented")
}

// ReleasePOSIXLocks drops every POSIX lock of key on the handle's file (FUSE
// FLUSH carries the lock owner; close(2) releases all of the process's locks
// on the file).
func (tx *Tx) ReleasePOSIXLocks(id HandleID, key uint64) error {
	panic("locks: unimplemented")
}

// ForceClose closes a handle of any owner (Force Close Handles). It reports
// whether the handle existed. The owner's next use of the id gets
// ErrHandleClosed.
func (tx *Tx) ForceClose(id HandleID) (bool, error) { panic("locks: unimplemented") }

// Forget drops every trace of file (handles, locks, lease, pending mark),
// for a file the namespace removed through REST.
func (tx *Tx) Forget(file FileID) error { panic("locks: unimplemented") }
