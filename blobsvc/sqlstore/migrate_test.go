package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/meta"
)

// A blob.db from before the store had versions — and from before staged
// blocks had an age and intents an owner — opens: its rows stay, the
// columns and tables it lacks are added, version 1 is recorded; a file of
// a newer version is refused with a *meta.SchemaError.
func TestOpenMigratesUnversioned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlstore.FileName)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE bs_containers (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE bs_staged (seq INTEGER PRIMARY KEY AUTOINCREMENT, container TEXT NOT NULL, name TEXT NOT NULL,
	block_id TEXT NOT NULL, store_id TEXT NOT NULL, size INTEGER NOT NULL);
CREATE TABLE bs_intents (container TEXT NOT NULL, name TEXT NOT NULL, drop_uncommitted INTEGER NOT NULL,
	doc TEXT NOT NULL, PRIMARY KEY (container, name));
INSERT INTO bs_containers VALUES('old', '{"Name":"old"}');`); err != nil {
		t.Fatal(err)
	}
	s, err := sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of an unversioned blob.db: %v", err)
	}
	if c, err := s.Container(ctx, "old"); err != nil || c.Name != "old" {
		t.Fatalf("the old container: %+v, %v", c, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var version, cols, claim int
	if err := raw.QueryRow(`SELECT (SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM pragma_table_info('bs_staged') WHERE name = 'staged_at') +
		(SELECT count(*) FROM pragma_table_info('bs_intents') WHERE name = 'owner'),
		(SELECT count(*) FROM sqlite_master WHERE name = 'bs_blob_claims')`).Scan(&version, &cols, &claim); err != nil {
		t.Fatal(err)
	}
	if version != 1 || cols != 2 || claim != 1 {
		t.Fatalf("after Open: version %d, %d of 2 new columns, bs_blob_claims %d; want 1, 2, 1", version, cols, claim)
	}
	// Again: the recorded version opens as it is.
	s, err = sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA user_version = 2`); err != nil {
		t.Fatal(err)
	}
	var se *meta.SchemaError
	if _, err := sqlstore.Open(ctx, path); !errors.As(err, &se) || se.Found != 2 || se.Want != 1 || se.Part != "blob" {
		t.Fatalf("Open of a newer blob.db: %v, want a *meta.SchemaError (found 2, want 1)", err)
	}
}
