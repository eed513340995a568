package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/tablesvc"
)

// errRelock ends a run of fn that needs a key below one it holds and could
// not take it at once: Write runs fn again with every key it learned
// locked first, in order.
var errRelock = errors.New("pgstore: key out of order, relock")

// maxRelocks bounds the reruns for new keys (a Service write learns its
// keys in one run; a rerun only happens when a try-lock fails).
const maxRelocks = 100

// Write implements tablesvc.Store (the package doc explains the locking):
// fn runs in a READ COMMITTED transaction whose Tx takes each entity's
// advisory lock before touching it.
func (s *Store) Write(ctx context.Context, table string, fn func(tablesvc.Tx) error) error {
	var keys []int64 // learned keys, locked first on a rerun
	for range maxRelocks {
		var t *storeTx
		err := pgdb.Retry(ctx, func() error {
			var err error
			t, err = s.writeOnce(ctx, table, keys, fn)
			return err
		})
		if t != nil && t.relock {
			keys = t.learned()
			s.relocks.Add(1)
			continue
		}
		if err != nil && pgdbError(err) {
			return s.wrap("write", table, err)
		}
		return err
	}
	return fmt.Errorf("pgstore: write %s: keys still out of order after %d runs", table, maxRelocks)
}

// pgdbError says whether err came from the database (and needs the
// store's wrapping) rather than from fn or a sentinel of tablesvc.
func pgdbError(err error) bool {
	return errors.Is(err, pgdb.ErrRetry) || errors.Is(err, pgdb.ErrUniqueViolation) || errors.Is(err, errDB)
}

// errDB marks a driver error met by storeTx or writeOnce.
var errDB = errors.New("database")

func dbErr(err error) error { return fmt.Errorf("%w: %w", errDB, pgdb.Classify(err)) }

// writeOnce is one run of fn: lock keys (sorted) first, check the table,
// run fn, commit.
func (s *Store) writeOnce(ctx context.Context, table string, keys []int64, fn func(tablesvc.Tx) error) (*storeTx, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, dbErr(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	t := &storeTx{s: s, tx: tx, table: table, tbl: lower(table), held: map[int64]bool{}}
	if len(keys) > 0 {
		// One statement per key, in ascending order, in one round trip.
		b := &pgx.Batch{}
		for _, k := range keys {
			b.Queue(`SELECT pg_advisory_xact_lock($1)`, k)
			t.held[k] = true
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return nil, dbErr(err)
		}
		t.max = keys[len(keys)-1]
	}
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM tb_tables WHERE name_lower = $1 FOR KEY SHARE`, t.tbl).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(table)
	}
	if err != nil {
		return nil, dbErr(err)
	}
	if err := fn(t); err != nil || t.relock {
		return t, err
	}
	if err := tx.Commit(ctx); err != nil {
		return t, dbErr(err)
	}
	return t, nil
}

// storeTx is tablesvc.Tx on one pgx transaction.
type storeTx struct {
	s     *Store
	tx    pgx.Tx
	table string
	tbl   string // the table's key: its lower-cased name

	held   map[int64]bool
	max    int64 // the greatest key held (valid when held is not empty)
	relock bool  // a try-lock failed: fn must run again
}

// learned returns the keys this run held or wanted, sorted.
func (t *storeTx) learned() []int64 {
	ks := make([]int64, 0, len(t.held))
	for k := range t.held {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// lock takes the entity's advisory lock before its row is touched: a
// blocking wait if the key is above every key held, else only a try.
func (t *storeTx) lock(ctx context.Context, pk, rk string) error {
	if t.relock {
		return errRelock
	}
	k := pgdb.Key(t.s.schema, t.tbl, pk, rk)
	if t.held[k] {
		return nil
	}
	if len(t.held) == 0 || k > t.max {
		if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, k); err != nil {
			return dbErr(err)
		}
		t.held[k], t.max = true, k
		return nil
	}
	var ok bool
	if err := t.tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, k).Scan(&ok); err != nil {
		return dbErr(err)
	}
	t.held[k] = true // held now, or wanted first in the next run
	if !ok {
		t.relock = true
		return errRelock
	}
	return nil
}

func (t *storeTx) Get(ctx context.Context, pk, rk string) (tablesvc.Entity, bool, error) {
	if err := t.lock(ctx, pk, rk); err != nil {
		return tablesvc.Entity{}, false, err
	}
	var ts int64
	var props []byte
	err := t.tx.QueryRow(ctx, `SELECT ts, props FROM tb_entities WHERE tbl = $1 AND pk = $2 AND rk = $3`, t.tbl, pk, rk).Scan(&ts, &props)
	if errors.Is(err, pgx.ErrNoRows) {
		return tablesvc.Entity{}, false, nil
	}
	if err != nil {
		return tablesvc.Entity{}, false, dbErr(err)
	}
	e, err := decodeEntity(pk, rk, ts, props)
	if err != nil {
		return e, false, t.s.wrap("decode", t.table, err)
	}
	return e, true, nil
}

func (t *storeTx) Put(ctx context.Context, e tablesvc.Entity) error {
	if err := t.lock(ctx, e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO tb_entities(tbl, pk, rk, ts, props) VALUES($1, $2, $3, $4, $5)
		ON CONFLICT(tbl, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`,
		t.tbl, e.PartitionKey, e.RowKey, tablesvc.Ticks(e.Timestamp), tablesvc.EncodeProps(nil, e.Props))
	if err != nil {
		return dbErr(err)
	}
	return nil
}

func (t *storeTx) Delete(ctx context.Context, pk, rk string) error {
	if err := t.lock(ctx, pk, rk); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM tb_entities WHERE tbl = $1 AND pk = $2 AND rk = $3`, t.tbl, pk, rk); err != nil {
		return dbErr(err)
	}
	return nil
}
