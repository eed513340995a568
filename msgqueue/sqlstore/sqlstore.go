// Package sqlstore is the SQLite implementation of msgqueue.Store: one
// database file (queue.db in --data) holding queues, messages and the
// service properties.
//
// Every message change is one conditional statement keyed by what the
// caller last saw: Claim updates rows only while they are still visible
// (WHERE next_visible <= now), Delete and Update only while the row still
// carries the caller's pop receipt. Nothing relies on SQLite's
// database-wide write lock for correctness, so PostgreSQL can run the same
// statements under READ COMMITTED (Claim's subquery then wants FOR UPDATE
// SKIP LOCKED, an optimisation, not a condition of correctness).
//
// The statements that put, take, delete and update messages are
// prepared once and run under one mutex that also covers the clock read
// of the last three, so a get reads a time no older than any put
// committed before it (msgqueue.Store's doc). That ordering holds within
// one process; gateways in several processes on one database would need
// the time read inside the database's own write lock.
//
// Writes go through one connection (SQLite has one writer anyway; this
// avoids busy-waiting between the process's own writers); reads use a
// small pool of reader connections (WAL lets them run beside the writer).
// synchronous=NORMAL in WAL mode: a process crash (SIGKILL) loses no
// committed statement, which is what "acknowledged" means to a client.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/blobshare/blobshare/meta/sqlmeta"
	"github.com/blobshare/blobshare/msgqueue"
)

// FileName is the database file's name in the data directory.
const FileName = "queue.db"

const (
	busyTimeoutMS = 5000
	maxReaders    = 4
)

const schema = `
CREATE TABLE IF NOT EXISTS mq_queues (
	name     TEXT PRIMARY KEY,
	metadata TEXT NOT NULL,
	acl      TEXT NOT NULL DEFAULT '[]',
	created  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mq_messages (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	queue         TEXT NOT NULL,
	id            TEXT NOT NULL,
	body          TEXT NOT NULL,
	inserted      INTEGER NOT NULL,
	expires       INTEGER NOT NULL,
	next_visible  INTEGER NOT NULL,
	dequeue_count INTEGER NOT NULL DEFAULT 0,
	receipt       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mq_messages_next ON mq_messages(queue, next_visible, seq);
CREATE UNIQUE INDEX IF NOT EXISTS mq_messages_id ON mq_messages(queue, id);
CREATE INDEX IF NOT EXISTS mq_messages_expires ON mq_messages(expires);
CREATE TABLE IF NOT EXISTS mq_service (
	k TEXT PRIMARY KEY,
	v BLOB NOT NULL
);
`

// Store is a msgqueue.Store on one SQLite file.
type Store struct {
	path   string
	writer *sql.DB // one connection
	reader *sql.DB // read-only pool

	// messageMu orders the statements that put, take, delete and update
	// messages, and the clock reads of the last three (msgqueue.Store's
	// doc says why). They are prepared once: parsing them was half of a
	// get's cost.
	messageMu                                  sync.Mutex
	insertStmt, claimStmt, deleteStmt, updStmt *sql.Stmt
}

// The prepared message statements.
const (
	insertSQL = `INSERT INTO mq_messages(queue, id, body, inserted, expires, next_visible, dequeue_count, receipt)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, 0, ?7 WHERE EXISTS (SELECT 1 FROM mq_queues WHERE name = ?1)`
	claimSQL = `UPDATE mq_messages
		SET next_visible = ?1, receipt = ?2 || '.' || seq, dequeue_count = dequeue_count + 1
		WHERE seq IN (SELECT seq FROM mq_messages WHERE queue = ?3 AND next_visible <= ?4 AND expires > ?4
		              ORDER BY next_visible, seq LIMIT ?5)
		  AND next_visible <= ?4 AND expires > ?4
		RETURNING ` + messageColumns + `, seq`
	deleteSQL = `DELETE FROM mq_messages WHERE queue = ? AND id = ? AND receipt = ? AND expires > ?`
	updateSQL = `UPDATE mq_messages SET receipt = ?1, next_visible = ?2, body = COALESCE(?3, body)
		WHERE queue = ?4 AND id = ?5 AND receipt = ?6 AND expires > ?7
		RETURNING ` + messageColumns
)

var _ msgqueue.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlmeta.OpenStore(ctx, path, schemaPart, sqlmeta.StoreOptions{BusyTimeout: busyTimeoutMS * time.Millisecond, MaxReaders: maxReaders})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	w := db.Writer
	st := &Store{path: path, writer: w, reader: db.Reader}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{{&st.insertStmt, insertSQL}, {&st.claimStmt, claimSQL}, {&st.deleteStmt, deleteSQL}, {&st.updStmt, updateSQL}} {
		if *p.dst, err = w.PrepareContext(ctx, p.sql); err != nil {
			st.Close()
			return nil, fmt.Errorf("sqlstore: prepare statements on %s: %w", path, err)
		}
	}
	return st, nil
}

// Close closes the database.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.insertStmt, s.claimStmt, s.deleteStmt, s.updStmt} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(append(errs, s.reader.Close(), s.writer.Close())...)
}

// messageWrite runs f holding messageMu.
func (s *Store) messageWrite(f func() error) error {
	s.messageMu.Lock()
	defer s.messageMu.Unlock()
	return f()
}

func ms(t time.Time) int64     { return t.UnixMilli() }
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }
func (s *Store) wrap(op, what string, err error) error {
	return fmt.Errorf("sqlstore: %s %s: %w", op, what, err)
}

func encodeJSON(v any) string {
	b, _ := json.Marshal(v) // maps of strings and slices of structs of strings always marshal
	return string(b)
}

// queueExists answers ErrQueueNotFound for a missing queue.
func (s *Store) queueExists(ctx context.Context, db *sql.DB, name string) error {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM mq_queues WHERE name = ?`, name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("queue %s: %w", name, msgqueue.ErrQueueNotFound)
	}
	if err != nil {
		return s.wrap("read queue", name, err)
	}
	return nil
}

// CreateQueue implements msgqueue.Store.
func (s *Store) CreateQueue(ctx context.Context, name string, md map[string]string, now time.Time) (bool, map[string]string, error) {
	if md == nil {
		md = map[string]string{}
	}
	res, err := s.writer.ExecContext(ctx, `INSERT INTO mq_queues(name, metadata, created) VALUES(?, ?, ?) ON CONFLICT(name) DO NOTHING`,
		name, encodeJSON(md), ms(now))
	if err != nil {
		return false, nil, s.wrap("create queue", name, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil, nil
	}
	var raw string
	err = s.writer.QueryRowContext(ctx, `SELECT metadata FROM mq_queues WHERE name = ?`, name).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) { // deleted in between: try again
		return s.CreateQueue(ctx, name, md, now)
	}
	if err != nil {
		return false, nil, s.wrap("read queue", name, err)
	}
	existing := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &existing); err != nil {
		return false, nil, s.wrap("decode metadata of", name, err)
	}
	return false, existing, nil
}

// DeleteQueue implements msgqueue.Store.
func (s *Store) DeleteQueue(ctx context.Context, name string) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("delete queue", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM mq_queues WHERE name = ?`, name)
	if err != nil {
		return s.wrap("delete queue", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("queue %s: %w", name, msgqueue.ErrQueueNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mq_messages WHERE queue = ?`, name); err != nil {
		return s.wrap("delete messages of", name, err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("delete queue", name, err)
	}
	return nil
}

// Queue implements msgqueue.Store.
func (s *Store) Queue(ctx context.Context, name string, now time.Time) (msgqueue.QueueInfo, error) {
	q := msgqueue.QueueInfo{Name: name}
	var raw string
	err := s.reader.QueryRowContext(ctx, `SELECT metadata,
		(SELECT COUNT(*) FROM mq_messages WHERE queue = ?1 AND expires > ?2)
		FROM mq_queues WHERE name = ?1`, name, ms(now)).Scan(&raw, &q.ApproximateMessages)
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("queue %s: %w", name, msgqueue.ErrQueueNotFound)
	}
	if err != nil {
		return q, s.wrap("read queue", name, err)
	}
	if err := json.Unmarshal([]byte(raw), &q.Metadata); err != nil {
		return q, s.wrap("decode metadata of", name, err)
	}
	return q, nil
}

// SetMetadata implements msgqueue.Store.
func (s *Store) SetMetadata(ctx context.Context, name string, md map[string]string) error {
	if md == nil {
		md = map[string]string{}
	}
	return s.setColumn(ctx, name, "metadata", encodeJSON(md))
}

// setColumn sets metadata or acl of an existing queue.
func (s *Store) setColumn(ctx context.Context, name, column, value string) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE mq_queues SET `+column+` = ? WHERE name = ?`, value, name)
	if err != nil {
		return s.wrap("set "+column+" of", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("queue %s: %w", name, msgqueue.ErrQueueNotFound)
	}
	return nil
}

// ACL implements msgqueue.Store.
func (s *Store) ACL(ctx context.Context, name string) ([]msgqueue.SignedIdentifier, error) {
	var raw string
	err := s.reader.QueryRowContext(ctx, `SELECT acl FROM mq_queues WHERE name = ?`, name).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("queue %s: %w", name, msgqueue.ErrQueueNotFound)
	}
	if err != nil {
		return nil, s.wrap("read acl of", name, err)
	}
	var ids []msgqueue.SignedIdentifier
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, s.wrap("decode acl of", name, err)
	}
	return ids, nil
}

// SetACL implements msgqueue.Store.
func (s *Store) SetACL(ctx context.Context, name string, ids []msgqueue.SignedIdentifier) error {
	if ids == nil {
		ids = []msgqueue.SignedIdentifier{}
	}
	return s.setColumn(ctx, name, "acl", encodeJSON(ids))
}

// ListQueues implements msgqueue.Store.
func (s *Store) ListQueues(ctx context.Context, prefix, from string, limit int) ([]msgqueue.QueueInfo, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT name, metadata FROM mq_queues
		WHERE name >= ? AND substr(name, 1, ?) = ? ORDER BY name LIMIT ?`, from, len(prefix), prefix, limit)
	if err != nil {
		return nil, s.wrap("list queues", prefix, err)
	}
	defer rows.Close()
	var out []msgqueue.QueueInfo
	for rows.Next() {
		var q msgqueue.QueueInfo
		var raw string
		if err := rows.Scan(&q.Name, &raw); err != nil {
			return nil, s.wrap("list queues", prefix, err)
		}
		if err := json.Unmarshal([]byte(raw), &q.Metadata); err != nil {
			return nil, s.wrap("decode metadata of", q.Name, err)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list queues", prefix, err)
	}
	return out, nil
}

// Insert implements msgqueue.Store: one statement that inserts only while
// the queue exists.
func (s *Store) Insert(ctx context.Context, queue string, m msgqueue.Message) error {
	var res sql.Result
	err := s.messageWrite(func() (err error) {
		res, err = s.insertStmt.ExecContext(ctx, queue, m.ID, m.Text, ms(m.Inserted), ms(m.Expires), ms(m.NextVisible), m.PopReceipt)
		return err
	})
	if err != nil {
		return s.wrap("put message in", queue, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("queue %s: %w", queue, msgqueue.ErrQueueNotFound)
	}
	return nil
}

const messageColumns = `id, body, inserted, expires, next_visible, dequeue_count, receipt`

type scanner interface{ Scan(dest ...any) error }

func scanMessage(r scanner, seq *int64) (msgqueue.Message, error) {
	var m msgqueue.Message
	var ins, exp, vis int64
	dest := []any{&m.ID, &m.Text, &ins, &exp, &vis, &m.DequeueCount, &m.PopReceipt}
	if seq != nil {
		dest = append(dest, seq)
	}
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.Inserted, m.Expires, m.NextVisible = fromMS(ins), fromMS(exp), fromMS(vis)
	return m, nil
}

// Claim implements msgqueue.Store: one UPDATE whose outer WHERE repeats
// the visibility condition, so a row another claimer took between the
// subquery and the update is not taken twice. The clock is read holding
// messageMu (see msgqueue.Store).
func (s *Store) Claim(ctx context.Context, queue string, now func() time.Time, n int, visibility time.Duration, receiptPrefix string) ([]msgqueue.Message, error) {
	type claimed struct {
		m   msgqueue.Message
		seq int64
	}
	var got []claimed
	err := s.messageWrite(func() error {
		t := now()
		rows, err := s.claimStmt.QueryContext(ctx, ms(t.Add(visibility)), receiptPrefix, queue, ms(t), n)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c claimed
			if c.m, err = scanMessage(rows, &c.seq); err != nil {
				rows.Close()
				return err
			}
			got = append(got, c)
		}
		return errors.Join(rows.Err(), rows.Close())
	})
	if err != nil {
		return nil, s.wrap("get messages of", queue, err)
	}
	if len(got) == 0 {
		if err := s.queueExists(ctx, s.reader, queue); err != nil {
			return nil, err
		}
		return []msgqueue.Message{}, nil
	}
	slices.SortFunc(got, func(a, b claimed) int { return int(a.seq - b.seq) })
	out := make([]msgqueue.Message, len(got))
	for i, c := range got {
		out[i] = c.m
	}
	return out, nil
}

// Peek implements msgqueue.Store.
func (s *Store) Peek(ctx context.Context, queue string, now time.Time, n int) ([]msgqueue.Message, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+messageColumns+` FROM mq_messages
		WHERE queue = ?1 AND next_visible <= ?2 AND expires > ?2 ORDER BY next_visible, seq LIMIT ?3`, queue, ms(now), n)
	if err != nil {
		return nil, s.wrap("peek messages of", queue, err)
	}
	defer rows.Close()
	out := []msgqueue.Message{}
	for rows.Next() {
		m, err := scanMessage(rows, nil)
		if err != nil {
			return nil, s.wrap("peek messages of", queue, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("peek messages of", queue, err)
	}
	if len(out) == 0 {
		if err := s.queueExists(ctx, s.reader, queue); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Delete implements msgqueue.Store: keyed by the pop receipt.
func (s *Store) Delete(ctx context.Context, queue, id, receipt string, now func() time.Time) error {
	var n int64
	err := s.messageWrite(func() error {
		res, err := s.deleteStmt.ExecContext(ctx, queue, id, receipt, ms(now()))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return s.wrap("delete message "+id+" of", queue, err)
	}
	if n == 1 {
		return nil
	}
	return s.missing(ctx, queue, id)
}

// missing tells a missing queue from a missing or stale message.
func (s *Store) missing(ctx context.Context, queue, id string) error {
	if err := s.queueExists(ctx, s.writer, queue); err != nil {
		return err
	}
	return fmt.Errorf("queue %s: message %s: %w", queue, id, msgqueue.ErrMessageNotFound)
}

// Update implements msgqueue.Store: keyed by the pop receipt.
func (s *Store) Update(ctx context.Context, queue, id, receipt string, now func() time.Time, newReceipt string, visibility time.Duration, text *string) (msgqueue.Message, error) {
	var body sql.NullString
	if text != nil {
		body = sql.NullString{String: *text, Valid: true}
	}
	var m msgqueue.Message
	err := s.messageWrite(func() (err error) {
		t := now()
		m, err = scanMessage(s.updStmt.QueryRowContext(ctx, newReceipt, ms(t.Add(visibility)), body, queue, id, receipt, ms(t)), nil)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return m, s.missing(ctx, queue, id)
	}
	if err != nil {
		return m, s.wrap("update message "+id+" of", queue, err)
	}
	return m, nil
}

// Clear implements msgqueue.Store.
func (s *Store) Clear(ctx context.Context, queue string) error {
	if err := s.queueExists(ctx, s.writer, queue); err != nil {
		return err
	}
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM mq_messages WHERE queue = ?`, queue); err != nil {
		return s.wrap("clear messages of", queue, err)
	}
	return nil
}

// Sweep implements msgqueue.Store.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM mq_messages WHERE expires <= ?`, ms(now))
	if err != nil {
		return 0, s.wrap("sweep", s.path, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// ServiceProperties implements msgqueue.Store.
func (s *Store) ServiceProperties(ctx context.Context) ([]byte, error) {
	var doc []byte
	err := s.reader.QueryRowContext(ctx, `SELECT v FROM mq_service WHERE k = 'properties'`).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("read service properties", s.path, err)
	}
	return doc, nil
}

// SetServiceProperties implements msgqueue.Store.
func (s *Store) SetServiceProperties(ctx context.Context, doc []byte) error {
	_, err := s.writer.ExecContext(ctx, `INSERT INTO mq_service(k, v) VALUES('properties', ?)
		ON CONFLICT(k) DO UPDATE SET v = excluded.v`, doc)
	if err != nil {
		return s.wrap("set service properties", s.path, err)
	}
	return nil
}
