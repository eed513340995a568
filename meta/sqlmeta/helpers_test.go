package sqlmeta

import (
	"fmt"
	"path/filepath"
	"testing"
)

// openDB opens a DB on path (a fresh file when "") with a (name, value)
// table kv, closed when the test ends.
func openDB(tb testing.TB, path string) *DB {
	tb.Helper()
	d := openBare(tb, path)
	if err := d.Update(tb.Context(), func(tx *Tx) error {
		_, err := tx.Exec(`CREATE TABLE IF NOT EXISTS kv (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return d
}

// openBare opens a DB on path (a fresh file when "") without tables,
// closed when the test ends.
func openBare(tb testing.TB, path string) *DB {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "meta.db")
	}
	d, err := Open(path, Options{Name: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return d
}

// commitRows commits n kv rows named prefixNNNN, one per transaction.
func commitRows(t *testing.T, d *DB, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := d.Update(t.Context(), func(tx *Tx) error {
			_, err := tx.Exec(`INSERT INTO kv(name, value) VALUES(?, ?)`, fmt.Sprintf("%s%04d", prefix, i), i)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}
