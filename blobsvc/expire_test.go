package blobsvc_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// TestUncommittedBlocksExpire: on the service's clock, KeptStagedBlocks
// keeps uncommitted blocks for a week and then discards them, as Azure
// does: a blob whose blocks have all expired is gone (no longer listed
// with include=uncommittedblobs), one with a younger block keeps just
// that one, which Put Block List still commits.
func TestUncommittedBlocksExpire(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc, _, _ := newBox(t, func() time.Time { return now })
	id := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	stage := func(name, block string) {
		t.Helper()
		if err := svc.StageBlock(ctx, "box", name, id(block), strings.NewReader(block), nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	stage("old", "a")
	stage("mixed", "b")
	now = now.Add(6 * 24 * time.Hour)
	stage("mixed", "c")

	kept, err := svc.KeptStagedBlocks(ctx)
	if err != nil || len(kept) != 3 {
		t.Fatalf("after six days: %d kept, %v; want 3", len(kept), err)
	}
	now = now.Add(24*time.Hour + time.Minute)
	kept, err = svc.KeptStagedBlocks(ctx)
	if err != nil || len(kept) != 1 {
		t.Fatalf("after a week and a minute: %d kept, %v; want 1", len(kept), err)
	}
	items, _, err := svc.ListBlobs(ctx, "box", blobsvc.ListOptions{IncludeUncommitted: true, Max: 10})
	if err != nil || len(items) != 1 || items[0].Blob.Name != "mixed" {
		t.Fatalf("listed with uncommitted blobs: %v %+v; want mixed alone", err, items)
	}
	lists, err := svc.GetBlockList(ctx, "box", "mixed", "")
	if err != nil || len(lists.Uncommitted) != 1 || lists.Uncommitted[0].ID != id("c") || !kept[lists.Uncommitted[0].StoreID] {
		t.Fatalf("mixed's uncommitted blocks: %v %+v", err, lists.Uncommitted)
	}
	if _, err := svc.CommitBlockList(ctx, "box", "mixed", []blobsvc.BlockRef{{ID: id("c"), Where: blobsvc.BlockLatest}}, blobsvc.WriteOptions{}); err != nil {
		t.Fatalf("commit of the block a week kept: %v", err)
	}
}

// TestStagedAtMigration: a blob.db made before staged blocks had an age
// opens with the column added, and its blocks count as staged when first
// seen: kept for a week from then.
func TestStagedAtMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlstore.FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE bs_staged (seq INTEGER PRIMARY KEY AUTOINCREMENT, container TEXT NOT NULL, name TEXT NOT NULL,
			block_id TEXT NOT NULL, store_id TEXT NOT NULL, size INTEGER NOT NULL)`,
		`INSERT INTO bs_staged(container, name, block_id, store_id, size) VALUES('box', 'b', 'QQ==', 'old-store-id', 1)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	meta, err := sqlstore.Open(ctx, path)
	if err != nil {
		t.Fatalf("open of an older blob.db: %v", err)
	}
	defer meta.Close()
	now := time.Now()
	if expired, err := meta.ExpireStaged(ctx, now.Add(-blobsvc.UncommittedLifetime), now); err != nil || len(expired) != 0 {
		t.Fatalf("first expiry: %v %v; want nothing expired", expired, err)
	}
	later := now.Add(blobsvc.UncommittedLifetime + time.Minute)
	if expired, err := meta.ExpireStaged(ctx, later.Add(-blobsvc.UncommittedLifetime), later); err != nil || len(expired) != 1 || expired[0] != (blobsvc.BlobName{Container: "box", Name: "b"}) {
		t.Fatalf("a week after it was first seen: %v %v; want box/b", expired, err)
	}
}
