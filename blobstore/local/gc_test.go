package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

func TestCollectGarbage(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	old := time.Now().Add(-2 * time.Hour)
	age := func(key, name string) {
		t.Helper()
		kd, _ := s.keyDir(key)
		if err := os.Chtimes(filepath.Join(kd, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// kept/blob: committed, plus an old staged block and a young one.
	if _, err := blobstore.Put(ctx, s, "kept/blob", strings.NewReader("keep"), 0, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"oldstaged", "youngstaged"} {
		if _, err := s.StageBlock(ctx, "kept/blob", id, strings.NewReader(id)); err != nil {
			t.Fatal(err)
		}
	}
	age("kept/blob", stagedPrefix+"oldstaged")
	// An orphan block, as a crash between link and manifest rename leaves.
	kd, _ := s.keyDir("kept/blob")
	if err := os.WriteFile(filepath.Join(kd, blockPrefix+"orphan"), []byte("orphan"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An old temp file of an interrupted staging, and a young one.
	for _, n := range []string{tempPrefix + "old", tempPrefix + "young", mtempPrefix + "old"} {
		if err := os.WriteFile(filepath.Join(kd, n), []byte("tmp"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	age("kept/blob", tempPrefix+"old")
	age("kept/blob", mtempPrefix+"old")
	// staged/only: nothing committed, one old staged block: the key goes.
	if _, err := s.StageBlock(ctx, "staged/only", "x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	age("staged/only", stagedPrefix+"x")
	// deleted/blob: committed then deleted: an empty key directory.
	if _, err := blobstore.Put(ctx, s, "deleted/blob", strings.NewReader("d"), 0, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "deleted/blob", blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}

	rep, err := blobstore.CollectGarbage(ctx, s, blobstore.GCOptions{OlderThan: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := blobstore.GCReport{Keys: 3, StagedBlocks: 2, OrphanBlocks: 1, TempFiles: 2, EmptyKeysGone: 2,
		BytesFreed: int64(len("oldstaged") + len("x") + len("orphan") + 2*len("tmp"))}
	if rep != want {
		t.Fatalf("report %+v\nwant   %+v", rep, want)
	}
	ents, _ := os.ReadDir(kd)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, n := range []string{stagedPrefix + "youngstaged", tempPrefix + "young", manifestName} {
		if _, err := os.Stat(filepath.Join(kd, n)); err != nil {
			t.Errorf("%s was removed (left: %v)", n, names)
		}
	}
	for _, key := range []string{"staged/only", "deleted/blob"} {
		d, _ := s.keyDir(key)
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("empty key directory of %q still there: %v", key, err)
		}
	}
	if got := readString(t, s, "kept/blob"); got != "keep" {
		t.Fatalf("kept/blob = %q after collection", got)
	}
	// The young staged block is still committable.
	if _, err := s.CommitBlocks(ctx, "kept/blob", []string{"youngstaged"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	// A removed key directory comes back on use.
	if _, err := blobstore.Put(ctx, s, "deleted/blob", strings.NewReader("again"), 0, blobstore.Conditions{IfNoneMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, s, "deleted/blob"); got != "again" {
		t.Fatalf("deleted/blob = %q", got)
	}
	// A second collection finds nothing more to remove.
	rep, err = s.CollectGarbage(ctx, blobstore.GCOptions{OlderThan: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StagedBlocks+rep.OrphanBlocks+rep.TempFiles+rep.EmptyKeysGone != 0 {
		t.Fatalf("second collection removed %+v", rep)
	}
}

func readString(t *testing.T, s *Store, key string) string {
	t.Helper()
	rc, _, err := s.ReadRange(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCollectGarbageWhileBusy runs collections with olderThan 0 against
// writers that keep committing: committed versions must never lose blocks.
// (Blocks being staged may go: olderThan 0 allows that, so the writers
// tolerate a vanished temp or staged file and try again.)
func TestCollectGarbageWhileBusy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newTestStore(t)
	keys := []string{"busy/a", "busy/b"}
	errc := make(chan error, len(keys))
	for _, key := range keys {
		go func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, err := blobstore.Put(ctx, s, key, strings.NewReader(strings.Repeat("x", i%5000)), 1000, blobstore.Conditions{})
				if err != nil && ctx.Err() == nil && !errors.Is(err, fs.ErrNotExist) {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			rc, info, err := s.ReadRange(ctx, key, 0, -1)
			if errors.Is(err, blobstore.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || int64(len(b)) != info.Size || strings.Trim(string(b), "x") != "" {
				t.Fatalf("%s: read %d of %d bytes, %v", key, len(b), info.Size, err)
			}
		}
	}
	cancel()
	for range keys {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestCollectGarbageUsesClock: the age cutoff comes from the store's
// clock (WithClock), so a staged block just written counts as old once
// the clock has moved past olderThan — no test has to wait for it.
func TestCollectGarbageUsesClock(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, err := New(t.TempDir(), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StageBlock(ctx, "k", "b", strings.NewReader("staged")); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{OlderThan: time.Hour}); err != nil || rep.StagedBlocks != 0 {
		t.Fatalf("a young staged block was collected: %+v, %v", rep, err)
	}
	now = now.Add(2 * time.Hour)
	if rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{OlderThan: time.Hour}); err != nil || rep.StagedBlocks != 1 {
		t.Fatalf("two hours later by the store's clock: %+v, %v; want the staged block collected", rep, err)
	}
}

// TestCollectGarbageKeepsStaged: a staged block that GCOptions.KeepStaged
// names survives any age (a later commit may still name it), and is then
// committable; an old one it does not name goes.
func TestCollectGarbageKeepsStaged(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, err := New(t.TempDir(), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"kept", "dropped"} {
		if _, err := s.StageBlock(ctx, "k", id, strings.NewReader(id)); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(48 * time.Hour)
	rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{OlderThan: time.Hour, KeepStaged: func(id string) bool { return id == "kept" }})
	if err != nil || rep.StagedBlocks != 1 {
		t.Fatalf("collection: %+v, %v; want one staged block removed", rep, err)
	}
	if _, err := s.CommitBlocks(ctx, "k", []string{"kept"}, blobstore.Conditions{}); err != nil {
		t.Fatalf("commit of the kept block: %v", err)
	}
	if _, err := s.CommitBlocks(ctx, "k", []string{"dropped"}, blobstore.Conditions{}); err == nil {
		t.Fatal("commit of the collected block succeeded")
	}
}
