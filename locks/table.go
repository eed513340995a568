package locks

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/meta"
	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// Table is the lock table of one process (one owner) over a SQLite database
// shared with other processes and with the namespace (package fs).
//
// A Table is safe for concurrent use. It runs on one database of the
// metadata engine (meta/sqlmeta), whose writers are serialized by a mutex
// in front of SQLite (which allows one writer anyway); readers (View) run
// concurrently. The Table keeps the lock table's semantics: the rules,
// the decisions' statements, the owner sessions.
type Table struct {
	db        *sqlmeta.DB
	path      string
	ownersDir string
	opts      Options
	log       *slog.Logger

	// sess is this process's owner session (session.go): replaced, under
	// wmu, when a lost session registers again.
	sess    atomic.Pointer[session]
	host    string           // this machine, in session rows
	program string           // this process, in session rows
	clock   func() time.Time // the database's clock (Options.SessionClock)
	hbStop  chan struct{}    // closed by Close: the heartbeat goroutine stops
	hbDone  chan struct{}    // closed when it has
	// hbCancel ends a renewal that waits on a busy database, so Close
	// never waits for it.
	hbCancel context.CancelFunc

	closeOnce sync.Once
	closed    atomic.Bool

	// audit: record the keys each write transaction locks and check every
	// read-for-update against them (test runs only, keylock.go);
	// auditFailures counts the reads that found their key unlocked.
	audit         bool
	auditFailures atomic.Int64

	// ownFiles maps this owner's handle ids to their files: a hint that
	// turns a lookup by id into a primary-key lookup (file, id). A stale
	// entry is harmless (the row is simply missing); a missing entry falls
	// back to a scan.
	ownMu    sync.Mutex
	ownFiles map[HandleID]FileID
	// locked are the handles of this owner that ever took a byte-range
	// lock (a superset of those holding one): closing any other handle
	// skips the lock table.
	locked map[HandleID]bool

	// cache broadcasts committed SMB caching changes (smbcache.go).
	cache cacheSignal

	// Handle ids come from blocks reserved in lk_meta ("next_handle"), so
	// ids are never reused without a sequence write per open. Under the
	// engine's writer mutex.
	nextID, idLimit int64
}

// Conn is the connection a transaction runs on, for the statements the
// namespace runs in it (Tx.SQL): the engine's (sqlmeta.Conn), whose
// statements are prepared once per connection and come classified.
type Conn = sqlmeta.Conn

// Row is the result of Conn.QueryRowContext (sqlmeta.Row).
type Row = sqlmeta.Row

// idBlock is how many handle ids one reservation takes.
const idBlock = 1024

// Tx is one transaction on the lock table. The namespace may run its own SQL
// in the same transaction through SQL(), so a path lookup, a sharing check
// and a namespace change commit together or not at all.
//
// A Tx is used by one goroutine, only inside the fn it was given to.
type Tx struct {
	t     *Table
	m     *sqlmeta.Tx     // the engine's transaction
	ctx   context.Context // the caller's, for Context() and Remove
	sctx  context.Context // for our statements: ctx without cancellation
	conn  *Conn
	write bool
	sess  *session  // the owner this transaction acts for
	at    time.Time // the database's clock in this transaction (now), read once

	reaped   []OwnerID // owners reaped in this transaction (files go after commit)
	nextID   int64     // handle id allocation inside this transaction
	idLimit  int64
	opened   []HandleID // remembered in Table.ownFiles; forgotten again on rollback
	needReap bool       // a read transaction met a dead owner's handle
	onCommit []func()
	held     []FileID // keys locked in this transaction, sorted (recorded in test runs only)
}

const schema = `
CREATE TABLE IF NOT EXISTS lk_owners (
	owner   TEXT PRIMARY KEY,
	pid     INTEGER NOT NULL,
	started INTEGER NOT NULL,
	host    TEXT    NOT NULL DEFAULT '', -- the owner's machine: its flock is probed only there
	program TEXT    NOT NULL DEFAULT '', -- what runs it ("blobshare serve"), for status
	expires INTEGER NOT NULL DEFAULT 0   -- heartbeat deadline, ns on the database's clock (0: registered before sessions)
);
CREATE TABLE IF NOT EXISTS lk_handles (
	file            INTEGER NOT NULL,
	id              INTEGER NOT NULL,
	owner           TEXT NOT NULL,
	access          INTEGER NOT NULL,
	share           INTEGER NOT NULL,
	open_share      INTEGER NOT NULL,
	delete_on_close INTEGER NOT NULL,
	session         INTEGER NOT NULL,
	client_name     TEXT NOT NULL,
	client_ip       TEXT NOT NULL,
	open_time       INTEGER NOT NULL,
	PRIMARY KEY (file, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lk_meta (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS lk_files (
	file           INTEGER PRIMARY KEY,
	delete_pending INTEGER NOT NULL DEFAULT 0,
	lease_state    INTEGER NOT NULL DEFAULT 0,
	lease_id       TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS lk_locks (
	id     INTEGER PRIMARY KEY,
	file   INTEGER NOT NULL,
	handle INTEGER NOT NULL,
	lkey   INTEGER NOT NULL,
	off    INTEGER NOT NULL,
	len    INTEGER NOT NULL,
	kind   INTEGER NOT NULL,
	posix  INTEGER NOT NULL -- style: 0 SMB (Lock), 1 POSIX (SetPOSIXLock), 2 flock (Flock)
);
CREATE INDEX IF NOT EXISTS lk_locks_file ON lk_locks(file, handle);
` + cacheDDL + durableDDL

// SchemaVersion is the version of the lock tables this build creates and
// accepts, stored in lk_meta ("schema"). Bump it with every change to
// schema; a database with another version is refused (*SchemaError).
//
// 2: lk_locks.posix is the lock's style (0 SMB, 1 POSIX, 2 flock), no
// longer a boolean; flock(2) is a lock, no longer a share-mode change.
// 3: owner sessions: lk_owners.host, program and expires (migration 3).
// 4: SMB caching: lk_opcache (per-open oplock), lk_smbleases (per lease
// key), lk_breaks (the break outbox) (migration 4, smbcache.go).
// 5: durable SMB opens: lk_durable (migration 5, durable.go).
const SchemaVersion = 5

// migrations move lock tables of an older version to SchemaVersion, one
// version each (sqlmeta.Ensure). A row of an owner registered before sessions
// gets no deadline (expires 0): it is judged by its flock alone, as its
// build did.
var migrations = []sqlmeta.Migration{
	{To: 3, DDL: `ALTER TABLE lk_owners ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE lk_owners ADD COLUMN program TEXT NOT NULL DEFAULT '';
ALTER TABLE lk_owners ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;`},
	{To: 4, DDL: cacheDDL},
	{To: 5, DDL: durableDDL},
}

// cacheDDL is schema 4's addition, in the fresh schema and migration 4
// alike: a database of schema 3 holds no caching (none was granted).
const cacheDDL = `CREATE TABLE IF NOT EXISTS lk_opcache (
	file     INTEGER NOT NULL,
	handle   INTEGER NOT NULL,
	owner    TEXT NOT NULL,
	oplock   INTEGER NOT NULL,           -- granted oplock level (MS-SMB2 2.2.14), 255 for an open of a lease
	client   BLOB,                       -- the lease's ClientGuid and key, NULL for an oplock
	lkey     BLOB,
	breaking INTEGER NOT NULL DEFAULT 0, -- an oplock break to break_to is out, unacknowledged
	break_to INTEGER NOT NULL DEFAULT 0,
	deadline INTEGER NOT NULL DEFAULT 0, -- ns: the break completes to none at it
	PRIMARY KEY (file, handle)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lk_smbleases (
	client   BLOB NOT NULL,
	lkey     BLOB NOT NULL,
	file     INTEGER NOT NULL,
	owner    TEXT NOT NULL,
	state    INTEGER NOT NULL,           -- R 1, H 2, W 4
	breaking INTEGER NOT NULL DEFAULT 0,
	break_to INTEGER NOT NULL DEFAULT 0,
	deadline INTEGER NOT NULL DEFAULT 0,
	epoch    INTEGER NOT NULL DEFAULT 0,
	version  INTEGER NOT NULL DEFAULT 1,
	parent   BLOB,
	PRIMARY KEY (client, lkey)
);
CREATE INDEX IF NOT EXISTS lk_smbleases_file ON lk_smbleases(file);
CREATE TABLE IF NOT EXISTS lk_breaks (
	id       INTEGER PRIMARY KEY,
	owner    TEXT NOT NULL,              -- the holder's process: it delivers the break
	file     INTEGER NOT NULL,
	handle   INTEGER NOT NULL,           -- the oplock's open; 0 for a lease
	client   BLOB,
	lkey     BLOB,
	from_state INTEGER NOT NULL,
	to_state INTEGER NOT NULL,
	epoch    INTEGER NOT NULL,
	ack      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS lk_breaks_owner ON lk_breaks(owner);
`

// schemaPart is the lock tables' part of the shared database (sqlmeta.Ensure):
// its version is row "schema" of lk_meta, as it always was.
var schemaPart = sqlmeta.Part{
	Name:         "lock table",
	Marker:       "lk_handles",
	Version:      SchemaVersion,
	DDL:          schema,
	Migrations:   migrations,
	VersionTable: "lk_meta",
}

// maxReaders is how many read transactions of one Table may run at once.
const maxReaders = sqlmeta.DefaultMaxReaders

// Open opens (creating if needed) the database at path, registers this
// process as a new owner, and cleans up the handles of owners that died.
// The database is in WAL mode with a busy timeout; writes are short
// IMMEDIATE transactions. Several processes may Open the same path.
//
// Beside the database, the directory <path>.owners holds one lock file per
// live owner (see doc.go).
func Open(ctx context.Context, path string, opts Options) (*Table, error) {
	if path == "" {
		return nil, fmt.Errorf("locks: open %q: bad path: %w", path, ErrInvalidParameter)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewLeaseID == nil {
		opts.NewLeaseID = uuid.NewString
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if opts.SessionExpiry <= 0 {
		opts.SessionExpiry = DefaultSessionExpiry
	}
	if opts.HeartbeatInterval >= opts.SessionExpiry {
		return nil, fmt.Errorf("locks: open %s: heartbeat interval %v not below the session expiry %v: %w",
			path, opts.HeartbeatInterval, opts.SessionExpiry, ErrInvalidParameter)
	}
	owner := opts.Owner
	if owner == "" {
		owner = OwnerID(uuid.NewString())
	}
	if !validOwnerID(owner) {
		return nil, fmt.Errorf("locks: open %s: owner id %q: %w", path, owner, ErrInvalidParameter)
	}
	log := opts.Logger.With("component", "locks", "owner", string(owner))
	db, err := sqlmeta.Open(path, sqlmeta.Options{Name: "locks", MaxReaders: maxReaders, Logger: log, FoldDelay: opts.FoldDelay})
	if err != nil {
		return nil, err
	}
	t := &Table{
		db:        db,
		path:      path,
		ownersDir: ownersDir(path),
		opts:      opts,
		host:      cmp.Or(opts.Host, thisHost()),
		program:   cmp.Or(opts.Program, thisProgram()),
		clock:     opts.SessionClock,
		log:       log,
		ownFiles:  map[HandleID]FileID{},
		locked:    map[HandleID]bool{},
		audit:     auditKeyLocks(),
	}
	if t.clock == nil {
		t.clock = time.Now
	}
	sess, err := t.newSession(owner)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("locks: open %s: %w", path, err)
	}
	lock := sess.lock
	t.sess.Store(sess)
	fail := func(err error) (*Table, error) {
		db.Close()
		lock.Release()
		return nil, fmt.Errorf("locks: open %s: %w", path, err)
	}
	// The schema first, alone: WAL switch, version check and DDL.
	if err := t.update(ctx, false, func(tx *Tx) error {
		return sqlmeta.Ensure(ctx, tx.conn, path, schemaPart)
	}); err != nil {
		var se *SchemaError
		if errors.As(err, &se) {
			db.Close()
			lock.Release()
			return nil, err
		}
		return fail(fmt.Errorf("schema: %w", err))
	}
	sent := t.clock()
	if err := t.update(ctx, false, func(tx *Tx) error { return tx.register(sess) }); err != nil {
		return fail(err)
	}
	sess.renewed(t.localDeadline(sent))
	if n, err := t.ReapDeadOwners(ctx); err != nil {
		return fail(err)
	} else if n > 0 {
		t.log.Info("reaped dead owners at open", "count", n, "db", path)
	}
	// The heartbeat runs until Close, on a context that outlives Open's.
	t.hbStop, t.hbDone = make(chan struct{}), make(chan struct{})
	hbCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.hbCancel = cancel
	go t.heartbeats(hbCtx, t.hbStop, t.hbDone)
	return t, nil
}

// DB returns the underlying database, for tools and tests. The namespace
// runs its statements inside the Table's transactions (Tx.SQL); writes
// through DB are neither serialized with them nor atomic with their
// checks, and each use takes one of the Table's connections meanwhile.
func (t *Table) DB() *sql.DB { return t.db.SQL() }

// NewLeaseID is a lease id for an acquire without a proposed id
// (Options.NewLeaseID), for timed leases whose state the caller stores.
func (t *Table) NewLeaseID() string { return t.opts.NewLeaseID() }

// Owner returns this process instance's owner id.
// After a lost session (ErrSessionLost) it is the new owner's.
func (t *Table) Owner() OwnerID { return t.sess.Load().owner }

// Path returns the database path given to Open.
func (t *Table) Path() string { return t.path }

// Close closes every handle this owner still holds (running delete-on-close
// and completing pending deletes), deregisters the owner and closes the DB.
// Calling Close again returns nil. Update and View fail with
// ErrHandleClosed afterwards.
func (t *Table) Close(ctx context.Context) error {
	var err error
	t.closeOnce.Do(func() {
		if t.hbStop != nil {
			close(t.hbStop)
			t.hbCancel()
			<-t.hbDone
		}
		// Unfenced: a lost session's handles go too (if nobody reaped
		// them yet).
		err = t.update(ctx, false, func(tx *Tx) error {
			return tx.reapOwner(tx.sess.owner)
		})
		t.closed.Store(true)
		if cerr := t.db.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if rerr := t.sess.Load().lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("locks: close %s: %w", t.path, rerr)
		}
	})
	return err
}

func (t *Table) rememberHandle(id HandleID, file FileID) {
	t.ownMu.Lock()
	t.ownFiles[id] = file
	t.ownMu.Unlock()
}

func (t *Table) forgetHandle(id HandleID) {
	t.ownMu.Lock()
	delete(t.ownFiles, id)
	delete(t.locked, id)
	t.ownMu.Unlock()
}

func (t *Table) noteLocks(id HandleID) {
	t.ownMu.Lock()
	t.locked[id] = true
	t.ownMu.Unlock()
}

func (t *Table) mayHaveLocks(id HandleID) bool {
	t.ownMu.Lock()
	defer t.ownMu.Unlock()
	return t.locked[id]
}

func (t *Table) handleFile(id HandleID) (FileID, bool) {
	t.ownMu.Lock()
	f, ok := t.ownFiles[id]
	t.ownMu.Unlock()
	return f, ok
}

// Update runs fn in one write transaction of the engine (BEGIN
// IMMEDIATE), retrying with backoff while the database is busy. fn may run
// more than once; it must not have side effects outside the transaction.
// An error from fn rolls back and is returned as is. Update must not be
// called from inside fn (the process's writer mutex is not reentrant).
//
// Update is a decision of this owner: it fails with ErrSessionLost when
// the owner's session has expired or was reaped (doc.go, "Sessions"); the
// Table has then registered as a new owner, whose next Update decides.
func (t *Table) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return t.update(ctx, true, fn)
}

// update is Update; fence false runs fn without checking the session
// (registering, renewing and closing it).
func (t *Table) update(ctx context.Context, fence bool, fn func(tx *Tx) error) error {
	w := t.db.LockWriter()
	defer w.Unlock()
	err := t.updateLocked(ctx, w, fence, fn)
	if fence && errors.Is(err, ErrSessionLost) && !t.closed.Load() {
		if rerr := t.reregister(ctx, w); rerr != nil {
			t.log.Error("registering as a new owner failed; trying again at the next decision", "err", rerr)
		}
	}
	return err
}

// updateLocked is update under the engine's writer mutex (w). Around each
// run of fn (txHooks): the handle ids reserved become the Table's once the
// transaction commits, the handles it opened are forgotten if it does not,
// and the files of the owners it reaped go after the commit.
func (t *Table) updateLocked(ctx context.Context, w *sqlmeta.Writer, fence bool, fn func(tx *Tx) error) error {
	if t.closed.Load() {
		return fmt.Errorf("locks: %s: table closed: %w", t.path, ErrHandleClosed)
	}
	var last *Tx
	err := w.Update(ctx, func(m *sqlmeta.Tx) error {
		tx := t.newTx(m)
		last = tx
		// The id reservation is only touched under the writer mutex;
		// read transactions open no handles and must not read it.
		tx.nextID, tx.idLimit = t.nextID, t.idLimit
		m.SetHooks((*txHooks)(tx))
		if fence {
			if err := t.fence(tx); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if err != nil {
		return closedErr(err)
	}
	for _, o := range last.reaped {
		if rerr := removeOwnerFile(t.ownersDir, o); rerr != nil {
			t.log.Warn("reaped owner file not removed", "dead_owner", string(o), "err", rerr)
		}
	}
	return nil
}

// txHooks are a write transaction's sqlmeta.Hooks.
type txHooks Tx

// Committed: the id reservation is durable now; then OnCommit's functions.
func (h *txHooks) Committed() {
	t := h.t
	t.nextID, t.idLimit = h.nextID, h.idLimit
	for _, f := range h.onCommit {
		f()
	}
}

// RolledBack forgets the handles the transaction opened.
func (h *txHooks) RolledBack() {
	for _, id := range h.opened {
		h.t.forgetHandle(id)
	}
}

// newTx is the lock table's transaction over the engine's m.
func (t *Table) newTx(m *sqlmeta.Tx) *Tx {
	return &Tx{t: t, m: m, ctx: m.Context(), sctx: m.StmtContext(), conn: m.Conn(), write: m.Write(), sess: t.sess.Load()}
}

// closedErr adds ErrHandleClosed to the engine's closed error: callers of
// a closed Table match ErrHandleClosed.
func closedErr(err error) error {
	if errors.Is(err, meta.ErrClosed) && !errors.Is(err, ErrHandleClosed) {
		return fmt.Errorf("%w: %w", ErrHandleClosed, err)
	}
	return err
}

// View runs fn in a read transaction (a consistent snapshot). Methods that
// change state fail inside it with ErrInvalidParameter. If a check inside
// fn is refused by a handle whose owner is dead, View reaps that owner
// after fn returns and runs fn again, so fn may run more than once.
func (t *Table) View(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, false, false, fn)
}

// Peek is View for short transactions — a few point reads, as a lookup or
// a check before an I/O makes — on the engine's writer connection when no
// write of this process is running (sqlmeta.DB.Peek says why). fn must
// stay short (no listings, no waiting).
func (t *Table) Peek(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, true, false, fn)
}

// PeekStatement is Peek for fn that runs one read statement, such as a
// lookup by name, outside a transaction (sqlmeta.DB.PeekStatement): fn
// must run a single statement, and only a read.
func (t *Table) PeekStatement(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, true, true, fn)
}

// read runs fn in a read transaction of the engine (View, Peek or
// PeekStatement); when fn met a dead owner's handle it reaps after fn
// returns and runs fn again (up to three times; then fn's own outcome).
func (t *Table) read(ctx context.Context, peek, lone bool, fn func(tx *Tx) error) error {
	if t.closed.Load() {
		return fmt.Errorf("locks: %s: table closed: %w", t.path, ErrHandleClosed)
	}
	for attempt := 0; ; attempt++ {
		var last *Tx
		f := func(m *sqlmeta.Tx) error {
			last = t.newTx(m)
			return fn(last)
		}
		var err error
		switch {
		case !peek:
			err = t.db.View(ctx, f)
		case lone:
			err = t.db.PeekStatement(ctx, f)
		default:
			err = t.db.Peek(ctx, f)
		}
		if last != nil && last.needReap && attempt < 3 {
			if _, rerr := t.ReapDeadOwners(ctx); rerr != nil {
				return rerr
			}
			continue
		}
		return closedErr(err)
	}
}

// ReapDeadOwners removes the handles and locks of owners whose process is
// gone and completes the deletes they held up. Open calls it; long-running
// processes may call it again. It returns how many owners were reaped.
func (t *Table) ReapDeadOwners(ctx context.Context) (int, error) {
	var n int
	err := t.Update(ctx, func(tx *Tx) error {
		n = 0
		owners, err := tx.knownOwners()
		if err != nil {
			return err
		}
		for _, o := range owners {
			if o == tx.sess.owner {
				continue
			}
			dead, err := tx.ownerDead(o)
			if err != nil {
				return err
			}
			if dead {
				if err := tx.reapOwner(o); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("locks: reap dead owners in %s: %w", t.path, err)
	}
	return n, nil
}

// OtherLiveOwners reaps dead owners and then returns the owners other than
// this one that are still registered, that is, alive. Callers use it to
// decide whether data another process may be writing could exist (blob
// garbage collection after a crash).
func (t *Table) OtherLiveOwners(ctx context.Context) ([]OwnerID, error) {
	if _, err := t.ReapDeadOwners(ctx); err != nil {
		return nil, err
	}
	var others []OwnerID
	err := t.View(ctx, func(tx *Tx) error {
		others = others[:0]
		owners, err := tx.knownOwners()
		if err != nil {
			return err
		}
		for _, o := range owners {
			if o == tx.sess.owner {
				continue
			}
			// A View reaps nothing: an owner dead since the reaping
			// above is not another live one.
			if dead, err := tx.ownerDead(o); err != nil {
				return err
			} else if !dead {
				others = append(others, o)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("locks: live owners in %s: %w", t.path, err)
	}
	return others, nil
}
