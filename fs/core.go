package fs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/internal/walsync"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// FileSystem is the protocol-neutral share file system of one process. It
// is safe for concurrent use; several processes may run one each over the
// same database and blob store.
type FileSystem struct {
	table    *locks.Table
	wal      *walsync.Syncer // syncs the table's log before a REST write is acknowledged
	store    blobstore.Store
	log      *slog.Logger
	now      func() time.Time
	spillDir string
	memBlks  int // in-memory partial blocks per handle

	// queuedHook, when set, is called after a REST write joined its
	// file's commit queue (tests: an event to synchronise on).
	queuedHook func()
	// groupWait bounds a group commit's wait for the file's writes still
	// staging (groupcommit.go); tests change it.
	groupWait time.Duration

	notices   notices // wake-ups of this FileSystem's watchers (notify.go)
	watchHint *hint   // rows in ns_watches, all processes (notify.go); nil: always ask

	dirLeases dirLeaseHolds // directory leases granted, all processes (dirlease.go)

	mu      sync.Mutex
	files   map[FileID]*fileState // per-file state of this process (commit mutex, open handles)
	subs    map[int]func(Change)
	nextSub int
	bufs    sync.Pool     // *[]byte of BlockSize
	gcKick  chan struct{} // wakes the blob collector
	gcDone  chan struct{} // closed when the collector has stopped
	handles map[*Handle]struct{}
	closed  bool

	// unflushed: visible-write handles with staged writes (visible.go);
	// nUnflushed counts them, so that readers skip the lock when none.
	unflushed  unflushed
	nUnflushed atomic.Int64
	instance   string        // this FileSystem's owner name in ns_unflushed
	hint       *hint         // rows in ns_unflushed, all processes (visiblehint.go)
	nRowed     atomic.Int64  // this FileSystem's rows there
	pollKick   chan struct{} // wakes the commit-request poller (visible.go)
	pollStop   chan struct{} // closed to stop it
	pollDone   chan struct{} // closed when it has stopped

	rel releases // released handles whose lock-table close is pending

	statSQL statSQLs // statOne's statements by depth (statpath.go)

	skipKeyLock string // Config.skipKeyLock (the lock audit's test)
	foldMount   bool   // Config.FoldMount (fold.go)

	// fileIDs are ids reserved for new entries and not used yet; read and
	// written only under the lock table's writer lock (see q.fileIDs).
	fileIDs idRange
}

// fileState serialises this process's commits to one file and knows its
// open handles (to flush them before a truncate).
type fileState struct {
	refs    int
	commit  sync.Mutex
	handles map[*Handle]struct{}

	queueMu sync.Mutex
	queue   []*rangeWrite // REST writes waiting for a group commit (groupcommit.go)
	staging int           // REST writes staging their blocks, not queued yet (stagingMark)
	queued  chan struct{} // a write joined queue (capacity 1; made with the first mark)
}

// SchemaVersion is the version of the namespace tables this build creates
// and accepts, stored as row "schema" of ns_seq. Bump it with every change
// to schema: New refuses a database with another version with a
// *locks.SchemaError (errors.Is locks.ErrIncompatibleSchema) naming the
// data directory and both versions — unless migrations lead from its
// version to this one (from 5 on).
//
// 4: ns_intents.new_state, so that recovery adopts a commit whole.
// 5: ns_share_state (share leases, stored access policies, permissions),
// ns_snapshots, ns_snap_entries and ns_snap_pending (share snapshots).
// 6: ns_intents.owner, the owner session of a commit intent, in place of
// pid and pid_start (migration 6).
// 7: ns_unflushed (visible writes staged in another process; migration 7).
// 8: ns_service (the File service's properties; migration 8).
// 9: ns_watches and ns_notices (change notification, notify.go;
// migration 9).
const SchemaVersion = 9

// migrations move a namespace of an older version to SchemaVersion, one
// version each (sqlmeta.Ensure). Migration 6: an intent written before
// sessions names no owner (”), which no session row has: it counts as a
// dead owner's, and New resolves it. (Open the directory with no older
// blobshare running on it: such a process's commit in flight would be
// resolved under it.)
var migrations = []sqlmeta.Migration{
	{To: 6, DDL: `ALTER TABLE ns_intents ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE ns_intents DROP COLUMN pid;
ALTER TABLE ns_intents DROP COLUMN pid_start;`},
	{To: 7, DDL: `CREATE TABLE IF NOT EXISTS ns_unflushed ( -- visible-write handles with staged writes (visible.go)
	file      INTEGER NOT NULL,
	handle    INTEGER NOT NULL,
	owner     TEXT    NOT NULL, -- the FileSystem holding the writes (FileSystem.instance)
	session   TEXT    NOT NULL, -- its lock table's owner session: alive while it is (locks.Tx.OwnerAlive)
	requested INTEGER NOT NULL DEFAULT 0, -- a reader elsewhere waits for the commit
	PRIMARY KEY (file, handle)
) WITHOUT ROWID;`},
	{To: 8, DDL: serviceSchema},
	{To: 9, DDL: notifySchema},
}

// schemaPart is the namespace's part of the shared database (sqlmeta.Ensure):
// its version is row "schema" of ns_seq, as it always was.
var schemaPart = sqlmeta.Part{
	Name:         "namespace",
	Marker:       "ns_entries",
	Version:      SchemaVersion,
	DDL:          schema,
	Migrations:   migrations,
	VersionTable: "ns_seq",
}

// serviceSchema holds the account-wide documents of the File service
// (service.go).
const serviceSchema = `CREATE TABLE IF NOT EXISTS ns_service (
	k TEXT PRIMARY KEY,
	v BLOB NOT NULL
) WITHOUT ROWID;`

// schema is the namespace's part of the shared database. Names are
// case-insensitive through key (FoldName); the unique index covers only
// live entries, so a file unlinked through the mount while open keeps its
// row (unlinked = 1) without holding its name.
const schema = `
CREATE TABLE IF NOT EXISTS ns_entries (
	id          INTEGER PRIMARY KEY, -- from blocks reserved in ns_seq (q.fileIDs): never reused
	parent      INTEGER NOT NULL,
	name        TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	kind        INTEGER NOT NULL,
	unlinked    INTEGER NOT NULL DEFAULT 0,
	size        INTEGER NOT NULL DEFAULT 0,
	attrs       INTEGER NOT NULL DEFAULT 0,
	t_created   INTEGER NOT NULL,
	t_write     INTEGER NOT NULL,
	t_change    INTEGER NOT NULL,
	t_modified  INTEGER NOT NULL,
	version     INTEGER NOT NULL,
	props       TEXT    NOT NULL DEFAULT '', -- content headers, metadata, permission key (JSON, storedProps)
	quota       INTEGER NOT NULL DEFAULT 0,
	blob        INTEGER NOT NULL DEFAULT 0, -- 1 once the content lives in a blob
	inline      BLOB, -- content of a small file while blob = 0 (zeros up to size)
	ranges      TEXT NOT NULL DEFAULT '' -- data ranges for List Ranges (ranges.go)
);
CREATE UNIQUE INDEX IF NOT EXISTS ns_entries_name ON ns_entries(parent, key) WHERE unlinked = 0;
CREATE INDEX IF NOT EXISTS ns_entries_unlinked ON ns_entries(parent, key) WHERE unlinked = 1;
CREATE TABLE IF NOT EXISTS ns_seq (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ns_intents (
	file      INTEGER PRIMARY KEY,
	token     TEXT    NOT NULL,
	state     INTEGER NOT NULL,
	prev_etag TEXT    NOT NULL DEFAULT '',
	new_size  INTEGER NOT NULL DEFAULT 0,
	new_state TEXT    NOT NULL DEFAULT '', -- the entry's fields before and after the commit (commitState, JSON)
	created   INTEGER NOT NULL,
	owner     TEXT    NOT NULL DEFAULT '' -- the owner session that took the commit lock (lk_owners)
);
CREATE TABLE IF NOT EXISTS ns_share_state (
	share INTEGER NOT NULL,
	kind  TEXT    NOT NULL, -- lease, acl, perm (sharestate.go)
	name  TEXT    NOT NULL,
	value TEXT    NOT NULL, -- JSON
	PRIMARY KEY (share, kind, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ns_snapshots (
	share INTEGER NOT NULL,
	name  TEXT    NOT NULL, -- x-ms-snapshot (UTC, 7 fractional digits)
	ready INTEGER NOT NULL DEFAULT 0, -- 1 once its content is cloned and checked (snapshots.go)
	PRIMARY KEY (share, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ns_snap_entries ( -- ns_entries rows of the share's tree as a snapshot took them
	share      INTEGER NOT NULL,
	snapshot   TEXT    NOT NULL,
	id         INTEGER NOT NULL,
	parent     INTEGER NOT NULL,
	name       TEXT    NOT NULL,
	key        TEXT    NOT NULL,
	kind       INTEGER NOT NULL,
	unlinked   INTEGER NOT NULL,
	size       INTEGER NOT NULL,
	attrs      INTEGER NOT NULL,
	t_created  INTEGER NOT NULL,
	t_write    INTEGER NOT NULL,
	t_change   INTEGER NOT NULL,
	t_modified INTEGER NOT NULL,
	version    INTEGER NOT NULL,
	props      TEXT    NOT NULL,
	quota      INTEGER NOT NULL,
	blob       INTEGER NOT NULL, -- 1: the content is the blob snapKey names
	inline     BLOB,
	ranges     TEXT    NOT NULL,
	PRIMARY KEY (share, snapshot, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ns_snap_names ON ns_snap_entries(share, snapshot, parent, key);
CREATE TABLE IF NOT EXISTS ns_snap_pending ( -- clones a snapshot still needs (copy on write, snapshots.go)
	share    INTEGER NOT NULL,
	snapshot TEXT    NOT NULL,
	file     INTEGER NOT NULL,
	src      TEXT    NOT NULL, -- the file's blob key
	dst      TEXT    NOT NULL, -- the snapshot's key for it
	PRIMARY KEY (share, snapshot, file)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ns_snap_pending_file ON ns_snap_pending(file);
CREATE TABLE IF NOT EXISTS ns_unflushed ( -- visible-write handles with staged writes (visible.go)
	file      INTEGER NOT NULL,
	handle    INTEGER NOT NULL,
	owner     TEXT    NOT NULL, -- the FileSystem holding the writes (FileSystem.instance)
	session   TEXT    NOT NULL, -- its lock table's owner session: alive while it is (locks.Tx.OwnerAlive)
	requested INTEGER NOT NULL DEFAULT 0, -- a reader elsewhere waits for the commit
	PRIMARY KEY (file, handle)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ns_gc (
	key   TEXT PRIMARY KEY,
	since INTEGER NOT NULL
);
` + serviceSchema + `;
` + notifySchema

// RemoveFile is the locks.RemoveFunc of the namespace: pass it as
// locks.Options.Remove. It deletes the entry of a file whose delete
// completed, in the lock table's transaction, and queues its blob for
// removal (done after the commit by the FileSystem, or at the next start).
// It is a plain function over the transaction so that the lock table can be
// opened before the FileSystem exists. A directory (closed delete-pending
// through a handle) goes only while it has no children: one that gained
// some since its disposition stays.
func RemoveFile(ctx context.Context, tx *locks.Conn, file locks.FileID) error {
	var blob, parent int64
	var parentUnlinked bool
	var name string
	var kind Kind
	err := tx.QueryRowContext(ctx, `DELETE FROM ns_entries WHERE id = ?1
		AND (kind = ?2 OR (kind = ?3 AND NOT EXISTS (SELECT 1 FROM ns_entries c WHERE c.parent = ?1)))
		RETURNING blob, parent, coalesce((SELECT p.unlinked FROM ns_entries p WHERE p.id = ns_entries.parent), 0), name, kind`,
		int64(file), KindFile, KindDirectory).Scan(&blob, &parent, &parentUnlinked, &name, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // already gone
	}
	if errors.Is(err, locks.ErrNoTable) {
		return nil // the namespace was never created: nothing to remove
	}
	if err != nil {
		return fmt.Errorf("remove file %d: %w", file, err)
	}
	// Every completed delete passes here (REST, the mount, a
	// delete-on-close, a dead owner's reaped handle): the one place to
	// report it to CHANGE_NOTIFY watchers.
	if err := recordRemoval(ctx, tx, FileID(parent), name, kind); err != nil {
		return fmt.Errorf("remove file %d: %w", file, err)
	}
	if err := breakParentConn(ctx, tx, FileID(parent)); err != nil { // dirlease.go
		return fmt.Errorf("remove file %d: %w", file, err)
	}
	// A directory removed through the mount while it held unlinked-but-open
	// files lingers, unlinked, until its last such child goes.
	for p := parent; parentUnlinked && p != 0; {
		var next int64
		err := tx.QueryRowContext(ctx, `DELETE FROM ns_entries WHERE id = ? AND unlinked = 1 AND NOT EXISTS (SELECT 1 FROM ns_entries c WHERE c.parent = ?) RETURNING parent`, p, p).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return fmt.Errorf("remove file %d: parent %d: %w", file, p, err)
		}
		p = next
	}
	if blob == 0 {
		return nil // never had content
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO ns_gc(key, since) VALUES(?, ?)`, blobKey(file), time.Now().UnixNano()); err != nil {
		return fmt.Errorf("remove file %d: queue blob: %w", file, err)
	}
	return nil
}

// blobKey is the key of a file's blob.
func blobKey(file FileID) string { return fmt.Sprintf("f%016x", uint64(file)) }

func newFileSystem(ctx context.Context, cfg Config) (*FileSystem, error) {
	if cfg.Table == nil || cfg.Store == nil {
		return nil, fmt.Errorf("fs: new: %w: Table and Store are required", ErrInvalidArg)
	}
	fsys := &FileSystem{
		table:       cfg.Table,
		wal:         walsync.New(cfg.Table.Path()),
		groupWait:   groupWait,
		store:       cfg.Store,
		log:         cfg.Logger,
		now:         cfg.Now,
		spillDir:    cfg.SpillDir,
		skipKeyLock: cfg.skipKeyLock,
		foldMount:   cfg.FoldMount,
		files:       make(map[FileID]*fileState),
		subs:        make(map[int]func(Change)),
		handles:     make(map[*Handle]struct{}),
		unflushed:   unflushed{},
	}
	if fsys.log == nil {
		fsys.log = slog.Default()
	}
	if fsys.now == nil {
		fsys.now = time.Now
	}
	if fsys.spillDir == "" {
		fsys.spillDir = os.TempDir()
	}
	if err := os.MkdirAll(fsys.spillDir, 0o700); err != nil {
		return nil, fmt.Errorf("fs: new: spill directory: %w", err)
	}
	fsys.memBlks = 4
	if cfg.MemoryPerHandle > 0 {
		fsys.memBlks = int((cfg.MemoryPerHandle + BlockSize - 1) / BlockSize)
	}
	if err := fsys.initSchema(ctx); err != nil {
		return nil, err
	}
	if err := fsys.recover(ctx); err != nil {
		return nil, err
	}
	if h, err := openHint(fsys.table.Path()); err != nil {
		fsys.log.Warn("fs: readers will ask the database for other processes' staged writes", "err", err)
	} else {
		fsys.hint = h
	}
	if err := fsys.dropDeadUnflushed(ctx); err != nil {
		return nil, fmt.Errorf("fs: new: %w", err)
	}
	if h, err := openCounter(fsys.table.Path(), ".watches", "watch hint"); err != nil {
		fsys.log.Warn("fs: every change will ask the database for change-notification watches", "err", err)
	} else {
		fsys.watchHint = h
	}
	if err := fsys.dropDeadWatches(ctx); err != nil {
		return nil, fmt.Errorf("fs: new: %w", err)
	}
	fsys.openDirLeaseHint() // dirlease.go
	fsys.gcKick = make(chan struct{}, 1)
	fsys.gcDone = make(chan struct{})
	go fsys.collector(context.WithoutCancel(ctx))
	fsys.instance = newBlockID() // this FileSystem's rows in ns_unflushed
	fsys.pollKick = make(chan struct{}, 1)
	fsys.pollDone = make(chan struct{})
	fsys.pollStop = make(chan struct{})
	go fsys.serveCommitRequests(context.WithoutCancel(ctx))
	return fsys, nil
}

func (fsys *FileSystem) initSchema(ctx context.Context) error {
	return fsys.table.Update(ctx, func(tx *locks.Tx) error {
		q := tx.SQL()
		// A namespace from another build is refused with a
		// *locks.SchemaError (never a raw "no such column" later).
		if err := sqlmeta.Ensure(ctx, q, fsys.table.Path(), schemaPart); err != nil {
			return fmt.Errorf("fs: %w", err)
		}
		t := ticks(fsys.now())
		_, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO ns_entries(id, parent, name, key, kind, attrs, t_created, t_write, t_change, t_modified, version)
			VALUES(?, 0, '', '', ?, ?, ?, ?, ?, ?, 1)`, int64(RootID), KindRoot, AttrDirectory, t, t, t, t)
		if err != nil {
			return fmt.Errorf("fs: create root: %w", err)
		}
		return nil
	})
}

func (fsys *FileSystem) subscribe(fn func(Change)) (cancel func()) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	id := fsys.nextSub
	fsys.nextSub++
	fsys.subs[id] = fn
	return func() {
		fsys.mu.Lock()
		delete(fsys.subs, id)
		fsys.mu.Unlock()
	}
}

// notify delivers committed changes to subscribers.
func (fsys *FileSystem) notify(chs ...Change) {
	if len(chs) == 0 {
		return
	}
	fsys.mu.Lock()
	fns := make([]func(Change), 0, len(fsys.subs))
	for _, fn := range fsys.subs {
		fns = append(fns, fn)
	}
	fsys.mu.Unlock()
	for _, c := range chs {
		for _, fn := range fns {
			fn(c)
		}
	}
}

// acquireFile returns (creating) the per-file state; release with releaseFile.
func (fsys *FileSystem) acquireFile(id FileID) *fileState {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	st := fsys.files[id]
	if st == nil {
		st = &fileState{handles: make(map[*Handle]struct{})}
		fsys.files[id] = st
	}
	st.refs++
	return st
}

func (fsys *FileSystem) releaseFile(id FileID, st *fileState) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	st.refs--
	if st.refs == 0 {
		delete(fsys.files, id)
	}
}

func (fsys *FileSystem) close(ctx context.Context) error {
	fsys.mu.Lock()
	if fsys.closed {
		fsys.mu.Unlock()
		return nil
	}
	fsys.closed = true
	fsys.mu.Unlock()
	fsys.stopReleaseTimer()
	fsys.settleReleases(ctx)
	fsys.mu.Lock()
	hs := make([]*Handle, 0, len(fsys.handles))
	for h := range fsys.handles {
		hs = append(hs, h)
	}
	fsys.mu.Unlock()
	var first error
	for _, h := range hs {
		// A handle force-closed in the lock table (Force Close Handles)
		// stays registered until its owner closes it; at shutdown there
		// is nothing left to close.
		if err := h.Close(ctx); err != nil && !errors.Is(err, locks.ErrHandleClosed) && first == nil {
			first = err
		}
	}
	close(fsys.gcKick)
	<-fsys.gcDone
	close(fsys.pollStop)
	<-fsys.pollDone
	fsys.hint.close()
	fsys.watchHint.close()
	fsys.dirLeases.hint.close()
	fsys.collect(ctx)
	return first
}

// kickGC asks the background collector to remove deleted files' blobs
// (never blocks: deletes do not wait for blob I/O).
func (fsys *FileSystem) kickGC() {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	if fsys.closed {
		return
	}
	select {
	case fsys.gcKick <- struct{}{}:
	default:
	}
}

// collector runs collect whenever kicked, until Close.
func (fsys *FileSystem) collector(ctx context.Context) {
	defer close(fsys.gcDone)
	for range fsys.gcKick {
		fsys.collect(ctx)
	}
}

// ticks converts a time to 100 ns units since the Unix epoch.
func ticks(t time.Time) int64 { return t.UnixNano() / 100 }

// fromTicks is the inverse of ticks.
func fromTicks(v int64) time.Time { return time.Unix(0, v*100).UTC() }
