package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobsvc"
)

func names(bs []blobsvc.Blob) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// Contract: the blobsvc.Store contract of one process: sentinels
// for missing and duplicate resources, bytewise name order with prefix and
// resume point, staged blocks in first-staged order, the uncommitted list
// dropped by a commit, and a container delete that returns its blobs'
// content keys and leaves nothing behind.
func testContract(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t).Store
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

// SoftDelete checks the soft-delete part of the blobsvc.Store
// contract: SoftDelete moves rows out of the live ones in one step
// (ErrBlobNotFound for a missing one, nothing moved), DeletedBlobs and
// ListDeleted read them back with their seq, ExpiredDeleted by expiry,
// RemoveDeleted forgets one; a container soft delete hides its rows from
// a new container of the same name until RestoreContainer, and
// PurgeDeletedContainer returns its content keys.
func testSoftDelete(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t).Store
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
