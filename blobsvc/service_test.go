package blobsvc_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// TestContentMismatchIsRefused: when the content store holds another
// version than the metadata row records (what a crash between a commit's
// two writes leaves), a read fails with ErrContentMismatch instead of
// serving bytes that disagree with the headers.
func TestContentMismatchIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	meta, err := sqlstore.Open(ctx, filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc := blobsvc.New(meta, content, nil)
	if _, err := svc.CreateContainer(ctx, "box", nil, ""); err != nil {
		t.Fatal(err)
	}
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
