package fs

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
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
	if _, err := e.store.CollectGarbage(ctxBG, 0); err != nil {
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
	mustNil(t, e.fs.DeleteShareSnapshot(ctxBG, "data", snap), "delete snapshot")
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
