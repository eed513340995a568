package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// TestStoreOpensOldDatabase: a database made before soft delete (no
// bs_deleted, bs_deleted_containers) opens and gains them.
func TestStoreOpensOldDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlstore.FileName)
	s, err := sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP INDEX bs_deleted_name`, `DROP TABLE bs_deleted`, `DROP TABLE bs_deleted_containers`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err = sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatalf("open an old database: %v", err)
	}
	defer s.Close()
	if rows, err := s.ListDeleted(ctx, "box", "", "", 10); err != nil || len(rows) != 0 {
		t.Fatalf("deleted rows of an old database: %v %v", rows, err)
	}
	if list, err := s.DeletedContainers(ctx, "", "", 10); err != nil || len(list) != 0 {
		t.Fatalf("deleted containers of an old database: %v %v", list, err)
	}
}
