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
)

// newBox is a Service over a SQLite store and a local content store in a
// temporary directory, on the clock now (nil: time.Now), with the
// container "box"; it returns the two stores too.
func newBox(t *testing.T, now func() time.Time) (*blobsvc.Service, *sqlstore.Store, *local.Store) {
	t.Helper()
	dir := t.TempDir()
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
	svc, meta, content := newBox(t, nil)
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
	if _, _, _, _, err := svc.OpenBlob(ctx, "box", "f", "", nil, "", blobsvc.Conditions{}); !errors.Is(err, blobsvc.ErrContentMismatch) {
		t.Fatalf("before recovery: %v", err)
	}
	n, err := blobsvc.New(meta, content, nil).Recover(ctx)
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
	if n, err := svc.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover of a stale intent: %d %v", n, err)
	}
	if cur, _ := svc.GetBlob(ctx, "box", "f", "", "", blobsvc.Conditions{}); cur.ETag != `"0xNEXT"` {
		t.Fatalf("a stale intent changed the row: %s", cur.ETag)
	}
	if left, _ := meta.Intents(ctx); len(left) != 0 {
		t.Fatalf("%d intents left", len(left))
	}
}
