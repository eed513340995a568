package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// TestEnsure: a part is created at its version, accepted at it, migrated
// one version at a time from an older one, and refused — with a
// *meta.SchemaError naming the directory and both versions — when no
// migrations lead to this build's version (newer, unversioned without a
// migration to 1, a step missing). Both places a version can be recorded
// (a (name, value) table's row, PRAGMA user_version) behave alike.
func TestEnsure(t *testing.T) {
	const ddl = `CREATE TABLE p_items (id INTEGER PRIMARY KEY, a TEXT NOT NULL DEFAULT '', b TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS p_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);`
	migrations := []Migration{
		{To: 2, Apply: AddColumns(Column{"p_items", "a", "TEXT NOT NULL DEFAULT ''"})},
		{To: 3, DDL: `ALTER TABLE p_items ADD COLUMN b TEXT NOT NULL DEFAULT ''`},
	}
	for _, table := range []string{"p_meta", ""} {
		// setVersion is what a build that recorded version v left.
		setVersion := func(v string) string {
			if table == "" {
				return `PRAGMA user_version = ` + v + `;`
			}
			return `CREATE TABLE IF NOT EXISTS p_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL); INSERT INTO p_meta VALUES('schema', ` + v + `);`
		}
		for _, tc := range []struct {
			name  string
			setup string // SQL run before Ensure
			ms    []Migration
			found int64 // the version refused; -1: Ensure succeeds
		}{
			{"fresh", "", migrations, -1},
			{"current", ddl + setVersion("3"), migrations, -1},
			{"newer", ddl + setVersion("4"), migrations, 4},
			{"version 1, migrated", `CREATE TABLE p_items (id INTEGER PRIMARY KEY);` + setVersion("1"), migrations, -1},
			{"version 1, a step missing", `CREATE TABLE p_items (id INTEGER PRIMARY KEY);` + setVersion("1"), migrations[1:], 1},
			{"unversioned, no migration to 1", `CREATE TABLE p_items (id INTEGER PRIMARY KEY);`, migrations, 0},
			{"unversioned, adopted", `CREATE TABLE p_items (id INTEGER PRIMARY KEY, a TEXT NOT NULL DEFAULT '');`,
				append([]Migration{{To: 1, DDL: `CREATE TABLE IF NOT EXISTS p_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`}}, migrations...), -1},
		} {
			t.Run(cmpName(table)+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "p.db")
				d := openBare(t, path)
				ctx := context.Background()
				if tc.setup != "" {
					_, err := d.SQL().ExecContext(ctx, tc.setup)
					must(t, err)
				}
				p := Part{Name: "test part", Marker: "p_items", Version: 3, DDL: ddl, Migrations: tc.ms, VersionTable: table}
				err := d.Update(ctx, func(tx *Tx) error { return Ensure(ctx, tx.Conn(), path, p) })
				if tc.found >= 0 {
					var se *meta.SchemaError
					if !errors.Is(err, meta.ErrIncompatibleSchema) || !errors.As(err, &se) {
						t.Fatalf("Ensure: %v, want a *meta.SchemaError", err)
					}
					if se.Found != tc.found || se.Want != 3 || se.Dir != dir || se.Part != "test part" {
						t.Fatalf("SchemaError %+v, want found %d want 3 in %s", se, tc.found, dir)
					}
					return
				}
				must(t, err)
				if v := recorded(t, d, table); v != 3 {
					t.Fatalf("recorded version %d, want 3", v)
				}
				// Every column of version 3 is there.
				_, err = d.SQL().ExecContext(ctx, `INSERT INTO p_items(id, a, b) VALUES(1, 'x', 'y')`)
				must(t, err)
				// And again: the recorded version is accepted, nothing runs.
				must(t, d.Update(ctx, func(tx *Tx) error { return Ensure(ctx, tx.Conn(), path, p) }))
			})
		}
	}
}

func cmpName(table string) string {
	if table == "" {
		return "user_version"
	}
	return table
}

// recorded reads the version Ensure recorded.
func recorded(t *testing.T, d *DB, table string) int64 {
	t.Helper()
	q := `PRAGMA user_version`
	if table != "" {
		q = `SELECT value FROM ` + table + ` WHERE name = 'schema'`
	}
	var v int64
	must(t, d.SQL().QueryRowContext(t.Context(), q).Scan(&v))
	return v
}

// TestOpenStore: a store's part is created and recorded as user_version;
// the writer writes, the readers see it and cannot write; a table added to
// the DDL is created at the next open; a file of a newer store is
// refused; a bad schema fails naming the file and leaves nothing.
func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s p.db") // a space: the path is escaped in the DSN
	part := Part{Name: "t", Marker: "t", Version: 1, DDL: `CREATE TABLE IF NOT EXISTS t(x INTEGER)`,
		Migrations: []Migration{{To: 1, DDL: `CREATE TABLE IF NOT EXISTS t(x INTEGER)`}}}
	db, err := OpenStore(ctx, path, part, StoreOptions{BusyTimeout: time.Second, MaxReaders: 2})
	must(t, err)
	if _, err := db.Writer.ExecContext(ctx, `INSERT INTO t VALUES(7)`); err != nil {
		t.Fatal(err)
	}
	var x, v int
	if err := db.Reader.QueryRowContext(ctx, `SELECT x, (SELECT user_version FROM pragma_user_version) FROM t`).Scan(&x, &v); err != nil || x != 7 || v != 1 {
		t.Fatalf("reader sees %d at version %d, %v; want 7 at 1", x, v, err)
	}
	if _, err := db.Reader.ExecContext(ctx, `INSERT INTO t VALUES(8)`); err == nil {
		t.Fatal("a reader connection wrote")
	}
	if s := db.Writer.Stats(); s.MaxOpenConnections != 1 {
		t.Fatalf("writer allows %d connections, want 1", s.MaxOpenConnections)
	}
	must(t, db.Close())
	// A table added to the DDL at the same version appears at the next
	// open: a store's DDL runs at every open (OpenStore).
	grown := part
	grown.DDL += `; CREATE TABLE IF NOT EXISTS u(y INTEGER)`
	db, err = OpenStore(ctx, path, grown, StoreOptions{MaxReaders: 1})
	must(t, err)
	if _, err := db.Writer.ExecContext(ctx, `INSERT INTO u VALUES(1)`); err != nil {
		t.Fatalf("the table added at the same version: %v", err)
	}
	_, err = db.Writer.ExecContext(ctx, `PRAGMA user_version = 2`)
	must(t, err)
	must(t, db.Close())
	if _, err := OpenStore(ctx, path, part, StoreOptions{MaxReaders: 1}); !errors.Is(err, meta.ErrIncompatibleSchema) {
		t.Fatalf("a store of version 2 opened by a build of version 1: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.db")
	if _, err := OpenStore(ctx, bad, Part{Name: "t", Marker: "t", Version: 1, DDL: `NOT SQL`}, StoreOptions{MaxReaders: 1}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a bad schema: %v, want an error naming %s", err, bad)
	}
	// Nothing was left half created.
	raw, err := sql.Open("sqlite", "file:"+bad)
	must(t, err)
	defer raw.Close()
	var n int
	must(t, raw.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n))
	if n != 0 {
		t.Fatalf("%d schema objects after a failed create", n)
	}
}
