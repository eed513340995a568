package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/blobshare/blobshare/internal/pgtest"
)

// TestPrivateHaltResume: a Private cluster stopped fast, then immediately,
// refuses connections while halted, and after each Resume serves again on
// the same data directory: a row committed before the stop is still
// there (a fast stop checkpoints; an immediate one recovers from the WAL).
func TestPrivateHaltResume(t *testing.T) {
	if _, err := pgtest.BinDir(); err != nil {
		t.Skip(err) // TestMissingPostgres covers the missing server
	}
	c := pgtest.Private(t)
	conn := c.Schema(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	db.Close(ctx)
	for i, mode := range []string{"fast", "immediate"} {
		if err := c.Halt(mode); err != nil {
			t.Fatal(err)
		}
		if _, err := pgx.Connect(ctx, conn); err == nil {
			t.Fatalf("%s: a connection while halted", mode)
		}
		if err := c.Resume(); err != nil {
			t.Fatal(err)
		}
		db, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Fatalf("%s: after Resume: %v", mode, err)
		}
		var n int
		err = db.QueryRow(ctx, `INSERT INTO kept VALUES (2) RETURNING (SELECT count(*) FROM kept)`).Scan(&n)
		db.Close(ctx)
		if err != nil || n != i+1 {
			t.Fatalf("%s: %d rows before this insert, %v; want %d", mode, n, err, i+1)
		}
	}
}
