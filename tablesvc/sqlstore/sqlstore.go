package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/blobshare/blobshare/meta/sqlmeta"
	"github.com/blobshare/blobshare/tablesvc"
)

// FileName is the database file's name in the data directory.
const FileName = "table.db"

const (
	busyTimeoutMS = 5000
	maxReaders    = 4
)

const schema = `
CREATE TABLE IF NOT EXISTS tb_tables (
	name_lower TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	acl        TEXT NOT NULL DEFAULT '[]'
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tb_entities (
	tbl   TEXT NOT NULL,
	pk    TEXT NOT NULL,
	rk    TEXT NOT NULL,
	ts    INTEGER NOT NULL,
	props BLOB NOT NULL,
	PRIMARY KEY (tbl, pk, rk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tb_service (
	k TEXT PRIMARY KEY,
	v BLOB NOT NULL
);
`

// Store is a tablesvc.Store on one SQLite file.
type Store struct {
	path   string
	writer *sql.DB
	reader *sql.DB

	// Statements prepared once (parsing them was 40% of a batch's cost):
	// the writer's, and the readers' keyed by their SQL text (Scan has one
	// per combination of bounds, at most 32).
	existsStmt, getStmt, putStmt, delStmt *sql.Stmt
	insertStmt, pointStmt                 *sql.Stmt
	savepointStmt, releaseStmt, undoStmt  *sql.Stmt
	readMu                                sync.Mutex
	readStmts                             map[string]*sql.Stmt

	// Group commit (groupcommit.go): writes queue here, and whoever holds
	// lead (a one-slot semaphore a waiter can give up on) commits every
	// queued write in one transaction.
	queueMu sync.Mutex
	queue   []*groupWrite
	lead    chan struct{}
	// queuedHook, if set (tests), is called with the queue's length after
	// each write joins it, under queueMu.
	queuedHook func(n int)
	// groupHook, if set (tests), is called with each group's size by the
	// leader that commits it.
	groupHook func(n int)
}

// The writer's statements.
const (
	existsSQL = `SELECT 1 FROM tb_tables WHERE name_lower = ?`
	getSQL    = `SELECT ts, props FROM tb_entities WHERE tbl = ? AND pk = ? AND rk = ?`
	putSQL    = `INSERT INTO tb_entities(tbl, pk, rk, ts, props) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(tbl, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`
	delSQL    = `DELETE FROM tb_entities WHERE tbl = ? AND pk = ? AND rk = ?`
	insertSQL = `INSERT INTO tb_entities(tbl, pk, rk, ts, props) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(tbl, pk, rk) DO NOTHING`
)

// pointSQL is Get's statement: the table's and the entity's absence told
// apart in one read.
const pointSQL = `SELECT e.ts, e.props FROM tb_tables t
	LEFT JOIN tb_entities e ON e.tbl = t.name_lower AND e.pk = ?2 AND e.rk = ?3
	WHERE t.name_lower = ?1`

var _ tablesvc.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlmeta.OpenStore(ctx, path, schemaPart, sqlmeta.StoreOptions{BusyTimeout: busyTimeoutMS * time.Millisecond, MaxReaders: maxReaders})
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	st := &Store{path: path, writer: db.Writer, reader: db.Reader, readStmts: map[string]*sql.Stmt{}, lead: make(chan struct{}, 1)}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{{&st.existsStmt, existsSQL}, {&st.getStmt, getSQL}, {&st.putStmt, putSQL}, {&st.delStmt, delSQL},
		{&st.insertStmt, insertSQL}, {&st.pointStmt, pointSQL},
		{&st.savepointStmt, savepointSQL}, {&st.releaseStmt, releaseSQL}, {&st.undoStmt, undoSQL}} {
		if *p.dst, err = st.writer.PrepareContext(ctx, p.sql); err != nil {
			st.Close()
			return nil, fmt.Errorf("sqlstore: prepare statements on %s: %w", path, err)
		}
	}
	return st, nil
}

// Close closes the database.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.existsStmt, s.getStmt, s.putStmt, s.delStmt, s.insertStmt, s.pointStmt,
		s.savepointStmt, s.releaseStmt, s.undoStmt} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	s.readMu.Lock()
	for _, st := range s.readStmts {
		errs = append(errs, st.Close())
	}
	s.readMu.Unlock()
	return errors.Join(append(errs, s.reader.Close(), s.writer.Close())...)
}

// readStmt returns the reader pool's prepared statement for query.
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if st, ok := s.readStmts[query]; ok {
		return st, nil
	}
	st, err := s.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.readStmts[query] = st
	return st, nil
}

func lower(name string) string { return strings.ToLower(name) }

func (s *Store) wrap(op, what string, err error) error {
	return fmt.Errorf("sqlstore: %s %s: %w", op, what, err)
}

func notFound(table string) error {
	return fmt.Errorf("table %s: %w", table, tablesvc.ErrTableNotFound)
}

// CreateTable implements tablesvc.Store.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	res, err := s.writer.ExecContext(ctx, `INSERT INTO tb_tables(name_lower, name) VALUES(?, ?) ON CONFLICT(name_lower) DO NOTHING`,
		lower(name), name)
	if err != nil {
		return s.wrap("create table", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("table %s: %w", name, tablesvc.ErrTableExists)
	}
	return nil
}

// DeleteTable implements tablesvc.Store: the table row and its entities go
// in one transaction.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("delete table", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, `DELETE FROM tb_tables WHERE name_lower = ?`, lower(name))
	if err != nil {
		return s.wrap("delete table", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(name)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tb_entities WHERE tbl = ?`, lower(name)); err != nil {
		return s.wrap("delete entities of", name, err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("delete table", name, err)
	}
	return nil
}

// Table implements tablesvc.Store.
func (s *Store) Table(ctx context.Context, name string) (tablesvc.Table, error) {
	var t tablesvc.Table
	err := s.reader.QueryRowContext(ctx, `SELECT name FROM tb_tables WHERE name_lower = ?`, lower(name)).Scan(&t.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound(name)
	}
	if err != nil {
		return t, s.wrap("read table", name, err)
	}
	return t, nil
}

// ScanTables implements tablesvc.Store.
func (s *Store) ScanTables(ctx context.Context, from string, yield func(tablesvc.Table) bool) error {
	rows, err := s.reader.QueryContext(ctx, `SELECT name FROM tb_tables WHERE name_lower >= ? ORDER BY name_lower`, lower(from))
	if err != nil {
		return s.wrap("list tables from", from, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t tablesvc.Table
		if err := rows.Scan(&t.Name); err != nil {
			return s.wrap("list tables from", from, err)
		}
		if !yield(t) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap("list tables from", from, err)
	}
	return nil
}

// ACL implements tablesvc.Store.
func (s *Store) ACL(ctx context.Context, table string) ([]tablesvc.SignedIdentifier, error) {
	var raw string
	err := s.reader.QueryRowContext(ctx, `SELECT acl FROM tb_tables WHERE name_lower = ?`, lower(table)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(table)
	}
	if err != nil {
		return nil, s.wrap("read acl of", table, err)
	}
	var ids []tablesvc.SignedIdentifier
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, s.wrap("decode acl of", table, err)
	}
	return ids, nil
}

// SetACL implements tablesvc.Store.
func (s *Store) SetACL(ctx context.Context, table string, ids []tablesvc.SignedIdentifier) error {
	if ids == nil {
		ids = []tablesvc.SignedIdentifier{}
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return s.wrap("encode acl of", table, err)
	}
	res, err := s.writer.ExecContext(ctx, `UPDATE tb_tables SET acl = ? WHERE name_lower = ?`, string(raw), lower(table))
	if err != nil {
		return s.wrap("set acl of", table, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(table)
	}
	return nil
}

const servicePropsKey = "properties"

// ServiceProperties implements tablesvc.Store.
func (s *Store) ServiceProperties(ctx context.Context) ([]byte, error) {
	var doc []byte
	err := s.reader.QueryRowContext(ctx, `SELECT v FROM tb_service WHERE k = ?`, servicePropsKey).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("read service properties in", s.path, err)
	}
	return doc, nil
}

// SetServiceProperties implements tablesvc.Store.
func (s *Store) SetServiceProperties(ctx context.Context, doc []byte) error {
	if doc == nil {
		doc = []byte{}
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO tb_service(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v`, servicePropsKey, doc)
	if err != nil {
		return s.wrap("write service properties in", s.path, err)
	}
	return nil
}

// decodeEntity builds an entity from its row.
func decodeEntity(pk, rk string, ts int64, props []byte) (tablesvc.Entity, error) {
	p, err := tablesvc.DecodeProps(props)
	if err != nil {
		return tablesvc.Entity{}, fmt.Errorf("entity (%q, %q): %w", pk, rk, err)
	}
	return tablesvc.Entity{PartitionKey: pk, RowKey: rk, Timestamp: tablesvc.FromTicks(ts), Props: p}, nil
}

// Get implements tablesvc.Store. A missing table is told from a missing
// entity in the same statement, which the writer's connection runs for
// the group-commit leader (groupcommit.go).
func (s *Store) Get(ctx context.Context, table, pk, rk string) (tablesvc.Entity, error) {
	r := &pointRead{pk: pk, rk: rk}
	if err := s.submit(&groupWrite{ctx: ctx, table: table, read: r, ready: make(chan struct{})}); err != nil {
		return tablesvc.Entity{}, err
	}
	return r.e, nil
}

// pointRead runs one queued Get on the writer's connection, in tx (a
// group's transaction before its writes) or, if tx is nil, on its own.
func (s *Store) pointRead(tx *txStmts, w *groupWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	var ts sql.NullInt64
	var props []byte
	r := w.read
	st := s.pointStmt
	if tx != nil {
		st = tx.stmt(st)
	}
	err := st.QueryRowContext(noCancel, lower(w.table), r.pk, r.rk).Scan(&ts, &props)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(w.table)
	}
	if err != nil {
		return s.wrap("read entity of", w.table, err)
	}
	if !ts.Valid {
		return fmt.Errorf("table %s entity (PartitionKey=%q, RowKey=%q): %w", w.table, r.pk, r.rk, tablesvc.ErrEntityNotFound)
	}
	if r.e, err = decodeEntity(r.pk, r.rk, ts.Int64, props); err != nil {
		return s.wrap("decode", w.table, err)
	}
	return nil
}

// scanSQL builds Scan's statement so that the primary key (tbl, pk, rk)
// serves the tightest lower bound — above all the continuation, or every
// page of a walk would read again from the start of the range. In one
// partition (pk = ?) the continuation becomes a RowKey bound; across
// partitions it is a row-value comparison, unless the PartitionKey bound
// is already past it.
func scanSQL(table string, r tablesvc.KeyRange) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT pk, rk, ts, props FROM tb_entities WHERE tbl = ?`)
	args := []any{lower(table)}
	bound := func(col string, bd tablesvc.Bound, low bool) {
		if !bd.Set {
			return
		}
		op := map[[2]bool]string{{true, true}: ">=", {true, false}: ">", {false, true}: "<=", {false, false}: "<"}[[2]bool{low, bd.Inclusive}]
		b.WriteString(" AND " + col + " " + op + " ?")
		args = append(args, bd.Value)
	}
	after, rkLow := r.After, r.RKLow
	if r.PKLow.Set && r.PKHigh.Set && r.PKLow.Inclusive && r.PKHigh.Inclusive && r.PKLow.Value == r.PKHigh.Value {
		pk := r.PKLow.Value
		b.WriteString(" AND pk = ?")
		args = append(args, pk)
		if after != nil {
			switch {
			case after.PK > pk:
				b.WriteString(" AND 0") // the walk is past this partition
			case after.PK == pk:
				rkLow = tighterLow(rkLow, tablesvc.Bound{Set: true, Value: after.RK, Inclusive: true})
			}
			after = nil
		}
	} else {
		pkLow := r.PKLow
		if after != nil && pkLow.Set {
			if after.PK > pkLow.Value || after.PK == pkLow.Value && pkLow.Inclusive {
				pkLow = tablesvc.Bound{} // the continuation implies it
			} else {
				after = nil // every pk past pkLow is past the continuation
			}
		}
		bound("pk", pkLow, true)
		bound("pk", r.PKHigh, false)
	}
	bound("rk", rkLow, true)
	bound("rk", r.RKHigh, false)
	if after != nil {
		b.WriteString(" AND (pk, rk) >= (?, ?)")
		args = append(args, after.PK, after.RK)
	}
	b.WriteString(" ORDER BY pk, rk")
	return b.String(), args
}

// tighterLow is the stricter of two lower bounds.
func tighterLow(a, b tablesvc.Bound) tablesvc.Bound {
	switch {
	case !a.Set:
		return b
	case !b.Set:
		return a
	case a.Value != b.Value:
		if a.Value > b.Value {
			return a
		}
		return b
	case !a.Inclusive:
		return a
	}
	return b
}

// Scan implements tablesvc.Store: one read transaction, rows decoded one at
// a time as yield asks for them.
func (s *Store) Scan(ctx context.Context, table string, r tablesvc.KeyRange, yield func(tablesvc.Entity) bool) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.wrap("scan", table, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	q, args := scanSQL(table, r)
	exists, err := s.readStmt(ctx, existsSQL)
	if err != nil {
		return s.wrap("scan", table, err)
	}
	scan, err := s.readStmt(ctx, q)
	if err != nil {
		return s.wrap("scan", table, err)
	}
	var one int
	err = tx.StmtContext(ctx, exists).QueryRowContext(ctx, lower(table)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(table)
	}
	if err != nil {
		return s.wrap("scan", table, err)
	}
	rows, err := tx.StmtContext(ctx, scan).QueryContext(ctx, args...)
	if err != nil {
		return s.wrap("scan", table, err)
	}
	defer rows.Close()
	var props sql.RawBytes // DecodeProps copies what it keeps
	for rows.Next() {
		var pk, rk string
		var ts int64
		if err := rows.Scan(&pk, &rk, &ts, &props); err != nil {
			return s.wrap("scan", table, err)
		}
		e, err := decodeEntity(pk, rk, ts, props)
		if err != nil {
			return s.wrap("decode", table, err)
		}
		if !yield(e) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap("scan", table, err)
	}
	return nil
}

// noCancel is the context of every statement of a group (storeTx's and
// the point reads'): a caller that gives up must not interrupt a statement
// of a transaction others share (SQLite may roll an interrupted
// transaction back whole), and a context that can end costs modernc a
// watcher goroutine and a progress handler per statement. Each request's
// own context is checked before its turn instead.
var noCancel = context.Background()

// storeTx is tablesvc.Tx on one group's transaction.
type storeTx struct {
	s       *Store
	tx      *txStmts
	table   string
	tbl     string // its key: the lower-cased name
	changed bool   // a change was tried (Put, Insert or Delete)
}

func (t *storeTx) Get(_ context.Context, pk, rk string) (tablesvc.Entity, bool, error) {
	var ts int64
	var props []byte
	err := t.tx.stmt(t.s.getStmt).QueryRowContext(noCancel, t.tbl, pk, rk).Scan(&ts, &props)
	if errors.Is(err, sql.ErrNoRows) {
		return tablesvc.Entity{}, false, nil
	}
	if err != nil {
		return tablesvc.Entity{}, false, t.s.wrap("read entity of", t.table, err)
	}
	e, err := decodeEntity(pk, rk, ts, props)
	if err != nil {
		return e, false, t.s.wrap("decode", t.table, err)
	}
	return e, true, nil
}

// Insert implements tablesvc.Inserter: one statement that writes e only
// if its keys are free.
func (t *storeTx) Insert(_ context.Context, e tablesvc.Entity) (bool, error) {
	before := t.changed
	t.changed = true // until the statement is known to have changed nothing
	res, err := t.tx.stmt(t.s.insertStmt).ExecContext(noCancel, t.tbl, e.PartitionKey, e.RowKey, tablesvc.Ticks(e.Timestamp), tablesvc.EncodeProps(nil, e.Props))
	if err != nil {
		return false, t.s.wrap("insert entity of", t.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.s.wrap("insert entity of", t.table, err)
	}
	if n == 0 {
		t.changed = before // the keys were taken: nothing written
	}
	return n == 1, nil
}

func (t *storeTx) Put(_ context.Context, e tablesvc.Entity) error {
	t.changed = true
	_, err := t.tx.stmt(t.s.putStmt).ExecContext(noCancel, t.tbl, e.PartitionKey, e.RowKey, tablesvc.Ticks(e.Timestamp), tablesvc.EncodeProps(nil, e.Props))
	if err != nil {
		return t.s.wrap("write entity of", t.table, err)
	}
	return nil
}

func (t *storeTx) Delete(_ context.Context, pk, rk string) error {
	t.changed = true
	_, err := t.tx.stmt(t.s.delStmt).ExecContext(noCancel, t.tbl, pk, rk)
	if err != nil {
		return t.s.wrap("delete entity of", t.table, err)
	}
	return nil
}

var (
	_ tablesvc.SingleWriter = (*Store)(nil)
	_ tablesvc.Inserter     = (*storeTx)(nil)
)
