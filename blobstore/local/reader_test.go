package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/storetest"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestReaderFDs: ReadRange opens only the blocks a range covers, closes
// each as it is used up, and Close releases the rest, also when the
// reader is abandoned half way.
func TestReaderFDs(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	const key, nblocks, bsize = "fd/blob", 100, 1000
	if _, err := blobstore.Put(ctx, s, key, storetest.Data(1, nblocks*bsize), bsize, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	base := openFDs(t)
	for _, tc := range []struct {
		name         string
		off, n       int64
		read         int64 // bytes to read before Close; -1: all
		wantOpenDiff int   // fds held right after ReadRange
	}{
		{"OneBlock", 5 * bsize, 10, -1, 1},
		{"TwoBlocks", 5*bsize + 999, 2, -1, 2},
		{"Tail", (nblocks - 3) * bsize, -1, -1, 3},
		{"AllReadFully", 0, -1, -1, nblocks},
		{"AllAbandoned", 0, -1, 2500, nblocks},
		{"PastEnd", nblocks * bsize, -1, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, _, err := s.ReadRange(ctx, key, tc.off, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if got := openFDs(t) - base; got != tc.wantOpenDiff {
				t.Errorf("ReadRange(%d, %d) holds %d fds, want %d", tc.off, tc.n, got, tc.wantOpenDiff)
			}
			var r io.Reader = rc
			if tc.read >= 0 {
				r = io.LimitReader(rc, tc.read)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := storetest.DataAt(1, min(tc.off, nblocks*bsize), int64(len(got))); !bytes.Equal(got, want) {
				t.Fatalf("read wrong bytes")
			}
			if tc.read < 0 && tc.wantOpenDiff > 0 {
				if _, err := rc.Read(make([]byte, 1)); err != io.EOF {
					t.Fatalf("read after the end: %v", err)
				}
				if got := openFDs(t) - base; got != 0 {
					t.Errorf("after reading to the end %d fds still open before Close", got)
				}
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if got := openFDs(t) - base; got != 0 {
				t.Errorf("%d fds leaked after Close", got)
			}
		})
	}
}

// TestReaderSurvivesDelete: an open reader keeps reading its version after
// the blob is deleted and garbage collected.
func TestReaderSurvivesDelete(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	want := storetest.DataAt(2, 0, 50_000)
	if _, err := blobstore.Put(ctx, s, "del/blob", bytes.NewReader(want), 7000, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.ReadRange(ctx, "del/blob", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := s.Delete(ctx, "del/blob", blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("reader after delete read %d bytes, %v; want the %d bytes of its version", len(got), err, len(want))
	}
}

// failingReader yields some bytes, then an error.
type failingReader struct{ n int }

var errSource = errors.New("source broke")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errSource
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

// TestStageFailureLeavesNothing: a staging that fails (source error,
// cancelled context) leaves no staged block and no temp file, and an
// earlier staging of the same id stays intact.
func TestStageFailureLeavesNothing(t *testing.T) {
	s := newTestStore(t)
	const key = "fail/blob"
	if _, err := s.StageBlock(context.Background(), key, "b", strings.NewReader("good")); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	for _, tc := range []struct {
		name string
		ctx  context.Context
		r    io.Reader
		want error
	}{
		{"SourceError", context.Background(), &failingReader{n: 3 << 20}, errSource},
		{"CancelledMidway", cancelled, io.MultiReader(&cancelAfter{n: 2 << 20, cancel: cancel}, strings.NewReader(strings.Repeat("x", 4<<20))), context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.StageBlock(tc.ctx, key, "b", tc.r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("StageBlock = %v, want %v", err, tc.want)
			}
			kd, _ := s.keyDir(key)
			ents, _ := os.ReadDir(kd)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), tempPrefix) {
					t.Errorf("temp file %s left behind", e.Name())
				}
			}
			if b, err := os.ReadFile(filepath.Join(kd, stagedPrefix+"b")); err != nil || string(b) != "good" {
				t.Errorf("earlier staging of the id = %q, %v; want it intact", b, err)
			}
		})
	}
	if _, err := s.CommitBlocks(context.Background(), key, []string{"b"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, s, key); got != "good" {
		t.Fatalf("committed %q", got)
	}
}

// cancelAfter yields n bytes, cancelling its context once they are read.
type cancelAfter struct {
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
		return 0, io.EOF
	}
	k := min(len(p), c.n)
	c.n -= k
	return k, nil
}
