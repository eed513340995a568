package locks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestClassify: real driver errors get their sentinel, whatever wraps them,
// and keep the driver's error in the chain; others pass unchanged.
func TestClassify(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_pragma=journal_mode(WAL)")
	must(t, err)
	defer db.Close()
	db.SetMaxOpenConns(4)
	_, err = db.Exec(`CREATE TABLE t(x BLOB)`)
	must(t, err)
	_, err = db.Exec(`CREATE TABLE u(id INTEGER PRIMARY KEY, k TEXT); CREATE UNIQUE INDEX u_k ON u(k); INSERT INTO u VALUES(1, 'a')`)
	must(t, err)
	_, uniqueErr := db.Exec(`INSERT INTO u VALUES(2, 'a')`)
	_, pkErr := db.Exec(`INSERT INTO u VALUES(1, 'b')`)

	holder, err := db.Conn(ctx)
	must(t, err)
	defer holder.Close()
	_, err = holder.ExecContext(ctx, `BEGIN IMMEDIATE`)
	must(t, err)
	other, err := db.Conn(ctx)
	must(t, err)
	defer other.Close()
	_, busyErr := other.ExecContext(ctx, `BEGIN IMMEDIATE`)
	_, err = holder.ExecContext(ctx, `ROLLBACK`)
	must(t, err)

	_, noTxErr := other.ExecContext(ctx, `ROLLBACK`)
	_, noTableErr := other.ExecContext(ctx, `SELECT * FROM nope`)
	_, err = other.ExecContext(ctx, `PRAGMA max_page_count = 3`)
	must(t, err)
	_, fullErr := other.ExecContext(ctx, `INSERT INTO t VALUES(zeroblob(100000))`)
	_, syntaxErr := other.ExecContext(ctx, `SELEKT 1`)

	for _, tt := range []struct {
		name string
		err  error
		want error // nil: no sentinel
	}{
		{"busy", busyErr, ErrBusy},
		{"no transaction", noTxErr, ErrNoTransaction},
		{"no such table", noTableErr, ErrNoTable},
		{"full", fullErr, ErrStorageFull},
		{"unique index", uniqueErr, ErrUniqueViolation},
		{"primary key", pkErr, ErrPrimaryKeyViolation},
		{"syntax", syntaxErr, nil},
		{"no rows", sql.ErrNoRows, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the driver returned no error")
			}
			got := classify(fmt.Errorf("statement: %w", tt.err))
			sentinels := []error{ErrBusy, ErrNoTransaction, ErrNoTable, ErrStorageFull, ErrUniqueViolation, ErrPrimaryKeyViolation}
			for _, s := range sentinels {
				if errors.Is(got, s) != (s == tt.want) {
					t.Errorf("classify(%v): errors.Is(%v) = %v", tt.err, s, !(s == tt.want))
				}
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%v) lost the driver's error", tt.err)
			}
			if again := classify(got); again != got {
				t.Errorf("classify is not idempotent")
			}
		})
	}
}

// TestConnClassifies: errors of statements run through a Table's Conn —
// Exec, Query and a Row's Scan — come classified; no row stays
// sql.ErrNoRows.
func TestConnClassifies(t *testing.T) {
	ctx := context.Background()
	a := openTable(t, "", Options{})
	must(t, a.View(ctx, func(tx *Tx) error {
		c := tx.SQL()
		if _, err := c.ExecContext(ctx, `SELECT * FROM nope`); !errors.Is(err, ErrNoTable) {
			t.Errorf("Exec: %v", err)
		}
		if _, err := c.QueryContext(ctx, `SELECT * FROM nope`); !errors.Is(err, ErrNoTable) {
			t.Errorf("Query: %v", err)
		}
		var x int
		if err := c.QueryRowContext(ctx, `SELECT * FROM nope`).Scan(&x); !errors.Is(err, ErrNoTable) {
			t.Errorf("Row.Scan: %v", err)
		}
		if err := c.QueryRowContext(ctx, `SELECT 1 WHERE 0`).Scan(&x); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("Row.Scan of no row: %v", err)
		}
		return nil
	}))
}
