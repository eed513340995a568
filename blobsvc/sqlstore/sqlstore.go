// Package sqlstore is the SQLite implementation of blobsvc.Store: one
// database file (blob.db in --data) holding containers, blobs (one JSON
// document per blob: properties, metadata, committed block list, lease),
// staged blocks, soft-deleted blobs (deleted.go) and the service
// properties.
//
// Writes go through one connection (SQLite has one writer anyway); reads
// use a small pool of reader connections beside it (WAL). Every method is
// one statement or one transaction. Driver errors are classified by the
// engine (sqlmeta.Classify): busy or locked → blobsvc.ErrServerBusy.
//
// Transactions commit with synchronous=NORMAL (durable against a crash of
// the process); Sync (blobsvc.DurableStore) makes everything committed
// before it durable against a power cut too, with one fsync of the log
// for all concurrent callers (internal/walsync).
//
// Several processes may serve one database: per-blob claims (claims.go)
// make each conditional write atomic across them, and claims and commit
// intents name their owner session (package locks, UseOwners), so any
// process resolves a dead owner's intent and none a live one's (claim.go;
// blobsvc/doc.go says how).
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/internal/walsync"
	"github.com/blobshare/blobshare/meta"
	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// FileName is the database file's name in the data directory.
const FileName = "blob.db"

const (
	busyTimeoutMS = 5000
	maxReaders    = 4
)

const schema = `
CREATE TABLE IF NOT EXISTS bs_containers (
	name TEXT PRIMARY KEY,
	doc  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bs_blobs (
	container TEXT NOT NULL,
	name      TEXT NOT NULL,
	snapshot  TEXT NOT NULL DEFAULT '', -- '' for the base blob
	doc       TEXT NOT NULL,
	PRIMARY KEY (container, name, snapshot)
);
CREATE TABLE IF NOT EXISTS bs_staged (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	container TEXT NOT NULL,
	name      TEXT NOT NULL,
	block_id  TEXT NOT NULL,
	store_id  TEXT NOT NULL,
	size      INTEGER NOT NULL,
	staged_at INTEGER NOT NULL DEFAULT 0 -- Unix seconds; 0: unknown (before this column)
);
CREATE UNIQUE INDEX IF NOT EXISTS bs_staged_id ON bs_staged(container, name, block_id);
CREATE TABLE IF NOT EXISTS bs_intents (
	container TEXT NOT NULL,
	name      TEXT NOT NULL,
	drop_uncommitted INTEGER NOT NULL,
	doc       TEXT NOT NULL,
	owner     TEXT NOT NULL DEFAULT '', -- the writer's owner session (claim.go); '': none, never alive
	PRIMARY KEY (container, name)
);
CREATE TABLE IF NOT EXISTS bs_deleted (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	container  TEXT NOT NULL,
	name       TEXT NOT NULL,
	snapshot   TEXT NOT NULL DEFAULT '', -- '' for a soft-deleted base blob
	expires_at INTEGER NOT NULL,         -- Unix nanoseconds: when it is purged
	doc        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bs_deleted_name ON bs_deleted(container, name, snapshot);
CREATE TABLE IF NOT EXISTS bs_deleted_containers (
	name       TEXT NOT NULL,
	version    TEXT NOT NULL,
	expires_at INTEGER NOT NULL, -- Unix nanoseconds: when it is purged
	doc        TEXT NOT NULL,
	PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS bs_service (
	k TEXT PRIMARY KEY,
	v BLOB NOT NULL
);
`

// Store is a blobsvc.Store on one SQLite file.
type Store struct {
	writer *sql.DB // one connection
	reader *sql.DB // read-only pool
	wal    *walsync.Syncer
	path   string
	own    ownerState // the owner session of claims and intents (claim.go)
	held   heldClaims // the per-blob claims this store holds (claims.go)
}

var (
	_ blobsvc.Store        = (*Store)(nil)
	_ blobsvc.DurableStore = (*Store)(nil)
)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlmeta.OpenStore(ctx, path, schemaPart, sqlmeta.StoreOptions{BusyTimeout: busyTimeoutMS * time.Millisecond, MaxReaders: maxReaders})
	if err != nil {
		return nil, fmt.Errorf("blob sqlstore: %w", classify(err))
	}
	return &Store{writer: db.Writer, reader: db.Reader, wal: walsync.New(path), path: path}, nil
}

// Sync implements blobsvc.DurableStore: it syncs the database's log (WAL,
// committed with synchronous=NORMAL), one fsync for every caller that
// arrived before it started (internal/walsync).
func (s *Store) Sync(ctx context.Context) error { return s.wal.Sync(ctx) }

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// classify adds blobsvc.ErrServerBusy to the errors the engine classifies
// as busy (sqlmeta.Classify: busy or locked), keeping the driver's error
// in the chain.
func classify(err error) error {
	if err = sqlmeta.Classify(err); errors.Is(err, meta.ErrBusy) {
		return fmt.Errorf("%w: %w", blobsvc.ErrServerBusy, err)
	}
	return err
}

func wrap(op, what string, err error) error {
	return fmt.Errorf("blob sqlstore: %s %s: %w", op, what, classify(err))
}

func encode(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// CreateContainer implements blobsvc.Store.
func (s *Store) CreateContainer(ctx context.Context, c blobsvc.Container) error {
	doc, err := encode(c)
	if err != nil {
		return err
	}
	res, err := s.exec(ctx, `INSERT INTO bs_containers(name, doc) VALUES(?, ?) ON CONFLICT(name) DO NOTHING`, c.Name, doc)
	if err != nil {
		return wrap("create container", c.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("container %s: %w", c.Name, blobsvc.ErrContainerExists)
	}
	return nil
}

// Container implements blobsvc.Store.
func (s *Store) Container(ctx context.Context, name string) (blobsvc.Container, error) {
	var c blobsvc.Container
	var doc string
	err := s.reader.QueryRowContext(ctx, `SELECT doc FROM bs_containers WHERE name = ?`, name).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound)
	}
	if err != nil {
		return c, wrap("read container", name, err)
	}
	if err := json.Unmarshal([]byte(doc), &c); err != nil {
		return c, wrap("decode container", name, err)
	}
	return c, nil
}

// UpdateContainer implements blobsvc.Store.
func (s *Store) UpdateContainer(ctx context.Context, c blobsvc.Container) error {
	doc, err := encode(c)
	if err != nil {
		return err
	}
	res, err := s.execFor(ctx, c.Name, "", `UPDATE bs_containers SET doc = ? WHERE name = ?`, doc, c.Name)
	if err != nil {
		return wrap("update container", c.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("container %s: %w", c.Name, blobsvc.ErrContainerNotFound)
	}
	return nil
}

// DeleteContainer implements blobsvc.Store.
func (s *Store) DeleteContainer(ctx context.Context, name string) ([]string, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, wrap("delete container", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM bs_containers WHERE name = ?`, name)
	if err != nil {
		return nil, wrap("delete container", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("container %s: %w", name, blobsvc.ErrContainerNotFound)
	}
	rows, err := tx.QueryContext(ctx, `SELECT json_extract(doc, '$.ContentKey') FROM bs_blobs WHERE container = ?
		UNION ALL SELECT json_extract(doc, '$.ContentKey') FROM bs_deleted WHERE container = ?`, name, name)
	if err != nil {
		return nil, wrap("list blobs of", name, err)
	}
	var keys []string
	for rows.Next() {
		var k sql.NullString
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, wrap("list blobs of", name, err)
		}
		if k.Valid && k.String != "" {
			keys = append(keys, k.String)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, wrap("list blobs of", name, err)
	}
	for _, q := range []string{`DELETE FROM bs_blobs WHERE container = ?`, `DELETE FROM bs_staged WHERE container = ?`, `DELETE FROM bs_intents WHERE container = ?`, `DELETE FROM bs_deleted WHERE container = ?`} {
		if _, err := tx.ExecContext(ctx, q, name); err != nil {
			return nil, wrap("delete blobs of", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("delete container", name, err)
	}
	return keys, nil
}

// ListContainers implements blobsvc.Store.
func (s *Store) ListContainers(ctx context.Context, prefix, from string, limit int) ([]blobsvc.Container, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT doc FROM bs_containers WHERE name >= ? AND substr(name, 1, ?) = ? ORDER BY name LIMIT ?`,
		from, len(prefix), prefix, limit)
	if err != nil {
		return nil, wrap("list containers", prefix, err)
	}
	defer rows.Close()
	var out []blobsvc.Container
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, wrap("list containers", prefix, err)
		}
		var c blobsvc.Container
		if err := json.Unmarshal([]byte(doc), &c); err != nil {
			return nil, wrap("decode container in listing", prefix, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list containers", prefix, err)
	}
	return out, nil
}

// Blob implements blobsvc.Store.
func (s *Store) Blob(ctx context.Context, container, name string) (blobsvc.Blob, error) {
	var b blobsvc.Blob
	var doc string
	err := s.reader.QueryRowContext(ctx, `SELECT doc FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ''`, container, name).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("blob %s/%s: %w", container, name, blobsvc.ErrBlobNotFound)
	}
	if err != nil {
		return b, wrap("read blob", container+"/"+name, err)
	}
	if err := json.Unmarshal([]byte(doc), &b); err != nil {
		return b, wrap("decode blob", container+"/"+name, err)
	}
	return b, nil
}

// PutBlob implements blobsvc.Store; a b with a Snapshot stores that
// snapshot.
func (s *Store) PutBlob(ctx context.Context, b blobsvc.Blob, dropUncommitted bool) error {
	what := b.Container + "/" + b.Name
	doc, err := encode(b)
	if err != nil {
		return err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("put blob", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := s.fenceBlob(ctx, tx, b.Container, b.Name); err != nil {
		return err
	}
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM bs_containers WHERE name = ?`, b.Container).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("container %s: %w", b.Container, blobsvc.ErrContainerNotFound)
	}
	if err != nil {
		return wrap("put blob", what, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bs_blobs(container, name, snapshot, doc) VALUES(?, ?, ?, ?)
		ON CONFLICT(container, name, snapshot) DO UPDATE SET doc = excluded.doc`, b.Container, b.Name, b.Snapshot, doc); err != nil {
		return wrap("put blob", what, err)
	}
	if dropUncommitted {
		if _, err := tx.ExecContext(ctx, `DELETE FROM bs_staged WHERE container = ? AND name = ?`, b.Container, b.Name); err != nil {
			return wrap("drop staged blocks of", what, err)
		}
	}
	if b.Snapshot == "" {
		if _, err := tx.ExecContext(ctx, `DELETE FROM bs_intents WHERE container = ? AND name = ?`, b.Container, b.Name); err != nil {
			return wrap("drop the commit intent of", what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("put blob", what, err)
	}
	return nil
}

// DeleteBlob implements blobsvc.Store.
func (s *Store) DeleteBlob(ctx context.Context, container, name string) error {
	what := container + "/" + name
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("delete blob", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := s.fenceBlob(ctx, tx, container, name); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ''`, container, name)
	if err != nil {
		return wrap("delete blob", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("blob %s: %w", what, blobsvc.ErrBlobNotFound)
	}
	for _, q := range []string{`DELETE FROM bs_staged WHERE container = ? AND name = ?`, `DELETE FROM bs_intents WHERE container = ? AND name = ?`} {
		if _, err := tx.ExecContext(ctx, q, container, name); err != nil {
			return wrap("drop staged blocks and intent of", what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("delete blob", what, err)
	}
	return nil
}

// ListBlobs implements blobsvc.Store. Names compare bytewise (SQLite's
// BINARY collation on UTF-8), the order Azure lists in.
func (s *Store) ListBlobs(ctx context.Context, container, prefix, from string, limit int) ([]blobsvc.Blob, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT doc FROM bs_blobs WHERE container = ? AND snapshot = '' AND name >= ?
		AND substr(CAST(name AS BLOB), 1, ?) = CAST(? AS BLOB) ORDER BY name LIMIT ?`,
		container, from, len(prefix), prefix, limit)
	if err != nil {
		return nil, wrap("list blobs of", container, err)
	}
	defer rows.Close()
	var out []blobsvc.Blob
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, wrap("list blobs of", container, err)
		}
		var b blobsvc.Blob
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			return nil, wrap("decode blob in listing of", container, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list blobs of", container, err)
	}
	return out, nil
}

// StageBlock implements blobsvc.Store. Re-staging an id keeps its place
// in the uncommitted list and takes the new data.
func (s *Store) StageBlock(ctx context.Context, container, name string, b blobsvc.Block, at time.Time) error {
	what := container + "/" + name
	tx, err := s.begin(ctx)
	if err != nil {
		return wrap("stage block of", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM bs_containers WHERE name = ?`, container).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("container %s: %w", container, blobsvc.ErrContainerNotFound)
	}
	if err != nil {
		return wrap("stage block of", what, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bs_staged(container, name, block_id, store_id, size, staged_at) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(container, name, block_id) DO UPDATE SET store_id = excluded.store_id, size = excluded.size, staged_at = excluded.staged_at`,
		container, name, b.ID, b.StoreID, b.Size, at.Unix()); err != nil {
		return wrap("stage block of", what, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap("stage block of", what, err)
	}
	return nil
}

// UncommittedBlocks implements blobsvc.Store.
func (s *Store) UncommittedBlocks(ctx context.Context, container, name string, limit int) ([]blobsvc.Block, error) {
	what := container + "/" + name
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT block_id, store_id, size FROM bs_staged WHERE container = ? AND name = ? ORDER BY seq LIMIT ?`,
		container, name, limit)
	if err != nil {
		return nil, wrap("list staged blocks of", what, err)
	}
	defer rows.Close()
	var out []blobsvc.Block
	for rows.Next() {
		var b blobsvc.Block
		if err := rows.Scan(&b.ID, &b.StoreID, &b.Size); err != nil {
			return nil, wrap("list staged blocks of", what, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list staged blocks of", what, err)
	}
	return out, nil
}

// StagedStoreIDs implements blobsvc.Store.
func (s *Store) StagedStoreIDs(ctx context.Context, fn func(storeID string) error) error {
	rows, err := s.reader.QueryContext(ctx, `SELECT store_id FROM bs_staged`)
	if err != nil {
		return wrap("list staged blocks of", "every blob", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return wrap("list staged blocks of", "every blob", err)
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return wrap("list staged blocks of", "every blob", err)
	}
	return nil
}

// ExpireStaged implements blobsvc.Store.
func (s *Store) ExpireStaged(ctx context.Context, before, now time.Time) ([]blobsvc.BlobName, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, wrap("expire staged blocks of", "every blob", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `UPDATE bs_staged SET staged_at = ? WHERE staged_at = 0`, now.Unix()); err != nil {
		return nil, wrap("date staged blocks of", "every blob", err)
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM bs_staged WHERE staged_at < ? RETURNING container, name`, before.Unix())
	if err != nil {
		return nil, wrap("expire staged blocks of", "every blob", err)
	}
	seen := map[blobsvc.BlobName]bool{}
	var out []blobsvc.BlobName
	for rows.Next() {
		var b blobsvc.BlobName
		if err := rows.Scan(&b.Container, &b.Name); err != nil {
			rows.Close()
			return nil, wrap("expire staged blocks of", "every blob", err)
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, wrap("expire staged blocks of", "every blob", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("expire staged blocks of", "every blob", err)
	}
	return out, nil
}

// ServiceProperties implements blobsvc.Store.
func (s *Store) ServiceProperties(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.reader.QueryRowContext(ctx, `SELECT v FROM bs_service WHERE k = 'properties'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("read", "service properties", err)
	}
	return v, nil
}

// SetServiceProperties implements blobsvc.Store.
func (s *Store) SetServiceProperties(ctx context.Context, doc []byte) error {
	if _, err := s.exec(ctx, `INSERT INTO bs_service(k, v) VALUES('properties', ?)
		ON CONFLICT(k) DO UPDATE SET v = excluded.v`, doc); err != nil {
		return wrap("write", "service properties", err)
	}
	return nil
}

// Snapshot implements blobsvc.Store.
func (s *Store) Snapshot(ctx context.Context, container, name, snapshot string) (blobsvc.Blob, error) {
	var b blobsvc.Blob
	var doc string
	err := s.reader.QueryRowContext(ctx, `SELECT doc FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ?`,
		container, name, snapshot).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) || snapshot == "" {
		return b, fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, blobsvc.ErrBlobNotFound)
	}
	if err != nil {
		return b, wrap("read snapshot of", container+"/"+name, err)
	}
	if err := json.Unmarshal([]byte(doc), &b); err != nil {
		return b, wrap("decode snapshot of", container+"/"+name, err)
	}
	return b, nil
}

// Snapshots implements blobsvc.Store.
func (s *Store) Snapshots(ctx context.Context, container, name string) ([]blobsvc.Blob, error) {
	what := container + "/" + name
	rows, err := s.reader.QueryContext(ctx, `SELECT doc FROM bs_blobs WHERE container = ? AND name = ? AND snapshot != '' ORDER BY snapshot`,
		container, name)
	if err != nil {
		return nil, wrap("list snapshots of", what, err)
	}
	defer rows.Close()
	var out []blobsvc.Blob
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, wrap("list snapshots of", what, err)
		}
		var b blobsvc.Blob
		if err := json.Unmarshal([]byte(doc), &b); err != nil {
			return nil, wrap("decode snapshot of", what, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list snapshots of", what, err)
	}
	return out, nil
}

// DeleteSnapshot implements blobsvc.Store.
func (s *Store) DeleteSnapshot(ctx context.Context, container, name, snapshot string) error {
	res, err := s.execFor(ctx, container, name, `DELETE FROM bs_blobs WHERE container = ? AND name = ? AND snapshot = ? AND snapshot != ''`,
		container, name, snapshot)
	if err != nil {
		return wrap("delete snapshot of", container+"/"+name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, blobsvc.ErrBlobNotFound)
	}
	return nil
}

// PutIntent implements blobsvc.Store: the intent names this store's
// owner session (claim.go); under a claim taken over since it records
// none (blobsvc.ErrClaimLost), as it writes nothing else.
func (s *Store) PutIntent(ctx context.Context, b blobsvc.Blob, dropUncommitted bool) error {
	doc, err := encode(b)
	if err != nil {
		return err
	}
	me := s.owners().Owner()
	if _, err := s.execFor(ctx, b.Container, b.Name, `INSERT INTO bs_intents(container, name, drop_uncommitted, doc, owner) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(container, name) DO UPDATE SET drop_uncommitted = excluded.drop_uncommitted, doc = excluded.doc, owner = excluded.owner`,
		b.Container, b.Name, dropUncommitted, doc, me); err != nil {
		return wrap("record the commit intent of", b.Container+"/"+b.Name, err)
	}
	return nil
}

// DeleteIntent implements blobsvc.Store.
func (s *Store) DeleteIntent(ctx context.Context, container, name string) error {
	if _, err := s.execFor(ctx, container, name, `DELETE FROM bs_intents WHERE container = ? AND name = ?`, container, name); err != nil {
		return wrap("drop the commit intent of", container+"/"+name, err)
	}
	return nil
}

// Intents implements blobsvc.Store: the intents of dead owners — a crash
// left them. A live owner's intent is a commit in progress (or one its
// claim's next holder resolves) and is never listed; an intent without an
// owner (a database from before owners) is a dead one's.
func (s *Store) Intents(ctx context.Context) ([]blobsvc.Intent, error) {
	o := s.owners()
	type row struct {
		in    blobsvc.Intent
		owner string
	}
	var rows []row
	err := func() error {
		rs, err := s.reader.QueryContext(ctx, `SELECT drop_uncommitted, doc, owner FROM bs_intents ORDER BY container, name`)
		if err != nil {
			return wrap("list", "commit intents", err)
		}
		defer rs.Close()
		for rs.Next() {
			var r row
			var doc string
			if err := rs.Scan(&r.in.DropUncommitted, &doc, &r.owner); err != nil {
				return wrap("list", "commit intents", err)
			}
			if err := json.Unmarshal([]byte(doc), &r.in.Blob); err != nil {
				return wrap("decode", "commit intent", err)
			}
			rows = append(rows, r)
		}
		if err := rs.Err(); err != nil {
			return wrap("list", "commit intents", err)
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	// Judged after the query: a dead owner never comes back, and the
	// judgement reads the lock table's database.
	var out []blobsvc.Intent
	for _, r := range rows {
		if r.owner != "" {
			alive, err := o.Alive(ctx, r.owner)
			if err != nil {
				return nil, fmt.Errorf("blob sqlstore: intent of %s/%s: is owner %s alive: %w", r.in.Blob.Container, r.in.Blob.Name, r.owner, err)
			}
			if alive {
				continue
			}
		}
		out = append(out, r.in)
	}
	return out, nil
}
