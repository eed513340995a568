// Package fs is blobshare's protocol-neutral share file system: the
// namespace in SQLite, the data path over blobstore, and every sharing
// decision delegated to package locks. The FUSE binding (fs/fusefs), the
// FileREST server (rest) and `blobshare session` are thin adapters over it.
//
// # Wiring
//
//	table, _ := locks.Open(ctx, filepath.Join(data, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
//	fsys, _ := fs.New(ctx, fs.Config{Table: table, Store: store})
//
// The namespace tables (prefix ns_) live in the lock table's database, so a
// path lookup, a lock decision and a namespace change commit in one
// transaction (locks.Table.Update, statements on tx.SQL()).
//
// # Namespace
//
// One table of entries: the account root (RootID), shares (its children),
// directories and files. Every entry has a stable 64-bit id, never reused
// (each process takes ids from blocks it reserves in ns_seq, adopted only
// when the reserving transaction commits), and a parent id, so renames move
// a row and keep the id. Names are case-preserving and case-insensitive: each row
// stores the name as given and a key (FoldName: simple upper-casing rune by
// rune), and a UNIQUE (parent, key) index over live rows decides collisions.
// Name rules are Azure Files' (ValidateName, ValidateShareName, SplitPath).
// Times are stored as int64 100 ns ticks. Every change of an entry counts
// its version up (in the UPDATE itself: version = version + 1); the ETag is
// made of id and version, so "did the file change since I cached it" is one
// integer compare, and a file created again under a deleted one's name
// never repeats its ETag. (Per entry rather than database-wide: a shared
// counter was one more statement and one more page written per change.)
//
// # Two views of names
//
// The mount (id-based calls) follows POSIX: unlinking a file that others
// hold open makes it delete-pending in locks (Tx.UnlinkOpen) and flags its
// row unlinked. An unlinked row is outside the unique name index: the name
// leaves the mount at once and can be created again, while the file lives
// on for its handles (fstat works). The SMB view (path-based calls: REST and
// session) still finds an unlinked row when no live entry has the name, and
// locks answers ErrDeletePending (REST 409 SMBDeletePending) until the last
// handle closes; then locks calls RemoveFile in the closing transaction and
// the row goes (REST 404). A session `dispose ID true` leaves the name in
// place, pending, as SMB does.
//
// # Data path
//
// One blob per file (key "f" + 16 hex digits of the id), a committed list of
// blocks of BlockSize (4 MiB) at fixed offsets: block i holds bytes
// [i*BlockSize, (i+1)*BlockSize); every block but the last is full. A
// partial write re-stages only the blocks it touches and commits a list that
// reuses the others. Sparse regions: the namespace size may exceed the
// blob's length — the tail past the blob reads as zeros and costs nothing
// (a resize to 1 TiB writes no data); a hole inside the blob (a write far
// past the end) is filled with references to one zero block ("z") staged
// once per blob. (On Azure Blob a list holds at most 50,000 blocks: files
// with holes or data past ~195 GiB do not fit there.)
//
// Small files live inline: while a file's data (not its size) fits in
// InlineMax (64 KiB) and it never had a blob, its bytes sit in its
// namespace row and a commit is one SQLite transaction with no blob I/O
// (small-file create + write + close costs no fsync of the blob store).
// The first commit that would outgrow InlineMax moves the content to a
// blob (under the commit intent below) and the file stays blob-backed.
//
// A REST Put Range stages its whole blocks durably
// (blobstore.StageBlockDurable) before it takes the file's commit lock, so
// the data of several ranges in flight is synced at once rather than one
// range after the other under that lock; the commit then finds the data
// clean. Writes of whole blocks are committed in groups (groupcommit.go):
// they queue on the file, and whoever takes the commit lock commits every
// write queued so far in one blob commit and one namespace update, each
// write checked on its own in the transaction that takes the lock. With 4
// ranges in flight a commit per range made each wait for the commits (and
// their journal syncs) of those before it. The writer that takes the lock
// first waits, at most 20 ms, for the file's REST writes still staging
// (their bodies on the way, their blocks syncing), so that they join its
// commit rather than waiting for the next one: a commit costs two rounds
// of syncs whatever it carries.
//
// Handles stage writes per open: up to Config.MemoryPerHandle of partial
// blocks in memory, more in a sparse spill file under Config.SpillDir, and
// blocks written whole are staged to the blob store at once (they need no
// merge): a block completed in memory on a goroutine of its own, up to two
// per handle, while the writer sends the next one; a failure there fails
// the next write and the flush. Nothing is visible to anyone else until Flush, Fsync or Close
// (or, for a handle opened with OpenOptions.VisibleWrites, until a reader
// arrives, in this process or another: visible.go), which
// commit: read the latest committed block list, merge the dirty
// ranges of each partially written block onto the latest content of that
// block, stage, and CommitBlocks with If-Match on the list's ETag (retried
// on ErrPreconditionFailed). Ranges the writer did not touch keep whatever
// the latest version has, so a FUSE write and a REST Put Range on different
// ranges of one file both survive, across processes too. Errors surface from
// Flush / Fsync / Close. A handle reads its own unflushed writes (a read
// overlapping staged data commits it first).
//
// Reads check byte-range locks (locks.Tx.CheckIO) and read the file's
// size and version in one read transaction, then read the blob. A handle
// keeps one open blob stream (a 16 MiB window of the version it was opened
// on) and reuses it while reads stay sequential and the version is the
// same, so sequential reads do not re-open the blob per request; any commit
// changes the version and the next read re-opens.
//
// # Commits and crashes
//
// Commits of one file are serialised: in-process by a mutex, across
// processes by an intent row in ns_intents (file, owner session, state).
// The intent is written before the blob commit (with the ETag it
// builds on, the new size, and the entry's fields — attributes, times,
// content headers, metadata — as they are and as the commit will leave
// them) and deleted in the transaction that updates the namespace after it.
// A commit that meets another owner's intent waits (backoff 1 to 50 ms)
// while that owner is alive, by the lock table's one liveness decision
// (locks/doc.go, "Sessions": a session row whose heartbeat deadline has
// not passed by the database's clock and, on the owner's own host, a held
// flock), so a commit in progress in another process, on this host or
// another, is never adopted under it. An intent whose owner is dead — no
// session row, heartbeat expired, or flock free — is resolved by the next
// process that meets it (and by New at startup, which leaves live owners'
// intents alone): if the blob's ETag moved past the
// recorded one the commit happened and the namespace adopts it whole (new
// size, and each recorded field as the commit would have left it unless a
// later change touched it since; new version), otherwise the intent is
// dropped. So after a crash every file is one complete version — content,
// size, properties, metadata, attributes and times — and every acknowledged write
// (committed namespace) is there. The same settling runs at once when a
// blob commit reports an error (its reply may have been lost after the
// store committed) or the namespace update after it fails: the write is
// then adopted and reported as done, or dropped and reported as failed —
// never half-visible. The namespace update after a blob commit ignores the
// caller's cancellation. (Durability of a commit against power loss is the
// database's: WAL with synchronous=NORMAL, as locks opens it; a REST Put
// Range, acknowledged durable, also syncs the log after its commit with
// one fsync shared by every range committed meanwhile, internal/walsync.) Deleted files' blobs are queued in ns_gc
// in the deleting transaction and removed by a background collector after
// the commit (deletes never wait for blob I/O); New and Close collect
// leftovers. Staged blocks are invisible until committed; a handle that
// stays open with unflushed whole blocks for longer than the blob store's
// garbage-collection age would lose them (the commit then fails with
// blobstore.ErrNotFound, surfacing at Flush/Close).
//
// List Ranges answers from a per-file set of written ranges kept in the
// namespace row and updated in the commit transaction (ranges.go), not from
// the block layout, so it is exact to the byte. The same column keeps a
// bounded log of what each commit wrote (writelog.go), which a share
// snapshot copies with the row: a range diff is the log's items since the
// previous snapshot's last one.
//
// SQL statements are prepared once per lock-table connection (SQLite
// parsing costs more than most of the statements themselves), and run
// without the caller's cancellation (a cancellable context costs the driver
// a watcher goroutine per statement; statements inside a transaction never
// wait). A path walk (resolve) also collects the entry's stored path, so a
// REST reply needs no second walk up the parents. Get File Properties (Stat)
// is one statement run alone: the path's rows joined by (parent, key) from
// the share to the entry, with the file's lock-table row, which is all that
// decides a read of properties (locks.CheckRESTRow); paths it finds no row
// for walk (statpath.go).
//
// Each column a query returns costs the driver about a third of a
// microsecond per row, a sizeable part of a point query, so the hot
// queries read what their caller needs: the mount's lookups, getattr and
// listings the stat attributes (statCols: LookupStat, GetAttr, ReadDir),
// unlink and rename through the mount what they change (refCols), the lock
// table's decisions the four handle columns its rules read. Entries read so
// are partial, and save refuses them. An update of an entry read in the
// same transaction is guarded by the version it was read at, so the new
// version is known without a RETURNING clause (updateEntry).
//
// # Schema
//
// The namespace tables carry a version (ns_seq row "schema",
// SchemaVersion), checked by New through the engine's sqlmeta.Ensure (the
// part schemaPart, core.go): a database
// from another build gets a *locks.SchemaError naming the data directory
// and both versions, never a raw SQL error — unless numbered migrations
// (core.go, migrations) lead from its version to this build's: they run in
// order in the transaction that checks the version. Bump SchemaVersion with
// every change to the schema, with a migration from the previous version.
// Migration 6 replaced the intents' pid and process start time (which only
// one host could judge) by the owner session: an intent written before it
// names no owner and counts as a dead owner's.
//
// # Releasing handles
//
// A FUSE RELEASE arrives after close(2) has returned and nobody waits for
// it, while the application's next request — the next file's CREATE, in a
// copy or an untar — is already on its way. Handle.Release therefore
// commits the staged writes and detaches the handle at once, but queues
// its lock-table close: update runs the queued closes first inside the
// next write transaction of this process (which then decides with them
// closed: a conflicting open right after a close succeeds), view settles
// them before a lock check (REST, List Handles), and a timer closes them
// on their own after releaseDelay (1 ms). So a small file costs three
// write transactions (create, flush, unlink), not four. Other processes,
// and this process's lookups and own-handle I/O checks (peek), may see a
// released handle for up to that delay, as if the RELEASE had come that
// much later. Handles that ever asked for a byte-range lock close at once,
// so no check ever meets a released handle's locks.
//
// Lookups, getattr and the byte-range checks of a handle's own reads and
// writes run as locks.Table.Peek: on the writer connection when it is idle,
// whose page cache survives our own commits (readers re-read every page
// after any commit). A lookup is one statement and runs as
// locks.Table.PeekStatement, with no transaction around it.
//
// # Lookups and actions in separate transactions
//
// A REST call that must do blob I/O between finding a file and changing it
// (Create File over an existing file, Copy File, a resizing Set File
// Properties) cannot do both in one transaction. The acting transaction
// (the commit's check) verifies that the path still names the file id the
// lookup found; if a rename or delete came in between (errPathMoved, or the
// id is gone) the whole call starts over, so it answers as a call made just
// after the race, never a spurious 404 while the parent exists. After
// maxLookupRetries lost races in a row it answers ErrSharingViolation (the
// path is busy). Put Range and Put Range From URL stage their body for the
// file id they found and cannot start over (the body is consumed): they
// write that file even if it was renamed meanwhile, like an SMB handle, and
// answer 404 only if it was deleted.
//
// # Share state and snapshots
//
// An entry's extended attributes (EA: SMB clients set them at create and
// through SetattrRequest.EAs; REST and the mount do not see them) are kept
// with its other stored properties in the props column, so snapshots,
// renames and deletes take them along; at most MaxEASize bytes per entry.
// So is a file's allocation size (alloc.go: OpenEntryRequest.AllocationSize,
// SetattrRequest.AllocationSize; props key "al", absent in rows written
// before it, which read as 0, so no schema migration), kept apart from the
// size as MS-FSA 2.1.5.15.1 keeps Stream.AllocationSize: an allocation
// below the size cuts the size to it; Attr.Allocated, what SMB reports, is
// the larger of the stored allocation and the size in whole ClusterSize
// clusters, so a write past the allocation grows it without rewriting the
// props column. FileREST reports no allocation, and the mount's stat
// (statCols) reads no props: st_blocks stays the size's.
//
// A share's lease, stored access policies and permissions are rows of
// ns_share_state (sharestate.go), deleted with the share; the lease rules
// are locks'.
//
// Share snapshots (snapshots.go) copy the share's rows into
// ns_snap_entries in one transaction and give each blob-backed file's
// content a second key without passing data through blobshare (the blob
// store's optional blobstore.Cloner: hard links in blobstore/local, Copy
// Blob within the account in blobstore/azure; a store without it cannot
// snapshot shares with blob-backed files). Point in time under writes by
// copy on write: pending clones (ns_snap_pending) are recorded with the
// rows, and a commit about to replace a file's blob clones the version it
// replaces first; the blob collector keeps keys with pending clones.
//
// # Coherence with REST
//
// Subscribe delivers every change committed through this FileSystem (file
// id, parent, what changed) so the FUSE layer can invalidate kernel caches;
// changes made by another process are seen through Attr.Version, which the
// binding compares at open to decide whether to keep the page cache.
//
// # Change notification
//
// SMB's CHANGE_NOTIFY must hear of a change whoever makes it — a REST
// Create File, a mount's mv, `blobshare session`, another serve on the
// same data directory — so fs records it where it makes it (notify.go),
// as MS-FSA's FsRtlNotifyFullReportChange does: in the transaction of the
// change, a row per watch in ns_notices (action, MS-FSCC filter bits, the
// name relative to the watched directory). Only watched directories cost
// anything: a front end registers a watch (WatchDir, a row of ns_watches:
// directory, WATCH_TREE, owner) and, while no process watches anything, a
// change reads a counter the processes share in a mapped file
// (blobshare.watches, like the staged-writes hint), no more — a completed
// delete one empty index (RemoveFile runs under locks, without the
// FileSystem). A WATCH_TREE watch covers descendants: the
// change's parent chain (one recursive statement) finds it and names the
// change by its path. Creates, renames and attribute and content changes
// are recorded from the Changes an update returns (update); removals
// where the row goes, RemoveFile and removeTree, which every delete
// passes whoever completes it (REST, the mount's unlink, a
// delete-on-close, a dead owner's reaped handle); a watched directory
// that becomes delete pending is told so (NoticeDeletePending). The
// watch's FileSystem takes its rows (TakeNotices, deleting them); its own
// commits wake it (NoticesChanged), other processes' are found by a poll
// (HasNotices, one read statement). A watch ends with Unwatch; a dead
// owner's watches and rows are dropped by the next WatchDir and at New.
// The tables are the namespace's, not the lock table's, because the
// change and what a row needs (names and parents) are the namespace's.
//
// # SMB clients' oplocks and leases (breaks.go)
//
// Open (the mount) and OpenByPath (`session`) first break the SMB clients'
// oplocks and leases the open meets, as a local open on the file server
// would, and wait for the acknowledgments (at most the 35 s break
// timeout), outside any transaction: the decision is package locks'
// (Tx.DecideCache with RequesterMount or RequesterSession), the
// notifications go through the lock table's outbox to the process that
// holds the client's connection, and the open then sees what the client
// flushed before it acknowledged. Without any caching anywhere
// (locks.Table.AnyCachingPeek) it costs one read statement. A write, a
// cleared range or a size change through a handle of the mount or session
// (and the mount's truncate(2) by path) breaks every SMB client's Read
// caching on the file to none without waiting, as a write through another
// open does (MS-FSA 2.1.4.12); with nothing cached on the file it costs
// one read statement (locks.Table.WriteBreakable). SMB and FileREST
// handles are left to their front ends, which break on their own writes.
//
// Directory leases (dirlease.go): every transaction that changes a
// directory's entries — the same changes CHANGE_NOTIFY reports, from the
// same places (update's changes, RemoveFile, removeTree) — breaks the
// directory's Read-caching leases in that transaction
// (locks.Tx.BreakDirCaching), not waiting, except the lease named by the
// parent lease key the SMB server put in the context. Like notices it is
// gated by a hint shared by the processes (blobshare.dirleases: the
// directory opens the SMB server may have granted a lease, counted
// before the grant), so that without directory leases a change costs no
// statement; RemoveFile, which has no FileSystem, always pays one indexed
// lookup of lk_smbleases, as it pays anyWatch's.
//
// # Key locks
//
// A namespace decision that checks and then writes holds the key locks of
// what it decides on (locks.Tx.LockKeys; keys are entry ids, the same
// locks the lock table's decisions take, locks/doc.go "Key locks"), so it
// is exact without SQLite's database-wide write lock:
//
//   - create (file, directory, share, and an SMB open that creates): the
//     parent, whose key guards the names in it;
//   - unlink, rmdir, Delete File, Delete Directory: the parent and the
//     entry; a directory's key also guards "directory empty", since every
//     create in it locks it;
//   - rename (mount, REST, through a handle): both parents, the source and
//     a replaced destination; a directory moved into another directory
//     also locks every directory above the target, on which "not into
//     itself" is decided (a concurrent move that changes that chain locks
//     a directory on it);
//   - a change of one entry (setattr, properties, metadata, attributes, a
//     content commit, resolving an intent, dispose, open by id): the
//     entry; a share's changes, lease, permissions, snapshots and
//     soft-delete: the share (and the root, whose names are the shares);
//   - removeTree: every entry it removes, a directory's children in one
//     call.
//
// Order and re-check: keys found by one lookup are locked in one call
// (ascending, once each): the path's parent and entry (resolveLocked), a
// name's directory and entry (lockFound), an entry and its parent
// (entryLocked), a directory's ancestors (lockAncestors); the mount's
// rename locks both parents before it reads the names in them. When
// LockKeys says what was read before may be stale, the lookup runs again
// and must find the ids it locked; if a name now leads elsewhere, the new
// ids are locked and it runs again (at most maxRelocks times, then
// errPathMoved). On SQLite outside tests nothing is ever stale, so no
// decision gains a statement; in test runs every newly taken key asks for
// the re-check, so those paths run in the default suite. Reads (view,
// peek) lock nothing.
//
// The audit: the write helpers — insert (the parent), updateEntry (the
// entry), touchDir and touchLiveDir, hasChildren and hasLiveChildren in a
// write transaction, removeTree, removeFile, storeState and dropState (the
// share) — check their key with locks.Tx.AuditKey, so a decision that
// forgets a lock fails go test ./fs with locks.ErrKeyNotLocked naming the
// file and the call site. TestLockAudit leaves each decision's locks out in
// turn (Config.skipKeyLock) and sees the tests that exercise it fail.
//
// Not yet keyed: RemoveFile, run by locks when a delete completes, deletes
// unlinked ancestors left empty without their keys (it runs on the
// connection, below the transaction), and a rename through a handle checks
// "no open handle below the directory" over the subtree without locking
// it. Both are exact on SQLite; an engine without a global write lock
// needs them keyed.
//
// # Concurrency
//
// All methods are safe for concurrent use. SQLite serialises writers (short
// IMMEDIATE transactions, busy retry in locks), but decisions rely on their
// key locks for exactness (Key locks, above); blob I/O never happens
// inside a database transaction. A Handle's methods are serialised by its
// own mutex; I/O on different handles runs in parallel.
//
// # Traps
//
//   - Never hold a database transaction across blob I/O: other processes
//     would wait on the SQLite write lock for a network round trip.
//   - locks' Update may run its function more than once: no side effects
//     inside (changes are collected and notified after the commit).
//   - A handle whose file was force-closed by Force Close Handles gets
//     locks.ErrHandleClosed on every call; its unflushed writes are lost.
package fs
