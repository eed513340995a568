package locks

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Table is the lock table of one process (one owner) over a SQLite database
// shared with other processes and with the namespace (package fs).
//
// A Table is safe for concurrent use. Its writers are serialized by a mutex
// in front of SQLite (which allows one writer anyway); readers (View) run
// concurrently.
type Table struct {
	db        *sql.DB
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

	wmu sync.Mutex // serializes Update in this process
	// writer is the connection of every write transaction (under wmu):
	// one writer keeps its page cache from one transaction to the next,
	// where SQLite drops the cache of a connection another one wrote
	// behind. Nil until the first Update, and again after it went bad.
	writer  *Conn
	readers *readers // connections of read transactions
	ckpt    *checkpointer

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
	// ids are never reused without a sequence write per open. Under wmu.
	nextID, idLimit int64
}

// uriPath escapes a file path for a SQLite "file:" URI, where '?' starts
// the parameters, '#' a fragment, and '%' an escape.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// maxReaders is how many read transactions of one Table may run at once.
const maxReaders = 7

// idBlock is how many handle ids one reservation takes.
const idBlock = 1024

// Tx is one transaction on the lock table. The namespace may run its own SQL
// in the same transaction through SQL(), so a path lookup, a sharing check
// and a namespace change commit together or not at all.
//
// A Tx is used by one goroutine, only inside the fn it was given to.
type Tx struct {
	t     *Table
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
// version each (EnsureSchema). A row of an owner registered before sessions
// gets no deadline (expires 0): it is judged by its flock alone, as its
// build did.
var migrations = []Migration{
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

// Migration moves one part of the schema from version To-1 to To: DDL runs
// in the transaction that checks the version, and the version row follows.
type Migration struct {
	To  int64
	DDL string
}

// EnsureSchema checks or creates one part of the shared database inside a
// write transaction: when marker (a table of the part) exists, the version
// stored as row "schema" of metaTable (a (name, value) table) must be
// want — a missing row or table means a database from before versioning
// (version 0) — else it returns a *SchemaError naming the data directory
// of dbPath — unless migrations lead from the version found to want, one
// version at a time: then they run, in order, in this transaction, and
// want is recorded; when marker does not exist, ddl runs and the version is
// recorded. Package fs uses it for the namespace tables.
func EnsureSchema(ctx context.Context, tx *Conn, dbPath, part, marker, metaTable string, want int64, ddl string, migrations ...Migration) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, marker).Scan(&n); err != nil {
		return fmt.Errorf("read schema of %s: %w", dbPath, err)
	}
	if n > 0 {
		var found int64
		var hasMeta int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, metaTable).Scan(&hasMeta); err != nil {
			return fmt.Errorf("read schema of %s: %w", dbPath, err)
		}
		if hasMeta > 0 {
			err := tx.QueryRowContext(ctx, `SELECT value FROM `+metaTable+` WHERE name = 'schema'`).Scan(&found)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read schema version of %s: %w", dbPath, err)
			}
		}
		if found == want {
			return nil
		}
		if !migratable(found, want, migrations) {
			return &SchemaError{Dir: filepath.Dir(dbPath), DB: dbPath, Part: part, Found: found, Want: want}
		}
		for _, m := range migrations {
			if m.To <= found || m.To > want {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.DDL); err != nil {
				return fmt.Errorf("migrate %s schema of %s to version %d: %w", part, dbPath, m.To, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+metaTable+` SET value = ? WHERE name = 'schema'`, want); err != nil {
			return fmt.Errorf("record %s schema version in %s: %w", part, dbPath, err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create %s schema in %s: %w", part, dbPath, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+metaTable+`(name, value) VALUES('schema', ?)`, want); err != nil {
		return fmt.Errorf("record %s schema version in %s: %w", part, dbPath, err)
	}
	return nil
}

// migratable reports whether ms hold every step from found (a versioned
// schema: never 0, which is a database from before versioning) to want.
func migratable(found, want int64, ms []Migration) bool {
	if found <= 0 || found > want {
		return false
	}
	for v := found + 1; v <= want; v++ {
		if !slices.ContainsFunc(ms, func(m Migration) bool { return m.To == v }) {
			return false
		}
	}
	return true
}

// busyTimeoutMS is SQLite's own wait for the write lock; Update retries
// with backoff beyond it until the context ends.
const busyTimeoutMS = 5000

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
	dsn := "file:" + uriPath(path) +
		"?_pragma=busy_timeout(" + fmt.Sprint(busyTimeoutMS) + ")" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=wal_autocheckpoint(" + fmt.Sprint(walSafetyNetPages) + ")" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("locks: open %s: %w", path, err)
	}
	// The Table holds its connections itself (a writer, the readers and
	// the checkpointer's): database/sql's pool only opens them, plus one
	// for users of DB.
	db.SetMaxOpenConns(maxReaders + 3)
	db.SetMaxIdleConns(maxReaders + 3)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)

	t := &Table{
		db:        db,
		path:      path,
		ownersDir: ownersDir(path),
		opts:      opts,
		host:      cmp.Or(opts.Host, thisHost()),
		program:   cmp.Or(opts.Program, thisProgram()),
		clock:     opts.SessionClock,
		log:       opts.Logger.With("component", "locks", "owner", string(owner)),
		readers:   newReaders(db, maxReaders),
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
	t.ckpt = newCheckpointer(db, path, t.log)
	fail := func(err error) (*Table, error) {
		t.ckpt.close()
		db.Close()
		lock.release()
		return nil, fmt.Errorf("locks: open %s: %w", path, err)
	}
	// The schema first, alone: WAL switch, version check and DDL.
	if err := t.update(ctx, false, func(tx *Tx) error {
		return EnsureSchema(ctx, tx.conn, path, "lock table", "lk_handles", "lk_meta", SchemaVersion, schema, migrations...)
	}); err != nil {
		var se *SchemaError
		if errors.As(err, &se) {
			t.ckpt.close()
			db.Close()
			lock.release()
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
func (t *Table) DB() *sql.DB { return t.db }

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
		t.ckpt.close()
		t.wmu.Lock()
		t.closed.Store(true)
		if t.writer != nil {
			t.writer.close(false)
			t.writer = nil
		}
		t.wmu.Unlock()
		t.readers.close()
		if cerr := t.db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("locks: close %s: %w", t.path, cerr)
		}
		if rerr := t.sess.Load().lock.release(); rerr != nil && err == nil {
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

// isBusy reports a busy or locked database (ErrBusy).
func isBusy(err error) bool { return errors.Is(classify(err), ErrBusy) }

// Update runs fn in one write transaction (BEGIN IMMEDIATE), retrying with
// backoff while the database is busy. fn may run more than once; it must not
// have side effects outside the transaction. An error from fn rolls back and
// is returned as is. Update must not be called from inside fn (the
// process's writer mutex is not reentrant).
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
	t.wmu.Lock()
	defer t.wmu.Unlock()
	err := t.updateLocked(ctx, fence, fn)
	if fence && errors.Is(err, ErrSessionLost) && !t.closed.Load() {
		if rerr := t.reregister(ctx); rerr != nil {
			t.log.Error("registering as a new owner failed; trying again at the next decision", "err", rerr)
		}
	}
	return err
}

// updateLocked is update under wmu.
func (t *Table) updateLocked(ctx context.Context, fence bool, fn func(tx *Tx) error) error {
	if t.closed.Load() {
		return fmt.Errorf("locks: %s: table closed: %w", t.path, ErrHandleClosed)
	}
	backoff := time.Millisecond
	for {
		reaped, err := t.try(ctx, txWrite, false, fence, fn)
		if err == nil {
			for _, o := range reaped {
				if rerr := removeOwnerFile(t.ownersDir, o); rerr != nil {
					t.log.Warn("reaped owner file not removed", "dead_owner", string(o), "err", rerr)
				}
			}
			return nil
		}
		if !isBusy(err) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("locks: %s: busy: %w (%w)", t.path, cerr, err)
		}
		d := backoff/2 + rand.N(backoff/2+1)
		t.log.Debug("database busy, retrying", "wait", d, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("locks: %s: busy: %w (%w)", t.path, ctx.Err(), err)
		case <-time.After(d):
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
}

// txKind is what a transaction may do and which connection it runs on.
type txKind int

const (
	txRead  txKind = iota // a reader connection
	txPeek                // read-only on the writer connection, under wmu
	txWrite               // the writer connection, under wmu
)

// try runs fn in one transaction; it returns the owners reaped on commit.
// lone (reads only) runs fn's statement outside a transaction instead
// (see PeekStatement).
// fence checks the owner's session first (write transactions).
func (t *Table) try(ctx context.Context, kind txKind, lone, fence bool, fn func(tx *Tx) error) ([]OwnerID, error) {
	write := kind == txWrite
	c, err := t.begin(ctx, kind, lone)
	if err != nil {
		return nil, fmt.Errorf("locks: %s: begin: %w", t.path, err)
	}
	// Statements inside the transaction never wait for a lock (WAL readers
	// don't; the writer already holds the write lock), so they run without
	// cancellation: a cancellable context costs the driver a watcher
	// goroutine per statement. Waiting — BEGIN and the busy retries —
	// watches ctx.
	sctx := context.WithoutCancel(ctx)
	tx := &Tx{t: t, ctx: ctx, sctx: sctx, conn: c, write: write, sess: t.sess.Load()}
	if write {
		// The id reservation is only touched under wmu; read transactions
		// open no handles and must not read it unlocked.
		tx.nextID, tx.idLimit = t.nextID, t.idLimit
	}
	var ferr error
	if write && fence {
		ferr = t.fence(tx)
	}
	if ferr == nil {
		ferr = fn(tx)
	}
	commitFailed := false
	if ferr == nil && write {
		if _, err := c.ExecContext(sctx, sqlCommit); err != nil {
			ferr = fmt.Errorf("locks: %s: commit: %w", t.path, err)
			commitFailed = true
		}
	}
	discard := false
	if (ferr != nil || !write) && !lone {
		// A failed COMMIT may leave the transaction open: roll back
		// (SQLite answers "no transaction" when there is none left).
		if _, err := c.ExecContext(sctx, sqlRollback); err != nil && !noTransaction(err) {
			discard = true
		}
	}
	t.end(c, kind, discard)
	ferr = classify(ferr)
	if ferr != nil {
		for _, id := range tx.opened {
			t.forgetHandle(id)
		}
		if tx.needReap && !commitFailed {
			return nil, &needReapError{ferr}
		}
		return nil, ferr
	}
	if !write {
		if tx.needReap {
			return nil, &needReapError{}
		}
		return nil, nil
	}
	t.nextID, t.idLimit = tx.nextID, tx.idLimit // the reservation is durable now
	for _, f := range tx.onCommit {
		f()
	}
	t.ckpt.committed()
	return tx.reaped, nil
}

// begin takes the connection for a transaction — the writer (under wmu,
// for txWrite and txPeek) or a reader — and begins on it, unless lone.
func (t *Table) begin(ctx context.Context, kind txKind, lone bool) (*Conn, error) {
	var c *Conn
	var err error
	query := sqlBeginRead
	if kind == txWrite {
		query = sqlBeginWrite
	}
	if kind == txRead {
		if c, err = t.readers.get(ctx); err != nil {
			return nil, err
		}
	} else {
		if t.writer == nil {
			if t.writer, err = newConn(ctx, t.db); err != nil {
				return nil, err
			}
		}
		c = t.writer
	}
	if lone {
		return c, nil
	}
	if _, err := c.ExecContext(ctx, query); err != nil {
		// Busy: the connection is fine and is kept. Anything else (an
		// interrupted BEGIN included) leaves its state unknown.
		t.end(c, kind, !isBusy(err))
		return nil, err
	}
	return c, nil
}

// end gives a transaction's connection back; discard closes it for good.
func (t *Table) end(c *Conn, kind txKind, discard bool) {
	if kind == txRead {
		t.readers.put(c, discard)
		return
	}
	if discard {
		c.close(true)
		t.writer = nil
	}
}

// noTransaction reports SQLite's answer to a ROLLBACK with no transaction
// open (a failed statement or COMMIT may already have ended it).
func noTransaction(err error) bool { return errors.Is(classify(err), ErrNoTransaction) }

// needReapError makes View reap dead owners and run fn again; err is fn's
// own outcome (nil if fn succeeded).
type needReapError struct{ err error }

func (e *needReapError) Error() string { return "locks: dead owner met in a read transaction" }

// View runs fn in a read transaction (a consistent snapshot). Methods that
// change state fail inside it with ErrInvalidParameter. If a check inside
// fn is refused by a handle whose owner is dead, View reaps that owner
// after fn returns and runs fn again, so fn may run more than once.
func (t *Table) View(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, false, false, fn)
}

// Peek is View for short transactions — a few point reads, as a lookup or
// a check before an I/O makes. When no write transaction of this process
// is running it runs on the writer connection, whose page cache is warm:
// SQLite drops a connection's whole cache whenever another connection has
// committed, so a reader after a write re-reads every page it touches,
// while the writer keeps the pages of its own writes. A write that comes
// meanwhile waits for the Peek, so fn must stay short (no listings, no
// waiting); when a write is running Peek takes a reader like View.
func (t *Table) Peek(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, true, false, fn)
}

// PeekStatement is Peek for fn that runs one read statement, such as a
// lookup by name: the statement runs alone, outside a transaction —
// SQLite gives a lone statement a snapshot of its own — which saves the
// BEGIN and ROLLBACK around it, a sixth of a one-query Peek's CPU. fn must
// run a single statement, and only a read: outside a transaction a write
// would commit, and a second statement would see a snapshot of its own.
func (t *Table) PeekStatement(ctx context.Context, fn func(tx *Tx) error) error {
	return t.read(ctx, true, true, fn)
}

// read runs fn in a read transaction; peek takes the idle writer's
// connection when it can (see Peek), lone runs fn's one statement without
// a transaction (see PeekStatement).
func (t *Table) read(ctx context.Context, peek, lone bool, fn func(tx *Tx) error) error {
	if t.closed.Load() {
		return fmt.Errorf("locks: %s: table closed: %w", t.path, ErrHandleClosed)
	}
	for attempt := 0; ; attempt++ {
		var err error
		if peek && t.wmu.TryLock() {
			_, err = t.try(ctx, txPeek, lone, false, fn)
			t.wmu.Unlock()
		} else {
			_, err = t.try(ctx, txRead, lone, false, fn)
		}
		if err == nil {
			return nil
		}
		var nr *needReapError
		if errors.As(err, &nr) {
			if attempt < 3 {
				if _, rerr := t.ReapDeadOwners(ctx); rerr != nil {
					return rerr
				}
				continue
			}
			return nr.err // fn's own outcome; the reaping can wait
		}
		if isBusy(err) && ctx.Err() == nil && attempt < 50 {
			time.Sleep(time.Millisecond)
			continue
		}
		return err
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
