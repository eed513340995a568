package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/meta"
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
		{"busy", busyErr, meta.ErrBusy},
		{"no transaction", noTxErr, meta.ErrNoTransaction},
		{"no such table", noTableErr, meta.ErrNoTable},
		{"full", fullErr, meta.ErrStorageFull},
		{"unique index", uniqueErr, meta.ErrUniqueViolation},
		{"primary key", pkErr, meta.ErrPrimaryKeyViolation},
		{"syntax", syntaxErr, nil},
		{"no rows", sql.ErrNoRows, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the driver returned no error")
			}
			got := Classify(fmt.Errorf("statement: %w", tt.err))
			sentinels := []error{meta.ErrBusy, meta.ErrNoTransaction, meta.ErrNoTable, meta.ErrStorageFull, meta.ErrUniqueViolation, meta.ErrPrimaryKeyViolation}
			for _, s := range sentinels {
				if errors.Is(got, s) != (s == tt.want) {
					t.Errorf("Classify(%v): errors.Is(%v) = %v", tt.err, s, !(s == tt.want))
				}
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("Classify(%v) lost the driver's error", tt.err)
			}
			if again := Classify(got); again != got {
				t.Errorf("classify is not idempotent")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
