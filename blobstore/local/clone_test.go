package local

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
)

func readBlob(t *testing.T, s *Store, key string) string {
	t.Helper()
	rc, _, err := s.ReadRange(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A clone shares the source's block files (hard links, no data copy) and
// keeps its content through later commits to the source, the source's
// deletion and garbage collection.
func TestCloneBlobKeepsContent(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	for _, id := range []string{"aa", "bb"} {
		if _, err := s.StageBlock(ctx, "src", id, strings.NewReader(strings.Repeat(id, 1000))); err != nil {
			t.Fatal(err)
		}
	}
	info, err := s.CommitBlocks(ctx, "src", []string{"aa", "bb", "aa"}, blobstore.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("aa", 1000) + strings.Repeat("bb", 1000) + strings.Repeat("aa", 1000)
	if _, err := s.CloneBlob(ctx, "src", "snap/1/src", blobstore.Conditions{IfMatch: "\"0xWRONG\""}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Fatalf("clone with a stale If-Match: %v", err)
	}
	ci, err := s.CloneBlob(ctx, "src", "snap/1/src", blobstore.Conditions{IfMatch: info.ETag})
	if err != nil || ci.Size != info.Size {
		t.Fatalf("clone: %+v %v", ci, err)
	}
	if _, err := s.CloneBlob(ctx, "src", "snap/1/src", blobstore.Conditions{}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Fatalf("clone onto an existing blob: %v", err)
	}
	// Same inodes: no data was copied.
	sd, _ := s.keyDir("src")
	dd, _ := s.keyDir("snap/1/src")
	m, _ := readManifest("src", sd)
	for _, b := range m.Blocks {
		a, err1 := os.Stat(filepath.Join(sd, b.File))
		c, err2 := os.Stat(filepath.Join(dd, b.File))
		if err1 != nil || err2 != nil || !os.SameFile(a, c) {
			t.Fatalf("block %s is not shared: %v %v", b.File, err1, err2)
		}
	}
	// Overwrite the source with other blocks, delete it, collect.
	if _, err := s.StageBlock(ctx, "src", "cc", strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitBlocks(ctx, "src", []string{"cc"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, s, "snap/1/src"); got != want {
		t.Fatalf("clone after the source changed: %d bytes", len(got))
	}
	if err := s.Delete(ctx, "src", blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, s, "snap/1/src"); got != want {
		t.Fatalf("clone after the source's deletion and garbage collection: %d bytes", len(got))
	}
	if _, err := s.CloneBlob(ctx, "src", "snap/2/src", blobstore.Conditions{}); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("clone of a missing blob: %v", err)
	}
	// Deleting the clone frees its blocks.
	if err := s.Delete(ctx, "snap/1/src", blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dd); !os.IsNotExist(err) {
		t.Fatalf("clone's directory after delete and collection: %v", err)
	}
}
