package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/locks"
)

func (e *env) snapContent(snap, path string) ([]byte, error) {
	fr, err := e.fs.SnapshotGetFile(ctxBG, snap, GetFileRequest{Path: path, Length: -1})
	if err != nil {
		return nil, err
	}
	defer fr.Close()
	return io.ReadAll(fr)
}

// A snapshot copies no file data, and its content outlives the live
// file's later commits, its deletion and both garbage collectors.
func TestSnapshotKeepsContentThroughGC(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	big := bytes.Repeat([]byte("0123456789abcdef"), (2*BlockSize+100)/16) // blob-backed, three blocks
	small := []byte("inline content")
	e.putFile("data/big", big)
	e.putFile("data/small", small)
	snap, a, err := e.fs.CreateShareSnapshot(ctxBG, "data", nil)
	mustNil(t, err, "snapshot")
	if a.Snapshot != snap || snap == "" {
		t.Fatalf("snapshot attr %+v", a)
	}
	// Change, then delete, the live files; collect everything.
	_, err = e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/big", Offset: 0, Length: 4, Body: bytes.NewReader([]byte("XXXX"))})
	mustNil(t, err, "overwrite")
	if got := e.content("data/big"); !bytes.HasPrefix(got, []byte("XXXX")) {
		t.Fatal("live file not overwritten")
	}
	mustNil(t, e.fs.DeleteFile(ctxBG, "data/big", ""), "delete big")
	mustNil(t, e.fs.DeleteFile(ctxBG, "data/small", ""), "delete small")
	e.fs.collect(ctxBG)
	if _, err := e.store.CollectGarbage(ctxBG, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := e.snapContent(snap, "data/big")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("snapshot of big after delete and GC: %d bytes, %v", len(got), err)
	}
	got, err = e.snapContent(snap, "data/small")
	if err != nil || !bytes.Equal(got, small) {
		t.Fatalf("snapshot of small: %q %v", got, err)
	}
	// Deleting the snapshot frees its blobs.
	mustNil(t, e.fs.DeleteShareSnapshot(ctxBG, "data", snap, ""), "delete snapshot")
	e.fs.collect(ctxBG)
	n := 0
	if _, err := e.store.List(ctxBG, "", "", 0, func(blobstore.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d blobs left after deleting the files and the snapshot", n)
	}
	if _, err := e.fs.SnapshotStat(ctxBG, snap, "data"); !errors.Is(err, ErrSnapshotNotFound) {
		t.Fatalf("deleted snapshot: %v", err)
	}
}

// Snapshots taken while writers commit whole new versions see one
// version of each file: every byte of a snapshot's file is the same.
func TestSnapshotPointInTimeUnderWrites(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	const size = BlockSize + 4096 // two blocks, blob-backed
	e.putFile("data/f", bytes.Repeat([]byte{'a'}, size))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for v := byte('b'); ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			if v > 'z' {
				v = 'b'
			}
			h, err := e.open("data/f", rw, allShare, DispositionOpen)
			if err != nil {
				t.Errorf("open: %v", err)
				return
			}
			if _, err := h.WriteAt(ctxBG, bytes.Repeat([]byte{v}, size), 0); err != nil {
				t.Errorf("write: %v", err)
			}
			if err := h.Close(ctxBG); err != nil {
				t.Errorf("close: %v", err)
			}
		}
	}()
	var snaps []string
	for range 8 {
		snap, _, err := e.fs.CreateShareSnapshot(ctxBG, "data", nil)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("snapshot under writes: %v", err)
		}
		snaps = append(snaps, snap)
	}
	close(stop)
	wg.Wait()
	for _, s := range snaps {
		got, err := e.snapContent(s, "data/f")
		if err != nil || len(got) != size {
			t.Fatalf("snapshot %s: %d bytes %v", s, len(got), err)
		}
		if bytes.Count(got, got[:1]) != size {
			t.Fatalf("snapshot %s mixes versions", s)
		}
	}
}

// gatedStore holds the first CloneBlob to dst until release is closed,
// and tells started when it got there.
type gatedStore struct {
	*local.Store
	dst     string
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedStore) CloneBlob(ctx context.Context, src, dst string, cond blobstore.Conditions) (blobstore.Info, error) {
	if g.dst == "*" && strings.HasPrefix(dst, "s") || dst == g.dst {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.started)
			<-g.release
		}
	}
	return g.Store.CloneBlob(ctx, src, dst, cond)
}

// A commit that replaces a file's blob after the snapshot's first
// transaction and before the snapshot cloned it clones the old version
// first (copy on write): the snapshot still reads what the file held.
func TestSnapshotCopyOnWrite(t *testing.T) {
	e, g := newGatedEnv(t)
	e.share("data")
	old := bytes.Repeat([]byte{'o'}, BlockSize+10)
	e.putFile("data/f", old)
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		name, _, err := e.fs.CreateShareSnapshot(ctxBG, "data", nil)
		done <- result{name, err}
	}()
	<-g.started // the snapshot's first transaction is done, its clone waits
	newer := bytes.Clone(old)
	copy(newer, "NEW")
	_, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: "data/f", Offset: 0, Length: 3, Body: strings.NewReader("NEW")})
	mustNil(t, err, "overwrite while the snapshot waits")
	close(g.release)
	r := <-done
	mustNil(t, r.err, "snapshot")
	got, err := e.snapContent(r.name, "data/f")
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("snapshot after a commit raced its clone: %d bytes, first %q, %v", len(got), got[:1], err)
	}
	if got := e.content("data/f"); !bytes.Equal(got, newer) {
		t.Fatal("live file lost the write")
	}
}

// A file deleted (and its blob collected) after the snapshot's first
// transaction and before its clone keeps its content for the snapshot:
// the collector leaves keys with pending clones alone.
func TestSnapshotOfFileDeletedMeanwhile(t *testing.T) {
	e, g := newGatedEnv(t)
	e.share("data")
	old := bytes.Repeat([]byte{'d'}, BlockSize+10)
	e.putFile("data/f", old)
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		name, _, err := e.fs.CreateShareSnapshot(ctxBG, "data", nil)
		done <- result{name, err}
	}()
	<-g.started
	mustNil(t, e.fs.DeleteFile(ctxBG, "data/f", ""), "delete while the snapshot waits")
	e.fs.collect(ctxBG)
	if _, err := e.store.CollectGarbage(ctxBG, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	r := <-done
	mustNil(t, r.err, "snapshot")
	got, err := e.snapContent(r.name, "data/f")
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("snapshot of a file deleted meanwhile: %d bytes, %v", len(got), err)
	}
	// Once the snapshot has it, the deleted file's blob goes.
	e.fs.collect(ctxBG)
	n := 0
	if _, err := e.store.List(ctxBG, "f", "", 0, func(blobstore.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the deleted file's blob stayed after the snapshot completed")
	}
}

// newGatedEnv is an env whose store holds the snapshot's first clone.
func newGatedEnv(t *testing.T) (*env, *gatedStore) {
	dir := t.TempDir()
	ctx := context.Background()
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: RemoveFile})
	mustNil(t, err, "locks.Open")
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
	mustNil(t, err, "local.New")
	g := &gatedStore{Store: store, dst: "*", started: make(chan struct{}), release: make(chan struct{})}
	fsys, err := New(ctx, Config{Table: table, Store: g, Logger: quietLogger(), SpillDir: dir})
	mustNil(t, err, "fs.New")
	e := &env{t: t, dir: dir, table: table, fs: fsys, store: store}
	t.Cleanup(e.close)
	return e, g
}

// A share deleted while a snapshot of it clones content: the snapshot
// fails with ErrShareNotFound and leaves no blob behind.
func TestSnapshotOfShareDeletedMeanwhile(t *testing.T) {
	e, g := newGatedEnv(t)
	e.share("data")
	e.putFile("data/f", bytes.Repeat([]byte{'x'}, BlockSize+10))
	done := make(chan error, 1)
	go func() {
		_, _, err := e.fs.CreateShareSnapshot(ctxBG, "data", nil)
		done <- err
	}()
	<-g.started
	mustNil(t, e.fs.RemoveShare(ctxBG, DeleteShareRequest{Name: "data", IncludeSnapshots: true}), "delete the share")
	close(g.release)
	if err := <-done; !errors.Is(err, ErrShareNotFound) {
		t.Fatalf("snapshot of a share deleted meanwhile: %v", err)
	}
	e.fs.collect(ctxBG)
	n := 0
	if _, err := e.store.List(ctxBG, "", "", 0, func(i blobstore.Info) error { n++; t.Logf("left: %s", i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d blobs left", n)
	}
}

// PermissionOf: the default permission until a key is set, then the
// key's SDDL (what the SMB endpoint will answer).
func TestPermissionOf(t *testing.T) {
	e := newEnv(t)
	e.share("data")
	e.putFile("data/f", []byte("x"))
	a, _, err := e.fs.Stat(ctxBG, "data/f", "")
	mustNil(t, err, "stat")
	got, err := e.fs.PermissionOf(ctxBG, a.ID)
	if err != nil || got != DefaultPermission {
		t.Fatalf("default: %q %v", got, err)
	}
	const sddl = "O:BAG:SYD:(A;;FA;;;BA)"
	key, err := e.fs.CreatePermission(ctxBG, "data", sddl)
	mustNil(t, err, "create permission")
	_, err = e.fs.SetProperties(ctxBG, SetPropertiesRequest{Path: "data/f", Props: SMBProperties{PermissionKey: &key}})
	mustNil(t, err, "set key")
	if got, err := e.fs.PermissionOf(ctxBG, a.ID); err != nil || got != sddl {
		t.Fatalf("after set: %q %v", got, err)
	}
	if _, err := e.fs.PermissionOf(ctxBG, 999999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
}
