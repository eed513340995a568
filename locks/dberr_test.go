package locks

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

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
