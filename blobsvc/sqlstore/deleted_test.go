package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// TestStoreSoftDelete checks the soft-delete part of the blobsvc.Store
// contract: SoftDelete moves rows out of the live ones in one step
// (ErrBlobNotFound for a missing one, nothing moved), DeletedBlobs and
// ListDeleted read them back with their seq, ExpiredDeleted by expiry,
// RemoveDeleted forgets one; a container soft delete hides its rows from
// a new container of the same name until RestoreContainer, and
// PurgeDeletedContainer returns its content keys.
func TestStoreSoftDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	a := blobsvc.Blob{Container: "box", Name: "a", Committed: true, ContentKey: "key-a"}
	snap := a
	snap.Snapshot, snap.ContentKey = "2026-01-01T00:00:00.0000000Z", "key-a-s"
	for _, b := range []blobsvc.Blob{a, snap} {
		if err := s.PutBlob(ctx, b, false); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(b blobsvc.Blob, key string, expires time.Time) blobsvc.Blob {
		b.ContentKey, b.Deleted = key, &blobsvc.DeletedInfo{Time: now, Expires: expires}
		return b
	}
	missing := blobsvc.Blob{Container: "box", Name: "nope"}
	if err := s.SoftDelete(ctx, []blobsvc.Blob{a, missing}, []blobsvc.Blob{gone(a, "key-a-d", now.Add(time.Hour))}); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Fatalf("soft delete with a missing row: %v", err)
	}
	if _, err := s.Blob(ctx, "box", "a"); err != nil {
		t.Fatalf("a failed soft delete moved the blob: %v", err)
	}
	if err := s.SoftDelete(ctx, []blobsvc.Blob{snap, a}, []blobsvc.Blob{gone(snap, "key-a-s", now.Add(time.Hour)), gone(a, "key-a-d", now.Add(2*time.Hour))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(ctx, "box", "a"); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Fatalf("a soft-deleted blob is live: %v", err)
	}
	rows, err := s.DeletedBlobs(ctx, "box", "a")
	if err != nil || len(rows) != 2 || rows[0].Snapshot != "" || rows[0].ContentKey != "key-a-d" || rows[1].Snapshot != snap.Snapshot || rows[0].Deleted.Seq == 0 {
		t.Fatalf("deleted rows %+v %v", rows, err)
	}
	if listed, _ := s.ListDeleted(ctx, "box", "", "", 10); len(listed) != 2 {
		t.Fatalf("listed %d deleted rows", len(listed))
	}
	if exp, _ := s.ExpiredDeleted(ctx, now.Add(90*time.Minute), 10); len(exp) != 1 || exp[0].Snapshot != snap.Snapshot {
		t.Fatalf("expired after 90 minutes: %+v", exp)
	}
	if err := s.RemoveDeleted(ctx, rows[1].Deleted.Seq); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveDeleted(ctx, rows[1].Deleted.Seq); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Fatalf("second remove: %v", err)
	}

	// Container soft delete.
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "b", Committed: true, ContentKey: "key-b"}, false); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Container(ctx, "box")
	d := blobsvc.DeletedContainer{Container: c, Version: "V1", Time: now, Expires: now.Add(24 * time.Hour)}
	if err := s.SoftDeleteContainer(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateContainer(ctx, blobsvc.Container{Name: "box"}); err != nil {
		t.Fatal(err)
	}
	if live, _ := s.ListBlobs(ctx, "box", "", "", 10); len(live) != 0 {
		t.Fatalf("a new container sees %d blobs of the deleted one", len(live))
	}
	if list, _ := s.DeletedContainers(ctx, "", "", 10); len(list) != 1 || list[0].Version != "V1" {
		t.Fatalf("deleted containers %+v", list)
	}
	if err := s.RestoreContainer(ctx, "box", "V1", c); !errors.Is(err, blobsvc.ErrContainerExists) {
		t.Fatalf("restore over a live container: %v", err)
	}
	if err := s.RestoreContainer(ctx, "box", "V1", blobsvc.Container{Name: "box2"}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Blob(ctx, "box2", "b"); err != nil || b.Container != "box2" || b.ContentKey != "key-b" {
		t.Fatalf("restored blob %+v %v", b, err)
	}
	if rows, _ := s.DeletedBlobs(ctx, "box2", "a"); len(rows) != 1 || rows[0].Container != "box2" {
		t.Fatalf("restored soft-deleted rows %+v", rows)
	}
	c2, _ := s.Container(ctx, "box2")
	if err := s.SoftDeleteContainer(ctx, blobsvc.DeletedContainer{Container: c2, Version: "V2", Expires: now}); err != nil {
		t.Fatal(err)
	}
	if exp, _ := s.ExpiredContainers(ctx, now, 10); len(exp) != 1 || exp[0].Version != "V2" {
		t.Fatalf("expired containers %+v", exp)
	}
	keys, err := s.PurgeDeletedContainer(ctx, "box2", "V2")
	slices.Sort(keys)
	if err != nil || !slices.Equal(keys, []string{"key-a-d", "key-b"}) {
		t.Fatalf("purged keys %q %v", keys, err)
	}
	if list, _ := s.DeletedContainers(ctx, "", "", 10); len(list) != 0 {
		t.Fatalf("after the purge: %+v", list)
	}
}

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
