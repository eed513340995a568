package fs

// This file is the agreed surface of package fs: the protocol-neutral file
// service that the FUSE binding (fs/fusefs), FileREST (rest) and the session
// command program against. Bodies live in the other files of the package.
//
// Two families of calls:
//   - id-based, "mount view" (Lookup, GetAttr, ReadDir, Create, Mkdir,
//     Unlink, Rmdir, Rename, Setattr, Open): what FUSE needs. Files unlinked
//     through the mount while open are invisible here.
//   - path-based, "SMB view" (OpenByPath, the share / directory / file
//     operations): what REST and session need. A path is "share/dir/file"
//     (no leading slash; "share" alone is the share's root directory). A
//     name unlinked through the mount but still open is found here (when no
//     live entry has the name) and answers locks.ErrDeletePending.

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// FileID is the stable 64-bit id of an entry (the account root, a share, a
// directory or a file). Ids are never reused. It is locks' type.
type FileID = locks.FileID

// RootID is the id of the account root, the parent of every share.
const RootID FileID = 1

// BlockSize is the fixed block size of the data path: block i of a file's
// blob covers bytes [i*BlockSize, (i+1)*BlockSize).
const BlockSize = 4 << 20

// Kind is what an entry is.
type Kind int

const (
	KindFile Kind = iota + 1
	KindDirectory
	KindShare // a share's root directory (a top-level directory of the mount)
	KindRoot  // the account root (RootID)
)

// IsDir reports whether entries of the kind have children.
func (k Kind) IsDir() bool { return k != KindFile }

// Attributes are SMB file attributes (FILE_ATTRIBUTE_* values).
type Attributes uint32

const (
	AttrReadOnly          Attributes = 0x1
	AttrHidden            Attributes = 0x2
	AttrSystem            Attributes = 0x4
	AttrDirectory         Attributes = 0x10
	AttrArchive           Attributes = 0x20
	AttrTemporary         Attributes = 0x100
	AttrOffline           Attributes = 0x1000
	AttrNotContentIndexed Attributes = 0x2000
	AttrNoScrubData       Attributes = 0x20000

	// AttrNone is the empty set ("None" on the wire).
	AttrNone Attributes = 0
)

// ContentHeaders are a file's HTTP content headers (set by REST, reported by
// Get File). Set File Properties replaces them as a group.
type ContentHeaders struct {
	Type         string // x-ms-content-type
	Encoding     string
	Language     string
	Disposition  string
	CacheControl string
	MD5          []byte // 16 bytes or nil: client-set, never computed
}

// Attr is everything the namespace knows about one entry.
type Attr struct {
	ID     FileID
	Parent FileID // the share's id for entries in a share root; RootID for shares
	Kind   Kind
	Name   string // case as created; the share name for a share
	Path   string // "share/dir/name" at the time of the call; filled by path-based calls only (id-based mount calls leave it "")

	Size       int64      // bytes; 0 for directories
	Attributes Attributes // always includes AttrDirectory for directories and shares
	Created    time.Time  // x-ms-file-creation-time (100 ns precision)
	LastWrite  time.Time  // x-ms-file-last-write-time (mtime on the mount)
	Change     time.Time  // x-ms-file-change-time (ctime on the mount)
	Modified   time.Time  // Last-Modified: the last change of anything REST reports
	ETag       string     // quoted, new on every change of the entry
	Version    uint64     // the entry's change counter (grows with every change): cheap "did it change" test

	Content       ContentHeaders
	Metadata      map[string]string // x-ms-meta-*; nil when empty
	PermissionKey string            // x-ms-file-permission-key

	// Copy is what the last Copy File into this file left (nil when the
	// file never was a copy destination, or was recreated or had its
	// properties set since).
	Copy *CopyInfo

	// Shares only.
	QuotaGiB   int
	AccessTier string            // x-ms-access-tier; "" means the default, TransactionOptimized
	ShareProps map[string]string // ShareRequest.Props as stored; nil when none
	// ShareLease is the share's lease at the time of the call (GetShare,
	// ListShares and the share operations fill it).
	ShareLease ShareLeaseInfo
	// Snapshot is the share snapshot (x-ms-snapshot) the entry was read
	// from; "" for the live share.
	Snapshot string
	// Deleted is set for a soft-deleted share (ListDeletedShares).
	Deleted *DeletedShareInfo

	// DeletePending is true for a file unlinked through the mount while
	// open, or marked by a disposition (only reported where looked up).
	DeletePending bool
	// Unlinked is true when the entry no longer has a name on the mount.
	Unlinked bool

	// EAs are the entry's extended attributes (SMB clients set them; no
	// other protocol sees them), in the order set; nil when none.
	EAs []EA

	// AllocationSize is the allocation size an SMB client set apart from
	// the size (CREATE's AllocationSize, FileAllocationInformation), in
	// whole clusters; 0 when none was. Allocated is what is reported.
	AllocationSize int64
}

// ChangeKind says what a Change did.
type ChangeKind int

const (
	ChangeData   ChangeKind = iota + 1 // content or size changed (invalidate cached data)
	ChangeAttr                         // attributes, times, headers or metadata changed
	ChangeCreate                       // a name appeared in Parent
	ChangeRemove                       // a name left Parent (delete, unlink, rename source)
	ChangeRename                       // an entry moved (Parent/Name = old; NewParent/NewName = new)
)

// Change is one committed namespace or data change made through this
// FileSystem, delivered to subscribers after the transaction commits.
type Change struct {
	Kind      ChangeKind
	File      FileID
	Parent    FileID
	Name      string
	NewParent FileID // ChangeRename only
	NewName   string // ChangeRename only
	Version   uint64 // the entry's version after the change (0 when removed)
	// Offset and Length give the changed byte range for ChangeData when
	// known; Length < 0 means "everything from Offset".
	Offset, Length int64
	// Filter, for ChangeAttr and ChangeData, is what changed as
	// CHANGE_NOTIFY's completion filter says it (Notify* bits); 0 means
	// attributes and last write (ChangeAttr) or size and last write
	// (ChangeData).
	Filter uint32
}

// Config wires a FileSystem.
type Config struct {
	// Table is the lock table; its DB() holds the namespace tables (ns_*).
	// Open it with locks.Options{Remove: fs.RemoveFile}.
	Table *locks.Table
	// Store holds file content, one blob per file.
	Store blobstore.Store
	// Logger for background work (blob collection, intent recovery);
	// nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SpillDir holds per-handle spill files of unflushed writes; "" means
	// os.TempDir().
	SpillDir string
	// MemoryPerHandle bounds the in-memory write buffers of one handle
	// (rounded to whole blocks, at least one block); 0 means 4 blocks.
	// Beyond it partial blocks spill to a file in SpillDir. Two more
	// blocks, completed and on their way to the blob store, may be held
	// besides.
	MemoryPerHandle int64
	// FoldMount folds the mount's namespace changes (create, mkdir,
	// unlink, rmdir, rename, open, SetattrMount, and the released handles'
	// closes riding along with them) into one write transaction committed
	// within a millisecond (fold.go); off, each commits its own. Off by
	// default.
	FoldMount bool

	// skipKeyLock names a namespace decision (create, rename, unlink ...)
	// that leaves its key locks out: for the lock audit's own test, which
	// sees the audit catch it (keylock_test.go).
	skipKeyLock string
}

// New opens the namespace in cfg.Table's database (creating its tables),
// creates the account root, resolves commit intents left by dead processes
// and removes blobs of deleted files left over by a crash.
func New(ctx context.Context, cfg Config) (*FileSystem, error) { return newFileSystem(ctx, cfg) }

// Close stops background work and closes every handle this FileSystem still
// has open (flushing their writes). It does not close the lock table.
func (fsys *FileSystem) Close(ctx context.Context) error { return fsys.close(ctx) }

// Subscribe registers fn for every change committed through this
// FileSystem (in this process); cancel removes it. fn runs synchronously
// after the commit, on the goroutine that made the change: it must not call
// back into the FileSystem for the same file with locks held, and should be
// quick (go-fuse Notify* calls are fine).
func (fsys *FileSystem) Subscribe(fn func(Change)) (cancel func()) { return fsys.subscribe(fn) }

// ---------------------------------------------------------------------------
// Mount view: id-based calls for FUSE.

// Lookup finds name (case-insensitively) in directory parent. In RootID it
// finds shares. Unlinked-but-open files are not found. Errors: ErrNotFound,
// ErrNotDir, ErrInvalidName.
func (fsys *FileSystem) Lookup(ctx context.Context, parent FileID, name string) (Attr, error) {
	return fsys.lookupVisible(ctx, parent, name, false)
}

// The stat attributes of an entry are the Attr fields stat(2) shows: ID,
// Parent, Kind, Name, Size, Attributes, LastWrite, Change, Version and
// Unlinked. LookupStat, GetAttr and ReadDir return those only (Path,
// Created, Modified, ETag and the REST properties are left zero): reading
// fewer columns makes a lookup a fifth cheaper, and the mount needs no more.

// LookupStat is Lookup with the stat attributes only.
func (fsys *FileSystem) LookupStat(ctx context.Context, parent FileID, name string) (Attr, error) {
	return fsys.lookupVisible(ctx, parent, name, true)
}

// GetAttr returns an entry's stat attributes, also for a file unlinked
// while open (Unlinked set) as long as it has handles. Like LookupStat it
// does not read the lock table: DeletePending is left false (Handle.Attr
// reports it). Errors: ErrNotFound.
func (fsys *FileSystem) GetAttr(ctx context.Context, id FileID) (Attr, error) {
	fsys.commitFor(ctx, id, false)
	return fsys.getAttr(ctx, id)
}

// ReadDir lists a directory (or the root: the shares) in case-insensitive
// name order, leaving out unlinked-but-open files, each entry with the
// stat attributes LookupStat would report: one query answers a whole
// READDIRPLUS, where a lookup per entry cost a query each.
func (fsys *FileSystem) ReadDir(ctx context.Context, dir FileID) ([]Attr, error) {
	fsys.commitFor(ctx, dir, true)
	return fsys.readDir(ctx, dir)
}

// CreateRequest creates a file through the mount and opens it.
type CreateRequest struct {
	Parent     FileID
	Name       string
	Exclusive  bool // O_EXCL: ErrExist if the name exists; otherwise an existing file is opened
	Truncate   bool // O_TRUNC on an existing file
	Attributes Attributes
	Open       OpenOptions
}

// OpenOptions are the lock-table side of an open.
type OpenOptions struct {
	Access        locks.Access
	Share         locks.ShareMode
	DeleteOnClose bool
	// POSIX marks the open of a POSIX process (the FUSE mount): its I/O
	// is checked as locks.Tx.CheckIOKey checks it — the process's own
	// fcntl locks never block it, whichever handle took them (the lock
	// owner given to ReadAtOwner and WriteAtOwner), and flocks are
	// advisory to it, as on a local disk.
	POSIX bool
	// VisibleWrites makes a write through the handle visible to every
	// reader once it returns (SMB, whose clients may not cache without a
	// write-caching lease): the writes stay staged, and a reader — REST,
	// the mount's stat and listing, another handle's read, in this
	// process or another — has them committed first (visible.go). Without
	// it a handle's writes are seen by others from its Flush, Fsync or
	// Close.
	VisibleWrites bool
	// Descriptive, reported by List Handles.
	SessionID  uint64
	ClientName string
	ClientIP   string
}

// Create creates (or, without Exclusive, opens) a file in parent. In RootID
// it fails with ErrInvalidArg (only directories — shares — live there).
func (fsys *FileSystem) Create(ctx context.Context, req CreateRequest) (*Handle, Attr, error) {
	return fsys.create(ctx, req)
}

// Mkdir creates a directory; in RootID it creates a share (share name rules
// apply). Errors: ErrExist / ErrShareExist, ErrInvalidName, ErrNotFound.
func (fsys *FileSystem) Mkdir(ctx context.Context, parent FileID, name string) (Attr, error) {
	return fsys.mkdir(ctx, parent, name)
}

// Unlink removes a file name through the mount (locks.Tx.UnlinkOpen): with
// no other handle the file is removed at once; otherwise it becomes
// delete-pending and its name leaves the mount immediately (the same name
// may be created again), while the file lives on until its last handle
// closes. A ReadOnly file goes too, as the Linux SMB client's unlink
// makes it go. Errors: ErrNotFound, ErrIsDir, locks.ErrSharingViolation,
// locks.ErrDeletePending.
func (fsys *FileSystem) Unlink(ctx context.Context, parent FileID, name string) error {
	return fsys.unlink(ctx, parent, name)
}

// Rmdir removes an empty directory (in RootID: an empty share).
// Errors: ErrNotFound, ErrNotDir, ErrNotEmpty, locks.ErrSharingViolation.
func (fsys *FileSystem) Rmdir(ctx context.Context, parent FileID, name string) error {
	return fsys.rmdir(ctx, parent, name)
}

// RenameRequest moves an entry, atomically, within one share.
type RenameRequest struct {
	OldParent FileID
	OldName   string
	NewParent FileID
	NewName   string
	NoReplace bool // RENAME_NOREPLACE: ErrExist if NewName exists
	Exchange  bool // RENAME_EXCHANGE: not supported (ErrNotSupported)
}

// Rename moves an entry; an existing destination file is replaced as by
// Unlink (it may stay alive, unlinked, for its open handles); an existing
// destination directory must be empty. Renaming a directory into its own
// subtree is ErrInvalidArg. The source needs no handle without shared
// Delete (locks.ErrSharingViolation).
func (fsys *FileSystem) Rename(ctx context.Context, req RenameRequest) error {
	return fsys.renameMount(ctx, req)
}

// SetattrRequest changes attributes through the mount. Nil fields are left
// alone.
type SetattrRequest struct {
	Size       *int64     // truncate or extend (sparse)
	LastWrite  *time.Time // mtime
	Change     *time.Time // ctime (normally set to now by every change)
	Created    *time.Time
	Attributes *Attributes // e.g. chmod a-w → ReadOnly
	// EAs sets extended attributes: each replaces the one of its name
	// (names compare without case), and one with an empty value removes
	// it. The whole set may hold at most MaxEASize bytes (ErrEATooLarge).
	EAs []EA
	// AllocationSize sets the file's allocation size (rounded up to
	// ClusterSize), as FileAllocationInformation does (MS-FSA
	// 2.1.5.15.1): a size above it is cut to it. Files only (ErrIsDir).
	AllocationSize *int64
	// Handle, when the call came through an open file (ftruncate, O_TRUNC):
	// its unflushed writes are committed first and it is the handle the
	// change is checked for.
	Handle *Handle
}

// Setattr applies req to an entry and returns the new attributes.
func (fsys *FileSystem) Setattr(ctx context.Context, id FileID, req SetattrRequest) (Attr, error) {
	return fsys.setattr(ctx, id, req)
}

// Open opens an existing file by id (FUSE OPEN) as a handle in the lock
// table, first breaking the SMB clients' oplocks and leases it meets and
// waiting for them, as a local open would (breaks.go). Errors: ErrNotFound, ErrIsDir, locks.ErrSharingViolation,
// locks.ErrDeletePending, locks.ErrReadOnly (write access to a ReadOnly
// file).
func (fsys *FileSystem) Open(ctx context.Context, id FileID, opts OpenOptions) (*Handle, error) {
	if err := fsys.breakCaching(ctx, id, locks.RequesterMount, opts, false); err != nil {
		return nil, err
	}
	fsys.commitFor(ctx, id, false)
	h, err := fsys.openID(ctx, id, opts)
	if h != nil {
		h.h.breaker = locks.RequesterMount
	}
	return h, err
}

// StatFS reports totals for statfs(2).
type StatFS struct {
	Files      uint64 // entries in the namespace
	UsedBytes  uint64 // sum of file sizes
	QuotaBytes uint64 // sum of share quotas
}

// StatFS counts the namespace.
func (fsys *FileSystem) StatFS(ctx context.Context) (StatFS, error) { return fsys.statFS(ctx) }

// ---------------------------------------------------------------------------
// SMB view: path-based opens for session (and anything SMB-like).

// Disposition is an SMB create disposition.
type Disposition int

const (
	DispositionOpen        Disposition = iota + 1 // FILE_OPEN: must exist
	DispositionCreate                             // FILE_CREATE: must not exist (ErrExist)
	DispositionOpenIf                             // FILE_OPEN_IF: open or create
	DispositionOverwrite                          // FILE_OVERWRITE: must exist, truncated
	DispositionOverwriteIf                        // FILE_OVERWRITE_IF: truncate or create
	DispositionSupersede                          // FILE_SUPERSEDE: replace or create
)

// OpenPathRequest opens a file by path the way an SMB CREATE does.
type OpenPathRequest struct {
	Path        string
	Disposition Disposition // zero means DispositionOpen
	Attributes  Attributes  // for a created file (Archive is added)
	Open        OpenOptions
}

// OpenByPath opens (or creates, by Disposition) a file, first breaking
// the SMB clients' oplocks and leases it meets (breaks.go). A name that is
// delete-pending answers locks.ErrDeletePending. Errors: ErrNotFound,
// ErrParentNotFound, ErrShareNotFound, ErrExist, ErrIsDir, ErrInvalidName,
// locks' sharing errors, locks.ErrReadOnly and locks.ErrCannotDelete (an
// existing ReadOnly file opened to write, overwrite or delete on close).
func (fsys *FileSystem) OpenByPath(ctx context.Context, req OpenPathRequest) (*Handle, Attr, error) {
	if err := fsys.breakCachingPath(ctx, req); err != nil {
		return nil, Attr{}, err
	}
	fsys.commitForPath(ctx, req.Path, false)
	h, a, err := fsys.openPath(ctx, req)
	if h != nil {
		h.h.breaker = locks.RequesterSession
	}
	return h, a, err
}

// SetAttributesByPath sets a file's or directory's SMB attributes (session
// `attrs`). Not lock-checked beyond delete-pending, like an SMB SetInfo on a
// handle opened for attributes.
func (fsys *FileSystem) SetAttributesByPath(ctx context.Context, path string, attrs Attributes) (Attr, error) {
	return fsys.setAttributesByPath(ctx, path, attrs)
}

// ---------------------------------------------------------------------------
// Handles.

// Handle is one open of a file: a handle in the lock table plus the staged,
// unflushed writes of this open. Methods are safe for concurrent use. After
// Close (or a force close by someone else) every method fails with
// locks.ErrHandleClosed.
type Handle struct {
	h handleState
}

// ID is the lock-table handle id (List Handles' HandleId, session's answer).
func (h *Handle) ID() locks.HandleID { return h.h.id }

// File is the id of the open file.
func (h *Handle) File() FileID { return h.h.file }

// Access is the access the handle was opened with.
func (h *Handle) Access() locks.Access { return h.h.access }

// ReadAt reads up to len(p) bytes at off, seeing this handle's own
// unflushed writes. It returns io.EOF at or past the end, like io.ReaderAt.
// Checked against byte-range locks (locks.ErrLockConflict). Needs read or
// execute access (locks.ErrAccessDenied).
func (h *Handle) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	return h.readAt(ctx, p, off, 0)
}

// ReadAtOwner is ReadAt for a POSIX handle (OpenOptions.POSIX) whose I/O
// names the POSIX lock owner making it (a FUSE READ in direct I/O): that
// owner's fcntl locks on the file are its own. Owner 0 is unknown: then
// the locks taken through this handle are.
func (h *Handle) ReadAtOwner(ctx context.Context, p []byte, off int64, owner uint64) (int, error) {
	return h.readAt(ctx, p, off, owner)
}

// WriteAt stages p at off in this handle (nothing reaches the blob store or
// other handles until Flush, Fsync or Close). Checked against byte-range
// locks. Needs write or append access.
func (h *Handle) WriteAt(ctx context.Context, p []byte, off int64) (int, error) {
	return h.writeAt(ctx, p, off, 0)
}

// WriteAtOwner is WriteAt with the POSIX lock owner making the write (see
// ReadAtOwner).
func (h *Handle) WriteAtOwner(ctx context.Context, p []byte, off int64, owner uint64) (int, error) {
	return h.writeAt(ctx, p, off, owner)
}

// ClearRange stages zeros over [off, off+n) in this handle, like WriteAt
// of n zero bytes, but whole blocks become references to the zero block
// and the range leaves the file's data ranges (List Ranges), as REST Put
// Range with x-ms-write: clear does: fallocate's hole punching. Checked
// like WriteAt. A range past the end extends the file.
func (h *Handle) ClearRange(ctx context.Context, off, n int64) error {
	return h.clearAt(ctx, off, n)
}

// Size is the file size as this handle sees it (committed size extended by
// its own unflushed writes).
func (h *Handle) Size(ctx context.Context) (int64, error) { return h.size(ctx) }

// StagedEnd is the end of this handle's unflushed writes, 0 when it has
// none or is closed. The size the handle sees is the larger of this and
// the committed size, so a caller that has just read the committed size
// (a GETATTR) learns each open handle's size without reading the
// namespace again.
func (h *Handle) StagedEnd() int64 { return h.stagedEnd() }

// Flush commits the staged writes onto the latest committed version of the
// file (ranges this handle did not write are kept). Write errors surface
// here. Flushing with nothing staged is a no-op.
func (h *Handle) Flush(ctx context.Context) error { return h.flush(ctx) }

// Fsync is Flush; the blob store and SQLite are durable when they return.
func (h *Handle) Fsync(ctx context.Context) error { return h.flush(ctx) }

// Close flushes, then closes the handle in the lock table (delete-on-close
// and pending deletes complete here; a removed file's blob is collected
// after the commit). The handle is closed even when the flush fails; the
// flush error is returned. Closing twice returns locks.ErrHandleClosed.
func (h *Handle) Close(ctx context.Context) error { return h.close(ctx) }

// Release is Close for an owner that does not wait for the lock table (a
// FUSE RELEASE, which comes after close(2) has returned): it flushes and
// returns the flush error, and the handle is closed for this process at
// once, but its close in the lock table rides along with this process's
// next write transaction, or runs on its own within about a millisecond.
// done, if not nil, gets that close's outcome. Until then this process's
// write transactions and View-based checks see the handle closed; other
// processes and this process's lookups may still see it open. A handle
// that ever asked for a byte-range lock is closed before Release returns.
func (h *Handle) Release(ctx context.Context, done func(error)) error {
	return h.release(ctx, done)
}

// Discard drops the staged writes without committing them.
func (h *Handle) Discard() { h.discard() }

// Dispose sets or clears the delete disposition (locks.Tx.Dispose).
func (h *Handle) Dispose(ctx context.Context, deletePending bool) error {
	return h.dispose(ctx, deletePending)
}

// Lock takes an SMB byte-range lock (no waiting): locks.ErrLockNotGranted.
func (h *Handle) Lock(ctx context.Context, r locks.Range, kind locks.LockKind) error {
	return h.lock(ctx, r, kind)
}

// Unlock removes exactly a range this handle locked: locks.ErrRangeNotLocked.
func (h *Handle) Unlock(ctx context.Context, r locks.Range) error { return h.unlock(ctx, r) }

// SetPOSIXLock applies an fcntl lock for lock owner key (kind 0 unlocks).
// With wait (F_SETLKW) it polls until granted or ctx ends (then ctx.Err(),
// EINTR on the mount).
func (h *Handle) SetPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind, wait bool) error {
	return h.setPOSIXLock(ctx, key, r, kind, wait)
}

// GetPOSIXLock returns a lock that would block the given one (F_GETLK).
func (h *Handle) GetPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind) (locks.ByteLock, bool, error) {
	return h.getPOSIXLock(ctx, key, r, kind)
}

// ReleasePOSIXLocks drops every POSIX lock of key on the file (FUSE FLUSH
// with a lock owner).
func (h *Handle) ReleasePOSIXLocks(ctx context.Context, key uint64) error {
	return h.releasePOSIXLocks(ctx, key)
}

// Flock applies flock(2) through the handle (locks.Tx.Flock): kind
// locks.LockShared or locks.LockExclusive locks, 0 unlocks. It conflicts
// only with other handles' flocks (locks.ErrLockNotGranted); with wait it
// polls until granted or ctx ends.
func (h *Handle) Flock(ctx context.Context, kind locks.LockKind, wait bool) error {
	return h.flock(ctx, kind, wait)
}

// Attr returns all of the file's attributes with Size as this handle
// sees it.
func (h *Handle) Attr(ctx context.Context) (Attr, error) { return h.attr(ctx, true) }

// StatAttr is Attr with only what stat(2) shows (as GetAttr): the mount's
// getattr through an open file, which reads fewer columns.
func (h *Handle) StatAttr(ctx context.Context) (Attr, error) { return h.attr(ctx, false) }

// ---------------------------------------------------------------------------
// Shares (REST).

// ShareRequest creates a share.
type ShareRequest struct {
	Name       string
	QuotaGiB   int    // 0 means the default, 5120
	AccessTier string // "" means the default
	Metadata   map[string]string
	// Props are other properties stored as given and reported back (the
	// caller's names and canonical values: provisioned IOPS, paid
	// bursting, ...); they configure nothing.
	Props map[string]string
}

// CreateShare creates a share. Errors: ErrInvalidName (share rules),
// ErrShareExist.
func (fsys *FileSystem) CreateShare(ctx context.Context, req ShareRequest) (Attr, error) {
	return fsys.createShare(ctx, req)
}

// GetShare returns a share's properties (Kind KindShare). ErrShareNotFound.
func (fsys *FileSystem) GetShare(ctx context.Context, name string) (Attr, error) {
	return fsys.getShare(ctx, name, "")
}

// GetShareLeased is GetShare for a request that carries a lease id: it
// must name the share's active lease (*lease.Error otherwise).
func (fsys *FileSystem) GetShareLeased(ctx context.Context, name, leaseID string) (Attr, error) {
	return fsys.getShare(ctx, name, leaseID)
}

// SetShareQuota changes a share's quota (GiB, > 0).
func (fsys *FileSystem) SetShareQuota(ctx context.Context, name string, quotaGiB int) (Attr, error) {
	return fsys.setShareQuota(ctx, name, quotaGiB)
}

// ShareProperties are the settable properties of a share; nil fields are
// kept.
type ShareProperties struct {
	QuotaGiB   *int
	AccessTier *string
	// Props are merged into the stored properties (ShareRequest.Props).
	Props map[string]string
	// LeaseID, when not empty, must name the share's active lease.
	LeaseID string
}

// SetShareProperties changes a share's quota (GiB, > 0) and access tier.
func (fsys *FileSystem) SetShareProperties(ctx context.Context, name string, p ShareProperties) (Attr, error) {
	return fsys.setShareProperties(ctx, name, p)
}

// SetShareMetadata replaces a share's metadata. leaseID, when not
// empty, must name the share's active lease (*lease.Error).
func (fsys *FileSystem) SetShareMetadata(ctx context.Context, name, leaseID string, md map[string]string) (Attr, error) {
	return fsys.setShareMetadata(ctx, name, leaseID, md)
}

// DeleteShare deletes a share and everything in it; handles open below it
// are force-closed. ErrShareNotFound.
func (fsys *FileSystem) DeleteShare(ctx context.Context, name string) error {
	return fsys.deleteShare(ctx, DeleteShareRequest{Name: name})
}

// DeleteShareRequest deletes a share.
type DeleteShareRequest struct {
	Name string
	// LeaseID is required while the share's lease is active, and must
	// name it (*lease.Error: LeaseIdMissing, mismatch).
	LeaseID string
	// IncludeSnapshots deletes the share's snapshots too; without it a
	// share with snapshots is ErrShareHasSnapshots.
	IncludeSnapshots bool
	// IncludeLeased ("include-leased") deletes snapshots with active
	// leases too; with IncludeSnapshots alone they are ErrSnapshotLeased.
	IncludeLeased bool
	// Retain > 0 soft-deletes the share: it is kept, out of sight, for
	// that long, and RestoreShare can bring it back (snapshots included).
	Retain time.Duration
}

// RemoveShare is DeleteShare with the request's conditions.
func (fsys *FileSystem) RemoveShare(ctx context.Context, req DeleteShareRequest) error {
	return fsys.deleteShare(ctx, req)
}

// ListRequest pages through a listing. Marker is the NextMarker of the
// previous page ("" to start); MaxResults <= 0 means 5000.
type ListRequest struct {
	Prefix     string
	Marker     string
	MaxResults int
}

// ListSharesResult is one page of shares.
type ListSharesResult struct {
	Shares     []Attr
	NextMarker string // "" when done
}

// ListShares lists shares in name order with their metadata.
func (fsys *FileSystem) ListShares(ctx context.Context, req ListRequest) (ListSharesResult, error) {
	return fsys.listShares(ctx, req)
}

// ---------------------------------------------------------------------------
// Directories and files (REST). Every call on a file is checked by
// locks.Tx.CheckREST in the transaction of its lookup (and change).

// SMBProperties are the settable SMB properties; nil fields mean "preserve"
// on Set and "now"/default on Create.
type SMBProperties struct {
	Attributes *Attributes
	Created    *time.Time
	LastWrite  *time.Time
	Change     *time.Time
	// PermissionKey is the entry's new permission key (one CreatePermission
	// returned, or DefaultPermissionKey); the caller checks it exists.
	PermissionKey *string
}

// CreateDirectoryRequest creates a directory by path.
type CreateDirectoryRequest struct {
	Path     string
	Props    SMBProperties
	Metadata map[string]string
}

// CreateDirectory creates a directory. Errors: ErrExist, ErrParentNotFound,
// ErrShareNotFound, ErrInvalidName.
func (fsys *FileSystem) CreateDirectory(ctx context.Context, req CreateDirectoryRequest) (Attr, error) {
	return fsys.createDirectory(ctx, req)
}

// Stat returns the attributes of the entry at path (directory or file) in
// the SMB view, with lease info for files. A delete-pending file answers
// locks.ErrDeletePending (never ErrNotFound while pending); Get File
// Properties is otherwise never blocked by share modes. leaseID is checked
// as for a read (wrong id → *locks.LeaseError).
func (fsys *FileSystem) Stat(ctx context.Context, path, leaseID string) (Attr, locks.LeaseInfo, error) {
	fsys.commitForPath(ctx, path, false)
	return fsys.stat(ctx, path, leaseID)
}

// SetPropertiesRequest is Set Directory / Set File Properties.
type SetPropertiesRequest struct {
	Path    string
	Props   SMBProperties
	Size    *int64          // files: resize (sparse when growing)
	Content *ContentHeaders // files: replaces the whole group when non-nil
	LeaseID string
}

// SetProperties changes properties of a directory or file (files: checked
// as locks.OpSetProperties).
func (fsys *FileSystem) SetProperties(ctx context.Context, req SetPropertiesRequest) (Attr, error) {
	return fsys.setProperties(ctx, req)
}

// SetMetadata replaces the metadata of a directory or file (files: checked
// as locks.OpSetMetadata).
func (fsys *FileSystem) SetMetadata(ctx context.Context, path string, md map[string]string, leaseID string) (Attr, error) {
	return fsys.setMetadata(ctx, path, md, leaseID)
}

// DeleteDirectory deletes an empty directory (ErrNotEmpty), at once.
func (fsys *FileSystem) DeleteDirectory(ctx context.Context, path string) error {
	return fsys.deleteDirectory(ctx, path)
}

// ListResult is one page of a directory listing.
type ListResult struct {
	Dir        Attr   // the listed directory (DirectoryId)
	Entries    []Attr // files and directories, in one case-insensitive name order
	NextMarker string // "" when done
}

// ListDirectory lists one level of a directory, files and directories
// interleaved by name; delete-pending files are left out.
func (fsys *FileSystem) ListDirectory(ctx context.Context, path string, req ListRequest) (ListResult, error) {
	fsys.commitForPath(ctx, path, true)
	return fsys.listDirectory(ctx, path, req)
}

// CreateFileRequest is REST Create File: creates, or replaces an existing
// file's content with Size zero bytes (checked as locks.OpCreateOverwrite,
// keeping an active lease).
type CreateFileRequest struct {
	Path     string
	Size     int64
	Props    SMBProperties
	Content  ContentHeaders
	Metadata map[string]string
	LeaseID  string
}

// CreateFile creates or overwrites a file. Errors: ErrParentNotFound,
// ErrShareNotFound, ErrIsDir (a directory has the name), ErrInvalidName,
// ErrInvalidRange (negative size), lock errors, *locks.LeaseError (a lease
// id for a file that does not exist → LeaseNotPresentWithFileOperation).
func (fsys *FileSystem) CreateFile(ctx context.Context, req CreateFileRequest) (Attr, error) {
	return fsys.createFile(ctx, req)
}

// PutRangeRequest is REST Put Range. Body nil means "clear" (zeros).
type PutRangeRequest struct {
	Path    string
	Offset  int64
	Length  int64     // bytes; Body must deliver exactly Length bytes (≤ 4 MiB for update)
	Body    io.Reader // nil: clear the range
	LeaseID string
	// PreserveLastWrite keeps x-ms-file-last-write-time (header "preserve").
	PreserveLastWrite bool
}

// PutRange writes (or clears) a range and commits it at once, merged onto
// the latest version (unflushed handle writes elsewhere are not lost: they
// merge in at their own flush). The range must lie within the file
// (ErrInvalidRange). Checked as locks.OpPutRange with the range.
func (fsys *FileSystem) PutRange(ctx context.Context, req PutRangeRequest) (Attr, error) {
	return fsys.putRange(ctx, req)
}

// PutRangeFromRequest is Put Range From URL with a source in the account.
type PutRangeFromRequest struct {
	Path         string
	Offset       int64
	Length       int64
	SourcePath   string
	SourceOffset int64
	LeaseID      string
	// PreserveLastWrite keeps x-ms-file-last-write-time (header "preserve").
	PreserveLastWrite bool
	// Verify, when set, wraps the source range's stream as fs reads it
	// (exactly Length bytes); a read error from it fails the call before
	// anything is committed.
	Verify func(io.Reader) io.Reader
}

// PutRangeFrom copies Length bytes from SourcePath (checked as
// locks.OpCopySource with the range) into Path (locks.OpPutRange).
func (fsys *FileSystem) PutRangeFrom(ctx context.Context, req PutRangeFromRequest) (Attr, error) {
	return fsys.putRangeFrom(ctx, req)
}

// GetFileRequest is REST Get File. Length < 0 means to the end.
type GetFileRequest struct {
	Path    string
	Offset  int64
	Length  int64
	Ranged  bool // a Range header was sent (the check uses the range, not WholeFile)
	LeaseID string
}

// FileReader streams a file's content; Close it.
type FileReader struct {
	io.ReadCloser
	Attr   Attr
	Lease  locks.LeaseInfo
	Offset int64 // first byte delivered
	Length int64 // bytes that will be delivered (the range clamped to the size)
}

// WriteTo copies the rest of the range to w, letting the content's own
// stream write itself out when it can (an HTTP response then gets the
// blob store's files for sendfile) rather than through a buffer.
func (fr *FileReader) WriteTo(w io.Writer) (int64, error) {
	if wt, ok := fr.ReadCloser.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, struct{ io.Reader }{fr.ReadCloser})
}

// GetFile checks the read (locks.OpGetFile) and returns a stream of the
// range as committed now (holes read as zeros). Offset ≥ size (with a
// non-empty file or a ranged request) is ErrInvalidRange.
func (fsys *FileSystem) GetFile(ctx context.Context, req GetFileRequest) (*FileReader, error) {
	fsys.commitForPath(ctx, req.Path, false)
	return fsys.getFile(ctx, req)
}

// DeleteFile deletes a file at once (no handle may be open: locks decides).
// Its blob is removed after the commit.
func (fsys *FileSystem) DeleteFile(ctx context.Context, path, leaseID string) error {
	return fsys.deleteFile(ctx, path, leaseID)
}

// Range is an inclusive byte range as List Ranges reports it.
type Range struct {
	Start, End int64
}

// ListRanges reports the ranges that hold data (clipped to r when r.Length
// > 0), checked as locks.OpListRanges. Every write adds its byte range; a
// clear removes the 512-byte-aligned interior of its range (its unaligned
// edges stay listed, as on Azure); a resize cuts; a copy inherits the
// source's ranges. (After a crash-recovered commit the whole file up to its
// size is reported, which is read-correct.)
func (fsys *FileSystem) ListRanges(ctx context.Context, path string, r locks.Range, leaseID string) ([]Range, Attr, error) {
	fsys.commitForPath(ctx, path, false)
	return fsys.listRanges(ctx, path, r, leaseID)
}

// CopyFileRequest is Copy File within the account (synchronous).
type CopyFileRequest struct {
	Source string
	// SourceSnapshot, when set, copies Source as it is in that share
	// snapshot (restoring from a snapshot; the file may be its own
	// destination).
	SourceSnapshot string
	Dest           string
	Metadata       map[string]string // nil: copy the source's
	// Props sets the destination's SMB properties; a nil attribute set
	// means the source's attributes, nil times mean now, unless FromSource
	// names them.
	Props      SMBProperties
	FromSource CopyFromSource
	// PermissionKey is the destination's permission key when not taken
	// from the source ("": the default descriptor).
	PermissionKey  string
	LeaseID        string // destination lease
	IgnoreReadOnly bool   // x-ms-file-copy-ignore-readonly: an existing ReadOnly destination is overwritten
	SetArchive     bool   // x-ms-file-copy-set-archive
	// CopyID and CopySource are recorded on the destination (Copy).
	CopyID     string
	CopySource string
}

// CopyFromSource names the SMB properties Copy File takes from the source
// file (the header value "source").
type CopyFromSource struct {
	Attributes, Created, LastWrite, Change, Permission bool
}

// CopyInfo is the record of the last Copy File into a file (x-ms-copy-*).
type CopyInfo struct {
	ID        string    `json:"id"`
	Source    string    `json:"src"`
	Status    string    `json:"st"`   // "success" (copies complete synchronously)
	Progress  string    `json:"prog"` // "copied/total" bytes
	Completed time.Time `json:"done"`
}

// CopyFile copies a file's content and properties (source checked as
// locks.OpCopySource, an existing destination as locks.OpCreateOverwrite).
func (fsys *FileSystem) CopyFile(ctx context.Context, req CopyFileRequest) (Attr, error) {
	fsys.commitForPath(ctx, req.Source, false)
	return fsys.copyFile(ctx, req)
}

// RenamePathRequest is REST Rename File / Rename Directory.
type RenamePathRequest struct {
	Source          string
	Dest            string
	ReplaceIfExists bool
	IgnoreReadOnly  bool
	SourceLeaseID   string
	DestLeaseID     string
	Props           SMBProperties     // applied to the renamed entry
	Metadata        map[string]string // non-nil: replaces
}

// RenamePath renames within one share, atomically (source checked as
// locks.OpRenameSource; a replaced file as locks.OpRenameReplace). An
// existing destination without ReplaceIfExists is ErrExist; an existing
// destination directory is ErrExist always; ReadOnly destination without
// IgnoreReadOnly is locks.ErrReadOnly.
func (fsys *FileSystem) RenamePath(ctx context.Context, req RenamePathRequest) (Attr, error) {
	return fsys.renamePath(ctx, req)
}

// LeaseFile runs a Lease File action on path and returns the lease id to
// report.
func (fsys *FileSystem) LeaseFile(ctx context.Context, path string, req locks.LeaseRequest) (string, Attr, error) {
	return fsys.leaseFile(ctx, path, req)
}

// HandleInfo is one handle as List Handles reports it.
type HandleInfo struct {
	locks.Handle
	Path   string // share-relative ("dir/file"); "" for the share root
	Parent FileID
}

// ListHandles lists the handles open on path (a file, or a directory and,
// with recursive, everything beneath it), in handle id order.
func (fsys *FileSystem) ListHandles(ctx context.Context, path string, recursive bool) ([]HandleInfo, error) {
	return fsys.listHandles(ctx, path, recursive)
}

// ForceCloseHandles closes handle id (or every handle when all) on path as
// ListHandles selects them. It returns how many were closed. Unknown ids
// close nothing (no error).
func (fsys *FileSystem) ForceCloseHandles(ctx context.Context, path string, id locks.HandleID, all, recursive bool) (int, error) {
	return fsys.forceCloseHandles(ctx, path, id, all, recursive)
}
