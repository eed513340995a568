package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/tablesvc"
)

// Part is the store's name in meta_schema.
const Part = "table"

// migrations are the store's schema, in order (see internal/pgdb).
var migrations = []string{
	`CREATE TABLE tb_tables (
		name_lower text COLLATE "C" PRIMARY KEY,
		name       text NOT NULL,
		acl        text NOT NULL DEFAULT '[]'
	);
	CREATE TABLE tb_entities (
		tbl   text COLLATE "C" NOT NULL,
		pk    text COLLATE "C" NOT NULL,
		rk    text COLLATE "C" NOT NULL,
		ts    bigint NOT NULL,
		props bytea NOT NULL,
		PRIMARY KEY (tbl, pk, rk)
	);
	CREATE TABLE tb_service (
		k text PRIMARY KEY,
		v bytea NOT NULL
	)`,
}

// Store is a tablesvc.Store on a PostgreSQL schema.
type Store struct {
	pool   *pgxpool.Pool
	schema string

	relocks atomic.Int64 // Write's reruns for keys out of order (for tests)
}

var _ tablesvc.Store = (*Store)(nil)

// Options tune Open.
type Options struct {
	MaxConns int32 // pool size (0: pgxpool's default)
}

// Open connects to connString (its search_path names the schema),
// migrating the schema if it is older than this build.
func Open(ctx context.Context, connString string, o Options) (*Store, error) {
	pool, schema, err := pgdb.Open(ctx, connString, pgdb.Options{MaxConns: o.MaxConns})
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := pgdb.Migrate(ctx, pool, schema, Part, migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return &Store{pool: pool, schema: schema}, nil
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func lower(name string) string { return strings.ToLower(name) }

func (s *Store) wrap(op, what string, err error) error {
	return fmt.Errorf("pgstore: %s %s: %w", op, what, pgdb.Classify(err))
}

func notFound(table string) error {
	return fmt.Errorf("table %s: %w", table, tablesvc.ErrTableNotFound)
}

// CreateTable implements tablesvc.Store.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO tb_tables(name_lower, name) VALUES($1, $2) ON CONFLICT(name_lower) DO NOTHING`,
		lower(name), name)
	if err != nil {
		return s.wrap("create table", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("table %s: %w", name, tablesvc.ErrTableExists)
	}
	return nil
}

// DeleteTable implements tablesvc.Store: the table row (locked by the
// DELETE, so running writes finish first) and then its entities, in one
// transaction; the second statement's snapshot sees every write that
// committed before the first.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	err := pgdb.Retry(ctx, func() error {
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `DELETE FROM tb_tables WHERE name_lower = $1`, lower(name))
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return notFound(name)
			}
			_, err = tx.Exec(ctx, `DELETE FROM tb_entities WHERE tbl = $1`, lower(name))
			return err
		})
	})
	if err != nil && !errors.Is(err, tablesvc.ErrTableNotFound) {
		return s.wrap("delete table", name, err)
	}
	return err
}

// Table implements tablesvc.Store.
func (s *Store) Table(ctx context.Context, name string) (tablesvc.Table, error) {
	var t tablesvc.Table
	err := s.pool.QueryRow(ctx, `SELECT name FROM tb_tables WHERE name_lower = $1`, lower(name)).Scan(&t.Name)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, notFound(name)
	}
	if err != nil {
		return t, s.wrap("read table", name, err)
	}
	return t, nil
}

// ScanTables implements tablesvc.Store.
func (s *Store) ScanTables(ctx context.Context, from string, yield func(tablesvc.Table) bool) error {
	rows, err := s.pool.Query(ctx, `SELECT name FROM tb_tables WHERE name_lower >= $1 ORDER BY name_lower`, lower(from))
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
	err := s.pool.QueryRow(ctx, `SELECT acl FROM tb_tables WHERE name_lower = $1`, lower(table)).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
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
	tag, err := s.pool.Exec(ctx, `UPDATE tb_tables SET acl = $1 WHERE name_lower = $2`, string(raw), lower(table))
	if err != nil {
		return s.wrap("set acl of", table, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(table)
	}
	return nil
}

const servicePropsKey = "properties"

// ServiceProperties implements tablesvc.Store.
func (s *Store) ServiceProperties(ctx context.Context) ([]byte, error) {
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT v FROM tb_service WHERE k = $1`, servicePropsKey).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("read service properties in", s.schema, err)
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, nil
}

// SetServiceProperties implements tablesvc.Store.
func (s *Store) SetServiceProperties(ctx context.Context, doc []byte) error {
	if doc == nil {
		doc = []byte{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tb_service(k, v) VALUES($1, $2) ON CONFLICT(k) DO UPDATE SET v = excluded.v`, servicePropsKey, doc)
	if err != nil {
		return s.wrap("write service properties in", s.schema, err)
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

// Get implements tablesvc.Store: the table's and the entity's absence in
// one statement.
func (s *Store) Get(ctx context.Context, table, pk, rk string) (tablesvc.Entity, error) {
	var ts *int64
	var props []byte
	err := s.pool.QueryRow(ctx, `SELECT e.ts, e.props FROM tb_tables t
		LEFT JOIN tb_entities e ON e.tbl = t.name_lower AND e.pk = $2 AND e.rk = $3
		WHERE t.name_lower = $1`, lower(table), pk, rk).Scan(&ts, &props)
	if errors.Is(err, pgx.ErrNoRows) {
		return tablesvc.Entity{}, notFound(table)
	}
	if err != nil {
		return tablesvc.Entity{}, s.wrap("read entity of", table, err)
	}
	if ts == nil {
		return tablesvc.Entity{}, fmt.Errorf("table %s entity (PartitionKey=%q, RowKey=%q): %w", table, pk, rk, tablesvc.ErrEntityNotFound)
	}
	e, err := decodeEntity(pk, rk, *ts, props)
	if err != nil {
		return e, s.wrap("decode", table, err)
	}
	return e, nil
}

// scanSQL builds Scan's statement so that the primary key (tbl, pk, rk)
// serves the tightest lower bound — above all the continuation (the same
// choices as sqlstore's, whose plans its tests check).
func scanSQL(table string, r tablesvc.KeyRange) (string, []any) {
	var b strings.Builder
	args := []any{lower(table)}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString(`SELECT pk, rk, ts, props FROM tb_entities WHERE tbl = $1`)
	bound := func(col string, bd tablesvc.Bound, low bool) {
		if !bd.Set {
			return
		}
		op := map[[2]bool]string{{true, true}: ">=", {true, false}: ">", {false, true}: "<=", {false, false}: "<"}[[2]bool{low, bd.Inclusive}]
		b.WriteString(" AND " + col + " " + op + " " + param(bd.Value))
	}
	after, rkLow := r.After, r.RKLow
	if r.PKLow.Set && r.PKHigh.Set && r.PKLow.Inclusive && r.PKHigh.Inclusive && r.PKLow.Value == r.PKHigh.Value {
		pk := r.PKLow.Value
		b.WriteString(" AND pk = " + param(pk))
		if after != nil {
			switch {
			case after.PK > pk:
				b.WriteString(" AND false") // the walk is past this partition
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
		b.WriteString(" AND (pk, rk) >= (" + param(after.PK) + ", " + param(after.RK) + ")")
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

// fetchRows is how many rows Scan fetches from its cursor at a time: a
// stop mid-fetch reads (and discards) the rest of that fetch.
const fetchRows = 64

// Scan implements tablesvc.Store: one snapshot, a cursor read fetchRows at
// a time, each row decoded and yielded as it arrives.
func (s *Store) Scan(ctx context.Context, table string, r tablesvc.KeyRange, yield func(tablesvc.Entity) bool) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.wrap("scan", table, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM tb_tables WHERE name_lower = $1`, lower(table)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(table)
	}
	if err != nil {
		return s.wrap("scan", table, err)
	}
	q, args := scanSQL(table, r)
	if _, err := tx.Exec(ctx, `DECLARE scan NO SCROLL CURSOR FOR `+q, args...); err != nil {
		return s.wrap("scan", table, err)
	}
	for {
		rows, err := tx.Query(ctx, `FETCH `+strconv.Itoa(fetchRows)+` FROM scan`)
		if err != nil {
			return s.wrap("scan", table, err)
		}
		n, stop, err := s.yieldRows(rows, table, yield)
		if err != nil || stop || n < fetchRows {
			return err
		}
	}
}

// yieldRows hands one fetch's rows to yield as they arrive (yield runs
// no statement, so the connection may stay busy meanwhile). After a
// stop, closing rows reads the rest of this fetch only.
func (s *Store) yieldRows(rows pgx.Rows, table string, yield func(tablesvc.Entity) bool) (n int, stop bool, err error) {
	defer rows.Close()
	for rows.Next() {
		n++
		var pk, rk string
		var ts int64
		var props []byte
		if err := rows.Scan(&pk, &rk, &ts, &props); err != nil {
			return n, true, s.wrap("scan", table, err)
		}
		e, err := decodeEntity(pk, rk, ts, props)
		if err != nil {
			return n, true, s.wrap("decode", table, err)
		}
		if !yield(e) {
			return n, true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return n, true, s.wrap("scan", table, err)
	}
	return n, false, nil
}
