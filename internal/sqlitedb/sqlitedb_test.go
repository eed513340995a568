package sqlitedb

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestOpen: the schema is applied, the writer writes, the readers see it
// and cannot write, and a bad schema fails naming the file.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s p.db") // a space: the path is escaped in the DSN
	db, err := Open(ctx, path, `CREATE TABLE IF NOT EXISTS t(x INTEGER)`, Options{BusyTimeout: time.Second, MaxReaders: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Writer.ExecContext(ctx, `INSERT INTO t VALUES(7)`); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := db.Reader.QueryRowContext(ctx, `SELECT x FROM t`).Scan(&x); err != nil || x != 7 {
		t.Fatalf("reader sees %d, %v; want 7", x, err)
	}
	if _, err := db.Reader.ExecContext(ctx, `INSERT INTO t VALUES(8)`); err == nil {
		t.Fatal("a reader connection wrote")
	}
	if s := db.Writer.Stats(); s.MaxOpenConnections != 1 {
		t.Fatalf("writer allows %d connections, want 1", s.MaxOpenConnections)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "bad.db"), `NOT SQL`, Options{MaxReaders: 1}); err == nil {
		t.Fatal("a bad schema opened")
	}
}
