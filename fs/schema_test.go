package fs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/locks"
)

// A namespace created by another build (here: the columns of an earlier
// ns_entries, without inline content) is refused by New with a
// *locks.SchemaError naming the data directory and both versions, never
// "SQL logic error: no such column"; a current one opens again.
func TestSchemaVersion(t *testing.T) {
	const early = `CREATE TABLE ns_entries (id INTEGER PRIMARY KEY AUTOINCREMENT, parent INTEGER NOT NULL, name TEXT NOT NULL, key TEXT NOT NULL, kind INTEGER NOT NULL);
CREATE TABLE ns_seq (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO ns_seq(name, value) VALUES('version', 7);`
	for _, tc := range []struct {
		name  string
		setup string
		found int64 // -1: New succeeds
	}{
		{"fresh", "", -1},
		{"earlier build, unversioned", early, 0},
		{"newer build", schema + `INSERT INTO ns_seq(name, value) VALUES('schema', 42)`, 42},
		{"previous (content headers in columns of their own)", schema + `INSERT INTO ns_seq(name, value) VALUES('schema', 1)`, 1},
		{"current", schema + `INSERT INTO ns_seq(name, value) VALUES('schema', ` + fmt.Sprint(SchemaVersion) + `)`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "blobshare.db")
			table, err := locks.Open(ctxBG, path, locks.Options{Remove: RemoveFile})
			mustNil(t, err, "locks.Open")
			defer table.Close(ctxBG)
			if tc.setup != "" {
				mustNil(t, table.Update(ctxBG, func(tx *locks.Tx) error {
					_, err := tx.SQL().ExecContext(ctxBG, tc.setup)
					return err
				}), "setup")
			}
			store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
			mustNil(t, err, "local.New")
			fsys, err := New(ctxBG, Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: dir})
			if tc.found < 0 {
				mustNil(t, err, "New")
				mustNil(t, fsys.Close(ctxBG), "Close")
				fsys, err = New(ctxBG, Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: dir})
				mustNil(t, err, "New again")
				mustNil(t, fsys.Close(ctxBG), "Close")
				return
			}
			var se *locks.SchemaError
			if !errors.Is(err, locks.ErrIncompatibleSchema) || !errors.As(err, &se) {
				t.Fatalf("New: %v, want a *locks.SchemaError", err)
			}
			if se.Found != tc.found || se.Want != SchemaVersion || se.Dir != dir || se.Part != "namespace" {
				t.Fatalf("SchemaError %+v", se)
			}
			if msg := err.Error(); !strings.Contains(msg, dir) || strings.Contains(msg, "SQL logic error") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

// A namespace at version 5 (commit intents named a pid and its start time)
// opens: migration 6 gives ns_intents the owner column a fresh namespace
// has, and an intent written before sessions — no owner names it — is a
// dead owner's, resolved by New (here: dropped, its commit never began).
func TestSchemaMigrationIntents(t *testing.T) {
	const v5Intents = `CREATE TABLE IF NOT EXISTS ns_intents (
	file      INTEGER PRIMARY KEY,
	pid       INTEGER NOT NULL,
	pid_start INTEGER NOT NULL,
	token     TEXT    NOT NULL,
	state     INTEGER NOT NULL,
	prev_etag TEXT    NOT NULL DEFAULT '',
	new_size  INTEGER NOT NULL DEFAULT 0,
	new_state TEXT    NOT NULL DEFAULT '',
	created   INTEGER NOT NULL
);`
	i := strings.Index(schema, "CREATE TABLE IF NOT EXISTS ns_intents (")
	j := i + strings.Index(schema[i:], ");") + 2
	v5 := schema[:i] + v5Intents + schema[j:] +
		`INSERT INTO ns_seq(name, value) VALUES('schema', 5);
INSERT INTO ns_intents(file, pid, pid_start, token, state, created) VALUES(77, 1, -1, 'old', 1, 0);`

	columns := func(table *locks.Table) string {
		var out string
		mustNil(t, table.View(ctxBG, func(tx *locks.Tx) error {
			out = ""
			rows, err := tx.SQL().QueryContext(ctxBG, `SELECT name, type, "notnull", coalesce(dflt_value, '') FROM pragma_table_info('ns_intents') ORDER BY cid`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var n, ty, d string
				var nn int
				if err := rows.Scan(&n, &ty, &nn, &d); err != nil {
					return err
				}
				out += fmt.Sprintf("%s %s %d %s; ", n, ty, nn, d)
			}
			return rows.Err()
		}), "columns")
		return out
	}

	fresh := openEnv(t, t.TempDir())
	want := columns(fresh.table)

	dir := t.TempDir()
	table, err := locks.Open(ctxBG, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: RemoveFile})
	mustNil(t, err, "locks.Open")
	defer table.Close(ctxBG)
	mustNil(t, table.Update(ctxBG, func(tx *locks.Tx) error {
		_, err := tx.SQL().ExecContext(ctxBG, v5)
		return err
	}), "setup")
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
	mustNil(t, err, "local.New")
	fsys, err := New(ctxBG, Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: dir})
	mustNil(t, err, "New on a version 5 namespace")
	defer fsys.Close(ctxBG)
	if got := columns(table); got != want {
		t.Fatalf("ns_intents after migration:\n%s\nfresh:\n%s", got, want)
	}
	var n, version int
	mustNil(t, table.DB().QueryRowContext(ctxBG, `SELECT (SELECT count(*) FROM ns_intents), (SELECT value FROM ns_seq WHERE name = 'schema')`).Scan(&n, &version), "read")
	if n != 0 || version != SchemaVersion {
		t.Fatalf("%d intents left, version %d; want 0 and %d", n, version, SchemaVersion)
	}
	// Migration 7 adds the visible-writes table.
	mustNil(t, table.DB().QueryRowContext(ctxBG, `SELECT count(*) FROM ns_unflushed WHERE session = ''`).Scan(&n), "ns_unflushed after migration")
}
