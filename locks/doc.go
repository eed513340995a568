// Package locks is blobshare's lock table: the one place that decides, as
// Azure Files and Windows do, whether an SMB-style open, a FileREST call, a
// byte-range access or a file lease may proceed. FUSE (package fs/fusefs),
// the REST front end (package filerest) and `blobshare session` all ask it and
// map its typed outcome exactly once (errno, HTTP status + x-ms-error-code,
// NT status). The rules are those of ../shared/spec/locking.md; section
// numbers below (§1.2, A12 ...) refer to it.
//
// # Concepts
//
//   - A Handle is one open: an Access mask, a ShareMode, an optional
//     delete-on-close flag, the Owner that holds it. Only the data bits
//     (read, execute, write, append, delete) take part in sharing; an open
//     without one is attribute-only and blocks nothing except REST Delete
//     File (A12).
//   - An Owner is a process instance: one Table, one session. Handles die
//     with their owner (see "Owners and crashes" and "Sessions").
//   - A REST call is not a handle: CheckREST checks it once, one direction
//     only (its access against the handles' share modes), and leaves
//     nothing behind. Delete File is refused by any handle (A4); Lease
//     acquire is checked both ways (§1.5, A3).
//   - A file lease is the one long-lived REST object. While Leased it
//     refuses new opens that ask for write, append or delete access,
//     whatever their share mode (A14), and it makes write-type REST calls
//     require its id (§4.3).
//   - Delete-pending (§2): a TRUE disposition through a handle with DELETE
//     access marks the file at once; a delete-on-close handle marks it when
//     it closes (A8); new opens and every REST call then fail with
//     ErrDeletePending; when the last handle goes, Options.Remove runs in
//     the same transaction and every trace of the file is forgotten.
//   - Byte-range locks (§3): SMB locks (Lock/Unlock) follow MS-FSA exactly —
//     unlock must name an exact range, no overlapping exclusive lock even
//     for the same handle, zero-length accesses never conflict, a last byte
//     past 2^64-1 is ErrInvalidLockRange. Zero-length lock requests are
//     granted (MS-FSA 2.1.5.8, locking.md A15) and conflict with nothing;
//     zero-length POSIX requests are a caller's bug. POSIX locks (SetPOSIXLock, for
//     fcntl through FUSE) use the same conflict table against everyone
//     else, while among one POSIX owner — (Table owner, lock key) — a new
//     lock replaces, an unlock splits, and adjacent pieces of the same kind
//     merge. flock(2) locks (Flock) are one per handle and conflict only
//     with other handles' flocks, as between open file descriptions on a
//     local disk; to REST and SMB they are whole-file byte-range locks
//     (the Linux SMB client sends flock as one), to POSIX requesters
//     (CheckIOKey, SetPOSIXLock) they are advisory.
//
// # Check order
//
// CheckREST answers, first match wins: ErrDeletePending (every operation,
// Delete File included, A9); ErrSharingViolation; lease errors
// (*LeaseError, 412); ErrReadOnly (our placement, A5: after the lease,
// before byte ranges); ErrLockConflict. The caller answers 404 before
// calling when the path does not exist. OpenHandle: ErrDeletePending, then
// the ReadOnly attribute (ErrReadOnly for Write or Append access,
// ErrCannotDelete for DeleteOnClose; MS-FSA 2.1.5.1.2.1), then
// ErrSharingViolation from handles or the lease.
//
// # Decisions apart from storage
//
// rules.go holds pure functions that decide from a fileState (the file's
// handles, pending mark, lease and, when needed, byte-range locks) and a
// request. tx.go loads that state with one or two SQL statements, calls the
// rule, and stores the result. No rule reads SQL; no SQL decides. The
// reference model in lockstest/model.go re-derives every rule independently and
// a randomized test compares the two.
//
// A read of a file's properties (OpGetProperties) and a listing (OpList)
// need no share access and check no byte-range lock, so only the file's
// lk_files row can refuse them. filerow.go lets a caller read that row in a
// statement of its own (FileRowJoin: fs reads it with the path's rows) and
// decide with the same rule (CheckRESTRow); TestCheckRESTRow compares it
// with the rule given the handles and locks, state by state.
//
// Timed leases — a share's lease, which lasts 15 to 60 seconds or
// forever, expires and breaks over a period — are not here: package lease
// holds the one timed-lease machine for shares, containers and blobs; fs
// stores a share's lease with the share and asks Table.NewLeaseID for the
// id of an acquire without a proposed one.
//
// # SMB caching
//
// caching.go holds the oplock and lease decision as a pure rule:
// DecideCaching takes a file's caches (one CacheHolder per lease, one per
// other open with its oplock level, OplockNone for an uncached open) and a
// request — an SMB open or operation with its lease key or oplock, a
// FileREST operation, a mount or session open — and returns the breaks
// (from → to, acknowledgment required or not), whether the requester must
// wait, and what an SMB open is granted. REST follows Azure's table
// (../shared/spec/smb-leases.md §1.2, §1.3), SMB MS-FSA 2.1.4.12 and
// 2.1.5.18; a client never breaks its own lease; a holder already
// breaking gets no second break: the requester waits and decides again,
// unless it would not wait for its own break and the outstanding one
// already takes all it needs gone. A stat open is told by the whole
// access mask (CacheRequest.Mask; statOpen); an open of a delete-pending
// file breaks nothing (it fails first). The model in caching_model_test.go
// re-derives it from literal tables. WriteBreakable (writecache.go) is
// the one-statement test a writer outside SMB (the mount, session) makes
// before deciding a write's breaks.
//
// smbcache.go stores it (schema 4), beside the handles and keyed like
// them: lk_opcache holds each cached SMB open's oplock level (255 and a
// lease reference for an open of a lease) and its break in progress
// (breaking, break-to, deadline); lk_smbleases one row per (ClientGuid,
// lease key) with state, epoch, version, parent key, owner and its break
// in progress; lk_breaks is the outbox: one row per break to send,
// addressed to the holder's owner (process). Tx.DecideCache takes the
// file's key lock, completes breaks whose deadline passed to none
// (MS-SMB2 3.3.6.4/3.3.6.5; "whoever notices it": any decision on the
// file), forgets rows of closed opens and of leases without opens, runs
// DecideCaching, applies each break — at once when it needs no
// acknowledgment (R or level II to none), else marking the holder
// breaking with a deadline (Options.Now + CacheCall.BreakTimeout, 35 s
// by default) — writes the outbox rows, and, for an SMB open already in
// the table (CacheRequest.Handle), records the grant: all in one
// transaction. A decision with Wait grants nothing: the caller commits,
// waits outside any write transaction (CacheChanges: a channel closed at
// the next caching change this process commits, plus a poll for other
// processes' changes and the deadline) and decides again. The holder's
// process takes its outbox rows (Tx.TakeBreaks) and sends the
// notifications; AckOplockBreak and AckLeaseBreak complete a break
// (MS-SMB2 3.3.5.22). AnyCaching is the cheap test callers use to skip
// the decision when nothing anywhere is cached.
//
// # Directory leases
//
// dirlease.go. A directory's lease is stored and broken like a file's,
// with its own two rules beside the file rules: the grant
// (grantDirCaching, reached through DecideCaching with Directory: Read
// and Handle caching at most, never Write, never an oplock — MS-FSA
// 2.1.5.18) and the parent rule DecideDirChange (MS-SMB2 3.3.1.4: a child
// added, deleted or renamed, or its timestamps, attributes or size
// updated, revokes the directory's Read caching — "The object store is
// not required to wait for acknowledgment"): every Read-caching lease of
// the directory breaks to none (acknowledged when it held Handle), except
// the lease whose key is the changing open's parent lease key of the same
// client (MS-FSA 2.1.4.12.2 with PARENT_OBJECT), carried in the
// transaction's context (WithParentLease). The namespace calls
// Tx.BreakDirCaching (or BreakDirCachingConn from its Remove hook, which
// has only the connection: those breaks reach an SMB server of this
// process at its next outbox poll, not at commit) in the transaction
// that changes the directory, so a change from any protocol and process
// breaks it and nothing waits. Handle caching on a directory breaks by
// the file rules (a conflicting open, a REST delete). A lease already
// breaking (an outstanding Handle break to R) is not broken again by a
// change: MS-SMB2 3.3.5.22.2 accepts only an acknowledgment within the
// announced state, so the second break would need a queue of its own —
// not done; such a lease keeps R until its next change after the
// acknowledgment.
//
// # Durable opens
//
// durable.go (schema 5): an SMB durable open (MS-SMB2 3.3.5.9.6,
// 3.3.5.9.10) is a handle like any other — the serving process's owner
// holds it, with its share mode, byte-range locks and caching — plus a
// row of lk_durable: version, CreateGuid, ClientGuid, app instance id,
// timeout, and, while its client is away, when it was disconnected and
// when it expires (MakeDurable, DisconnectDurable, ReconnectDurable,
// ForgetDurable, DurableOf). So a disconnected open keeps blocking every
// protocol of every process exactly as when connected, any process can
// see that it is durable and disconnected, and it dies with its owner
// session like any handle (reaping closes it: durable, not persistent).
// ReconnectDurable accepts only the owner's own disconnected open (else
// ErrHandleClosed: the reconnect names nothing), once. DecideCache treats
// a disconnected open as MS-SMB2 3.3.4.6/3.3.4.7 and Windows do: a break
// that needs an acknowledgment cannot reach it, so when the decision
// would send it one, or would wait on one it was sent before its
// connection dropped, the open is closed in the deciding transaction
// (closeRow: its locks go, delete-on-close runs) and the decision is
// taken again without it; a break that needs none (level II or R to none)
// is applied as to any holder and the open stays. The expiry is the
// serving process's (its scavenger closes the handle at the deadline);
// closeRow (Force Close, reaping) drops the row with the handle.
//
// Sharing and caching are two decisions, not one: fs's open runs the
// sharing check (decideOpen) and smb runs DecideCache before it (breaking
// Handle caching of conflicting holders, so a handle the client only
// caches is closed before the sharing check, MS-SMB2 3.3.1.4) and after it
// (the grant, which sees opens that raced in between and breaks them
// again if needed). Folding the cache into loadState and decideOpen, so
// one transaction decides both, is the next step (smb-leases.md §4.2).
//
// # Storage and transactions
//
// The machinery below — opening the file, the writer and reader
// connections, BEGIN IMMEDIATE and the retry contract, Peek, checkpoints,
// the classification of driver errors, migrations and the owners' flock
// files — is the metadata engine's, package meta/sqlmeta; the Table runs
// its statements (tx.go) and decisions in the engine's transactions and
// adds what is the lock table's: the owner session's fence before each
// decision, handle ids reserved in blocks, the reaping of dead owners met
// in a View.
//
// One SQLite file (modernc.org/sqlite, no cgo) holds the lock tables
// (prefixed lk_) and the namespace of package fs, which runs its own
// statements through Tx.SQL inside Update and View, so a path lookup, a
// check and a namespace change commit together. The
// database runs in WAL mode, synchronous=NORMAL (durable against a process
// crash; a power loss may lose the last transactions), busy_timeout 5 s.
// Checkpoints — copying the log back into the database file, with two
// fsyncs — run on a goroutine of each Table (sqlmeta's checkpoint.go), after 64
// commits of the process or 250 ms after its last one, so no request waits
// for them; a connection checkpoints inline only past 8,000 log pages,
// when that goroutine has fallen behind.
//
// Update is one BEGIN IMMEDIATE transaction; writers of this process queue
// on a mutex in front of SQLite, writers of other processes on SQLite's
// write lock, and Update retries SQLITE_BUSY with jittered backoff until
// its context ends. fn may therefore run more than once and must have no
// side effects outside the transaction. Update is not reentrant: never
// call Update or View on the same Table from inside fn. View is a plain
// read transaction (a snapshot) and may run concurrently with everything.
// Peek is a View for a few point reads: when no write of this process is
// running it borrows the writer connection, because SQLite drops a
// connection's whole page cache whenever another connection has committed
// — a reader after any write re-reads every page it touches, while the
// writer keeps the pages of its own writes. A write that arrives meanwhile
// waits for the Peek (so Peek is for short work only); a Peek that finds a
// write running takes a reader and never waits. PeekStatement is a Peek of
// one read statement run outside a transaction (SQLite gives a lone
// statement its own snapshot), without the BEGIN and ROLLBACK around it.
//
// That serialisation is SQLite's, and decisions no longer rely on it for
// exactness: each holds the key lock of the file it decides about (next
// section).
//
// The engine runs BEGIN, COMMIT and ROLLBACK itself on connections it holds
// (one writer, up to seven readers), each with its statements prepared once,
// instead of database/sql transactions: a transaction then costs about half
// as much (BenchmarkSQLiteFloor against BenchmarkSQLiteTx), and the writer's
// page cache survives from one write to the next.
//
// lk_handles is a WITHOUT ROWID table keyed by (file, id): every decision
// reads one file's handles with one range scan, and an open or a close
// writes one b-tree page, so the cost does not grow with handles on other
// files. The cost is that a lookup by id alone is a scan; the Table keeps
// an in-memory id→file hint for its own handles (stale entries are
// harmless: the row is simply absent), so only other owners' ids (Force
// Close Handles, Handle) scan. Two fast paths keep the hot calls to one
// statement: closing an own handle that is not delete-on-close is a single
// DELETE guarded by "file not delete-pending" (anything else takes the full
// path), and CheckIO through an own handle reads the handle and the file's
// byte-range locks in one statement and decides from the locks alone unless
// a conflict needs its holders' owners probed. Handle ids are never reused:
// each Table reserves blocks of 1024 ids in lk_meta; ids are unique across
// owners but not ordered by time across owners.
//
// The lock tables carry a schema version (lk_meta row "schema",
// SchemaVersion). Open refuses a database whose lock tables exist with
// another version — or none: a database from before versioning — with a
// *SchemaError (errors.Is ErrIncompatibleSchema) naming the data directory
// and both versions, before any statement could fail on a missing column —
// unless numbered migrations (sqlmeta.Migration: one version each) lead
// from the version found to this build's: they run in order in the
// transaction that checks the version. The mechanism is the engine's
// (sqlmeta.Ensure, one Part per part of the schema: schemaPart here, the
// namespace's in package fs). Bump SchemaVersion with every change to the schema, with a
// migration from the previous version. Migration 3 added the session
// columns of lk_owners (host, program, expires), 4 the caching tables, 5
// lk_durable.
//
// # Key locks
//
// A decision is exact because it holds its file's key lock, not because
// SQLite lets one writer in at a time. Every write decision takes the key
// of the file it decides about through Tx.LockKeys (keylock.go) before it
// reads that file's state, and reads it only then: OpenHandle (not for a
// Created file: a new id nobody else can know), CloseHandle and CloseQuiet
// (their one-statement fast path too), ForceClose, Dispose, UnlinkOpen,
// Lock, Unlock, SetPOSIXLock, ReleasePOSIXLocks, Flock, Lease, Forget,
// CheckREST/CheckRESTLease and CheckIO inside an Update, DecideCache and
// the durable-open calls (MakeDurable, DisconnectDurable,
// ReconnectDurable, ForgetDurable), and reapOwner
// (every file of the dead owner in one call; Table.Close reaps its own).
// Keys are FileIDs, the entry ids of package fs (files and directories in
// one space), so the namespace's locks (fs/doc.go) and these are the same
// locks, and a transaction holds them until it ends. The session decisions
// ("Sessions") lock an owner's key (ownerKey: a hash of the owner id with
// the top bit set, a space no entry id reaches): judging an owner in a
// write transaction, renewing its deadline, and reaping it (with the keys
// of its handles' files).
//
//   - Order: one LockKeys call takes its keys in ascending order, each once
//     (a key held already costs nothing). A decision that learns a key
//     from what it read under another — a dead owner's files met while
//     deciding, the entry a locked directory names — calls again, possibly
//     below keys it holds; on an engine with real locks two such
//     transactions can deadlock, which the engine detects (PostgreSQL:
//     40P01) and Update retries.
//   - Re-check after lock: what was read before the lock may have changed
//     by the time it is granted. A decision through a handle reads the
//     handle first, to learn its file (a handle's file never changes,
//     renames keep ids); after locking, closeRow counts the row its DELETE
//     removed and Dispose, Lock, SetPOSIXLock and Flock look for the handle
//     in the state they load, and a handle closed meanwhile answers
//     ErrHandleClosed, as if that close came first. LockKeys tells callers
//     that read before it whether to read again (fs re-resolves the path).
//   - Reads lock nothing: a View is one snapshot, and CheckREST or CheckIO
//     in it is linearised at that snapshot, as before.
//
// On SQLite LockKeys excludes nothing: BEGIN IMMEDIATE and the process's
// writer mutex already keep every other writer out of the transaction, so
// the lock has nothing to add and a built program pays a branch per decision
// for it. But the rules above are what makes the decisions exact, so an
// engine without a database-wide write lock — PostgreSQL at READ COMMITTED,
// where the unlocked read-check-write granted 2,145 conflicting share-none
// opens in 3 s (../shared/spec/meta-engine.md §4.1) — puts
// pg_advisory_xact_lock(key) behind LockKeys (one statement per key, each
// before the reads it protects) and changes no decision.
//
// The audit keeps that true. In test runs (testing.Testing: a go test binary
// of any package, never a built program; and not a benchmark run, go test
// -bench as ./bench runs it, which measures a built program's path:
// BLOBSHARE_BENCH_AUDIT=1 turns the audit on in this package's benchmarks to
// measure it) the Table records the keys each write transaction holds, and
// every read-for-update checks that its key is among them: loadState (every
// decision's read), closeRow, closeOwn, storeFile, insertLock, forget, the
// deletes of Unlock, ReleasePOSIXLocks and Flock, and the namespace's reads
// and writes through Tx.AuditKey. A missing key fails the decision with
// ErrKeyNotLocked naming the file and the call site, logged at Error, and
// locks' test helper (openTable) fails a test whose Table counted one where
// an error was swallowed: a decision that forgets its lock fails the default
// go test ./locks ./fs. TestLockAudit shows the audit bites: for each of the
// decisions above it runs spec tests again with that decision's lock left
// out (Options.skipKeyLock) and sees them fail with the audit's error. In
// test runs LockKeys also asks for the re-check whenever it takes a new key,
// so the re-check paths run in the default suite though SQLite never needs
// them.
//
// # Owners and crashes
//
// Each Table creates <db>.owners/<owner> and holds an exclusive flock(2) on
// it for its lifetime; the kernel drops it the moment the process dies,
// SIGKILL included. Another Table probes an owner with LOCK_EX|LOCK_NB:
// getting the lock (or finding no file) means the owner's process is gone.
// That probe is one half of the liveness decision (next section). Owners
// are judged at Open (ReapDeadOwners), whenever a refusal names a handle of
// another owner, and whenever Handles or AllHandles (List Handles, Force
// Close Handles, rename-replace) meet another owner's handle — a listing
// never reports a dead process's handles, even as the first request after
// the crash: the dead owner's handles are closed inside the current
// transaction — byte-range locks go, delete-on-close handles mark their
// files, files left pending with no handles are removed through
// Options.Remove — and the decision is taken again. A View cannot write, so
// it reaps after fn returns and runs fn again. A crashed holder therefore
// never blocks anyone, and its cleanup is atomic with the request that
// found it. flock locks belong to open file descriptions, so two Tables in
// one process see each other's flocks held; a probe that fails for another
// reason counts as alive (never reap on doubt).
//
// # Sessions
//
// Each Table is an owner session: a row of lk_owners (owner id, host, pid,
// program, started, and expires: a heartbeat deadline in nanoseconds on the
// database's clock), written at Open before any handle of the owner, and
// renewed every Options.HeartbeatInterval (2 s) to SessionExpiry (10 s)
// past the database's clock by a goroutine the Table starts at Open and
// stops and waits for at Close. On SQLite the database's clock is the
// system clock read inside the write transaction that sets or judges a
// deadline (Options.SessionClock replaces it in tests).
//
// Whether an owner is alive is one decision (judgeOwner, session.go), the
// same for the reaper, for fs's commit intents (Tx.OwnerAlive) and for
// `blobshare status` (OwnerState.Alive and Cause):
//
//   - no session row: dead ("not registered": closed, reaped, or a handle
//     written by a fenced owner after its reaping);
//   - its deadline has passed by the database's clock: dead ("heartbeat
//     expired"), wherever it runs;
//   - on this host (the row's host is this machine's name, or empty for a
//     row from before sessions), its flock free: dead ("flock free");
//   - otherwise alive; a probe that fails counts as alive.
//
// Both signals are needed (../shared/spec/meta-engine.md §1 A3, §3.4): the
// flock tells at once that a killed process is gone, so "a killed
// process's handles are reaped at once" still holds, as the first
// conflicting request after the kill — but only a process of the same
// kernel can probe it, and a frozen process (SIGSTOP, a hung host) or one
// cut off from the database keeps it held. The heartbeat deadline tells
// every host, and bounds a frozen or partitioned owner by the expiry; it
// alone could not reap a killed process before the expiry. A row from
// before sessions (schema 2, migrated) has no deadline (expires 0) and is
// judged by its flock alone, as its build judged it.
//
// Fencing. A session found expired or reaped stops deciding: every write
// transaction of the Table (Update: every decision) fails with
// ErrSessionLost and changes nothing, and the Table registers as a new
// owner — a new owner id, flock and row — in a transaction that reaps the
// old owner's handles if nobody has yet: they are gone, as after a network
// drop (their ids answer ErrHandleClosed). The old row is never renewed
// (the renewal is "UPDATE … WHERE expires > now"), so a reaped owner never
// comes back. The Table finds out in two ways. The heartbeat's renewal
// touches no row: the session is marked lost and the next decision fails.
// And each write transaction, after BEGIN — under SQLite's write lock, so
// no reaper can commit between the check and the decision — compares the
// session clock with a local deadline, one heartbeat interval before the
// stored one, counted from when the last successful renewal was sent; past
// it (the heartbeat lagged, or the process was frozen) the transaction
// renews in itself, or finds the session expired or reaped and fails. So a
// process frozen past its expiry and then resumed applies no decision: its
// first one fails with ErrSessionLost and the next one, as a new owner,
// decides again (TestSessionFrozenProcess, with a real SIGSTOPped child).
// The interval's margin covers wall-clock steps up to one interval between
// the deadline this process keeps (monotonic) and the one others judge
// (wall clock); a larger step could let a decision through after a reaping,
// and the handle it wrote belongs to an owner without a row, which the
// next owner to meet it reaps. That check is exact on SQLite because of
// its write lock; an engine without one also guards each write of a handle
// with the owner's row (EXISTS … WHERE owner = me AND expires > now), as
// ../shared/spec/meta-engine.md §3.4 has it. Reads (View, Peek) are not
// fenced: they decide nothing. A commit of fs in flight when its session is lost fails
// at its next transaction; its intent, the old owner's, is resolved by
// whoever meets it.
//
// Closing a Table stops the heartbeat before it deregisters, and closes
// even a lost session's handles. A frozen owner holding SQLite's write lock
// blocks every writer until it runs again (busy, then Update's retries):
// on SQLite nobody can reap it meanwhile, and nothing else can change
// either.
//
// # Traps
//
//   - Handle ids are per database, not per owner: CloseHandle, Dispose,
//     Lock, Flock ... refuse another owner's handle with ErrHandleClosed;
//     only ForceClose reaches across owners.
//   - ForceClose runs delete-on-close like a close (Azure says a
//     force-closed delete-on-close handle "might not" delete; we do).
//   - Clearing the disposition (Dispose false) does not cancel a
//     delete-on-close handle: its close marks the file again (Win32).
//   - Lease ids compare case-insensitively (they are GUIDs). Acquire with
//     the current id while Leased is idempotent and does not re-check
//     handles. Release of a Broken lease with a wrong id answers
//     LeaseIdMismatchWithLeaseOperation; change on a Broken lease answers
//     LeaseNotPresentWithLeaseOperation.
//   - Facts.ReadOnly is the caller's statement: clear it when the request
//     carries x-ms-file-rename-ignore-readonly / x-ms-file-copy-ignore-readonly
//     or itself removes the ReadOnly attribute.
//   - The §1.2 detail "Read is added to the share mode of an opener that
//     cannot write to the parent" is not modelled: blobshare has no ACLs.
package locks
