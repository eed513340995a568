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
