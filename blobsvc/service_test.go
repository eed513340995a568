package blobsvc_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/locks"
)

// newBox is a Service over a SQLite store and a local content store in a
// temporary directory, on the clock now (nil: time.Now), with the
// container "box"; it returns the two stores too.
func newBox(t *testing.T, now func() time.Time) (*blobsvc.Service, *sqlstore.Store, *local.Store) {
	t.Helper()
	return newBoxIn(t, t.TempDir(), now)
}

// newBoxIn is newBox in the directory dir.
func newBoxIn(t *testing.T, dir string, now func() time.Time) (*blobsvc.Service, *sqlstore.Store, *local.Store) {
	t.Helper()
	meta, err := sqlstore.Open(context.Background(), filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { meta.Close() })
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc := blobsvc.New(meta, content, now)
	if _, err := svc.CreateContainer(context.Background(), "box", nil, ""); err != nil {
		t.Fatal(err)
	}
	return svc, meta, content
}

// TestContentMismatchIsRefused: when the content store holds another
// version than the metadata row records (what a crash between a commit's
// two writes leaves), a read fails with ErrContentMismatch instead of
// serving bytes that disagree with the headers.
func TestContentMismatchIsRefused(t *testing.T) {
	ctx := context.Background()
	svc, _, content := newBox(t, nil)
	b, err := svc.PutBlob(ctx, "box", "f", strings.NewReader("short"), blobsvc.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, rc, _, _, err := svc.OpenBlob(ctx, "box", "f", "", nil, "", blobsvc.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	// A commit whose metadata row never got written.
	if _, err := blobstore.Put(ctx, content, b.ContentKey, strings.NewReader("a longer version"), 0, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := svc.OpenBlob(ctx, "box", "f", "", nil, "", blobsvc.Conditions{}); !errors.Is(err, blobsvc.ErrContentMismatch) {
		t.Fatalf("read after a lost metadata write: %v", err)
	}
}

// TestRecoverFinishesCommits: a crash between a commit's content and its
// metadata row leaves an intent; Recover makes the intent the row when
// the content commit happened, and drops it when it did not.
func TestRecoverFinishesCommits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	svc, meta, content := newBoxIn(t, dir, nil)
	// The recovering process: a second store on the database, with a
	// lock table's owner session. meta has none: its intents name an
	// owner the lock table does not know, a dead one.
	rec := ownedStore(t, dir)
	old, err := svc.PutBlob(ctx, "box", "f", strings.NewReader("short"), blobsvc.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A Put Blob that died after its content commit.
	next := old
	next.Size, next.ETag = int64(len("a longer version")), `"0xNEXT"`
	next.Properties.ContentType = "text/plain"
	if err := meta.PutIntent(ctx, next, false); err != nil {
		t.Fatal(err)
	}
	if _, err := blobstore.Put(ctx, content, old.ContentKey, strings.NewReader("a longer version"), 0, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if cur, err := meta.Blob(ctx, "box", "f"); err != nil || cur.ETag != old.ETag {
		t.Fatalf("row before recovery: %s %v, want the old %s", cur.ETag, err, old.ETag)
	}
	n, err := blobsvc.New(rec, content, nil).Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	b, rc, _, _, err := svc.OpenBlob(ctx, "box", "f", "", nil, "", blobsvc.Conditions{})
	if err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "a longer version" || b.ETag != `"0xNEXT"` || b.Properties.ContentType != "text/plain" {
		t.Fatalf("recovered %q etag %s type %q", got, b.ETag, b.Properties.ContentType)
	}

	// A Put Blob that died before its content commit.
	stale := b
	stale.ETag = `"0xSTALE"`
	if err := meta.PutIntent(ctx, stale, false); err != nil {
		t.Fatal(err)
	}
	if n, err := blobsvc.New(rec, content, nil).Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover of a stale intent: %d %v", n, err)
	}
	if cur, _ := svc.GetBlob(ctx, "box", "f", "", "", blobsvc.Conditions{}); cur.ETag != `"0xNEXT"` {
		t.Fatalf("a stale intent changed the row: %s", cur.ETag)
	}
	if left, err := rec.Intents(ctx); err != nil || len(left) != 0 {
		t.Fatalf("%d intents left (%v)", len(left), err)
	}
	if n, err := svc.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover with nothing left: %d %v", n, err)
	}
}

// ownedStore opens the metadata database in dir once more with a lock
// table's owner session in dir.
func ownedStore(t *testing.T, dir string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	table, err := locks.Open(ctx, filepath.Join(dir, "locks.db"), locks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close(context.Background()) })
	s, err := sqlstore.Open(ctx, filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.UseOwners(sqlstore.TableOwners(table))
	return s
}
