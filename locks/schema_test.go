package locks

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A database whose lock tables come from another build is refused with a
// *SchemaError naming the data directory and both versions, never a raw
// SQL error; a fresh database gets the current version and reopens.
func TestSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup string // SQL run on the database before Open ("" : fresh)
		found int64  // the version the error reports; -1: Open succeeds
	}{
		{"fresh", "", -1},
		{"unversioned (before lk_meta had a schema row)", schema, 0},
		{"unversioned without lk_meta", `CREATE TABLE lk_handles (file INTEGER, id INTEGER, PRIMARY KEY (file, id)) WITHOUT ROWID`, 0},
		{"older", schema + `INSERT INTO lk_meta(name, value) VALUES('schema', 0)`, 0},
		{"newer", schema + `INSERT INTO lk_meta(name, value) VALUES('schema', 99)`, 99},
		{"version 1 (flock was a share-mode change)", schema + `INSERT INTO lk_meta(name, value) VALUES('schema', 1)`, 1},
		{"current", schema + `INSERT INTO lk_meta(name, value) VALUES('schema', ` + strconv.Itoa(SchemaVersion) + `)`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "blobshare.db")
			if tc.setup != "" {
				db, err := sql.Open("sqlite", "file:"+path)
				must(t, err)
				_, err = db.Exec(tc.setup)
				must(t, err)
				must(t, db.Close())
			}
			tab, err := Open(context.Background(), path, Options{})
			if tc.found < 0 {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				must(t, tab.Close(context.Background()))
				// And again: the recorded version is accepted.
				tab, err = Open(context.Background(), path, Options{})
				must(t, err)
				must(t, tab.Close(context.Background()))
				return
			}
			var se *SchemaError
			if !errors.Is(err, ErrIncompatibleSchema) || !errors.As(err, &se) {
				t.Fatalf("Open: %v, want a *SchemaError", err)
			}
			if se.Found != tc.found || se.Want != SchemaVersion || se.Dir != dir || se.Part != "lock table" {
				t.Fatalf("SchemaError %+v, want found %d want %d dir %s", se, tc.found, SchemaVersion, dir)
			}
			msg := err.Error()
			for _, want := range []string{dir, "incompatible blobshare version", "this build expects " + strconv.Itoa(SchemaVersion)} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}
