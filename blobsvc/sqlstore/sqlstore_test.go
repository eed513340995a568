package sqlstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

func open(t *testing.T) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func names(bs []blobsvc.Blob) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// TestStoreContract checks the blobsvc.Store contract on SQLite: sentinels
// for missing and duplicate resources, bytewise name order with prefix and
// resume point, staged blocks in first-staged order, the uncommitted list
// dropped by a commit, and a container delete that returns its blobs'
// content keys and leaves nothing behind.
func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	c := blobsvc.Container{Name: "box", Metadata: map[string]string{"k": "v"}, ETag: `"0x1"`, LastModified: now}
	if err := s.CreateContainer(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateContainer(ctx, c); !errors.Is(err, blobsvc.ErrContainerExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.Container(ctx, "nope"); !errors.Is(err, blobsvc.ErrContainerNotFound) {
		t.Fatalf("missing container: %v", err)
	}
	got, err := s.Container(ctx, "box")
	if err != nil || got.Metadata["k"] != "v" || !got.LastModified.Equal(now) {
		t.Fatalf("container read back: %+v %v", got, err)
	}
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "nope", Name: "x"}, false); !errors.Is(err, blobsvc.ErrContainerNotFound) {
		t.Fatalf("blob in a missing container: %v", err)
	}
	if err := s.StageBlock(ctx, "nope", "x", blobsvc.Block{ID: "QQ==", StoreID: "s1"}, time.Now()); !errors.Is(err, blobsvc.ErrContainerNotFound) {
		t.Fatalf("block in a missing container: %v", err)
	}

	for _, n := range []string{"b", "a/b", "ä", "a", "a0", "a/"} {
		if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: n, ContentKey: "key-" + n, Committed: true, Size: 1}, false); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListBlobs(ctx, "box", "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a/", "a/b", "a0", "b", "ä"}; !slices.Equal(names(all), want) {
		t.Fatalf("order %q, want %q", names(all), want)
	}
	page, _ := s.ListBlobs(ctx, "box", "a", "a/b", 2)
	if want := []string{"a/b", "a0"}; !slices.Equal(names(page), want) {
		t.Fatalf("prefix a from a/b: %q", names(page))
	}
	if _, err := s.Blob(ctx, "box", "zz"); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Fatalf("missing blob: %v", err)
	}

	// Staged blocks: first-staged order, re-staging keeps the place.
	for _, b := range []blobsvc.Block{{ID: "AA==", StoreID: "s1", Size: 1}, {ID: "BB==", StoreID: "s2", Size: 2}, {ID: "AA==", StoreID: "s3", Size: 3}} {
		if err := s.StageBlock(ctx, "box", "b", b, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	staged, err := s.UncommittedBlocks(ctx, "box", "b", 0)
	if err != nil || len(staged) != 2 || staged[0].StoreID != "s3" || staged[0].Size != 3 || staged[1].ID != "BB==" {
		t.Fatalf("staged %+v %v", staged, err)
	}
	if first, _ := s.UncommittedBlocks(ctx, "box", "b", 1); len(first) != 1 || first[0].ID != "AA==" {
		t.Fatalf("first staged block: %+v", first)
	}
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "b", Committed: true}, false); err != nil {
		t.Fatal(err)
	}
	if staged, _ := s.UncommittedBlocks(ctx, "box", "b", 0); len(staged) != 2 {
		t.Fatalf("a write that keeps the staged blocks dropped them: %d", len(staged))
	}
	if err := s.PutBlob(ctx, blobsvc.Blob{Container: "box", Name: "b", Committed: true}, true); err != nil {
		t.Fatal(err)
	}
	if staged, _ := s.UncommittedBlocks(ctx, "box", "b", 0); len(staged) != 0 {
		t.Fatalf("a commit kept %d staged blocks", len(staged))
	}

	if err := s.DeleteBlob(ctx, "box", "a0"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBlob(ctx, "box", "a0"); !errors.Is(err, blobsvc.ErrBlobNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.StageBlock(ctx, "box", "a", blobsvc.Block{ID: "AA==", StoreID: "s9"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	keys, err := s.DeleteContainer(ctx, "box")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"key-a", "key-a/", "key-a/b", "key-ä"}; !slices.Equal(keys, want) {
		t.Fatalf("content keys %q, want %q", keys, want)
	}
	if err := s.CreateContainer(ctx, c); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.ListBlobs(ctx, "box", "", "", 100); len(left) != 0 {
		t.Fatalf("a recreated container has %d blobs", len(left))
	}
	if staged, _ := s.UncommittedBlocks(ctx, "box", "a", 0); len(staged) != 0 {
		t.Fatalf("a recreated container has staged blocks")
	}

	if doc, err := s.ServiceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("unset service properties: %q %v", doc, err)
	}
	if err := s.SetServiceProperties(ctx, []byte("<x/>")); err != nil {
		t.Fatal(err)
	}
	if doc, _ := s.ServiceProperties(ctx); string(doc) != "<x/>" {
		t.Fatalf("service properties %q", doc)
	}
}
