package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
)

// testClone checks blobstore.Cloner on stores that have it: a clone has
// the source's content and block list, keeps them through overwrites and
// deletion of the source and a garbage collection, refuses an existing
// destination, a failed source condition and a missing source without
// leaving a destination behind, and is gone once deleted.
func testClone(t *testing.T, s blobstore.Store, _ Opts) {
	cl, ok := s.(blobstore.Cloner)
	if !ok {
		t.Skip("the store has no blobstore.Cloner")
	}
	ctx := context.Background()
	const src, dst = "clone/src", "clone/snap/1"
	a, b := DataAt(21, 0, 70000), DataAt(22, 0, 1234)
	for id, p := range map[string][]byte{"blk-a": a, "blk-b": b} {
		if _, err := s.StageBlock(ctx, src, id, bytes.NewReader(p)); err != nil {
			t.Fatal(err)
		}
	}
	list := []string{"blk-a", "blk-b", "blk-a"} // an id twice
	info, err := s.CommitBlocks(ctx, src, list, blobstore.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Join([][]byte{a, b, a}, nil)
	absent := func(what, key string) {
		t.Helper()
		if _, err := s.Stat(ctx, key); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("%s: Stat(%q) = %v, want ErrNotFound", what, key, err)
		}
	}

	if _, err := cl.CloneBlob(ctx, src, dst, blobstore.Conditions{IfMatch: `"0xSTALE"`}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Fatalf("CloneBlob with a stale If-Match: %v, want ErrPreconditionFailed", err)
	}
	absent("after a refused clone", dst)
	if _, err := cl.CloneBlob(ctx, "clone/missing", "clone/snap/missing", blobstore.Conditions{}); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("CloneBlob of a missing source: %v, want ErrNotFound", err)
	}
	absent("after cloning a missing source", "clone/snap/missing")
	if _, err := cl.CloneBlob(ctx, src, "bad\x00key", blobstore.Conditions{}); !errors.Is(err, blobstore.ErrInvalidKey) {
		t.Fatalf("CloneBlob to an invalid key: %v, want ErrInvalidKey", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cl.CloneBlob(cctx, src, dst, blobstore.Conditions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CloneBlob with a cancelled context: %v, want context.Canceled", err)
	}
	absent("after a cancelled clone", dst)

	ci, err := cl.CloneBlob(ctx, src, dst, blobstore.Conditions{IfMatch: info.ETag})
	if err != nil {
		t.Fatalf("CloneBlob: %v", err)
	}
	if ci.Key != dst || ci.Size != int64(len(want)) || ci.ETag == "" {
		t.Fatalf("CloneBlob = %+v, want key %q, size %d and an ETag", ci, dst, len(want))
	}
	wantContent(t, s, dst, want)
	sb, _, err := s.Blocks(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	db, _, err := s.Blocks(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sb, db) {
		t.Fatalf("clone's blocks %v, source's %v: want the same ids and sizes", db, sb)
	}
	if _, err := cl.CloneBlob(ctx, src, dst, blobstore.Conditions{}); !errors.Is(err, blobstore.ErrPreconditionFailed) {
		t.Fatalf("CloneBlob onto an existing blob: %v, want ErrPreconditionFailed", err)
	}

	// The source changes (reusing one of its blocks) and goes; the clone
	// stays, also through a garbage collection.
	if _, err := s.StageBlock(ctx, src, "blk-c", bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitBlocks(ctx, src, []string{"blk-b", "blk-c"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, dst, want)
	if err := s.Delete(ctx, src, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := blobstore.CollectGarbage(ctx, s, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, dst, want)

	// An empty blob clones too.
	put(t, s, "clone/empty", blobstore.Conditions{})
	if ei, err := cl.CloneBlob(ctx, "clone/empty", "clone/snap/empty", blobstore.Conditions{}); err != nil || ei.Size != 0 {
		t.Fatalf("CloneBlob of an empty blob = %+v, %v", ei, err)
	}
	wantContent(t, s, "clone/snap/empty", nil)

	// Deleting the clone releases it: no key of it is listed any more.
	if err := s.Delete(ctx, dst, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := blobstore.CollectGarbage(ctx, s, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	absent("after deleting the clone", dst)
	if keys, _ := listAll(t, s, dst, "", 0); len(keys) != 0 {
		t.Fatalf("after deleting the clone, List(%q) = %v", dst, keys)
	}
}
