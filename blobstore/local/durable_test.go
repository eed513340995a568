package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
)

// TestStageBlockDurable: a durably staged block is staged like any other
// (it replaces an earlier staging of its id, commits and reads back, and
// leaves no temp file), through the helper too; a bad id stages nothing.
func TestStageBlockDurable(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	const key = "dir/file"
	if _, err := s.StageBlock(ctx, key, "a", strings.NewReader("old")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StageBlockDurable(ctx, key, "a", strings.NewReader("first ")); err != nil || n != 6 {
		t.Fatalf("StageBlockDurable: %d, %v", n, err)
	}
	if _, err := blobstore.StageBlockDurable(ctx, s, key, "b", bytes.NewReader([]byte("second"))); err != nil {
		t.Fatal(err)
	}
	kd, err := s.keyDir(key)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(kd)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temp file %s left behind", e.Name())
		}
	}
	if _, err := s.CommitBlocks(ctx, key, []string{"a", "b"}, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.ReadRange(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != "first second" {
		t.Fatalf("read %q, %v; want %q", got, err, "first second")
	}
	if _, err := s.StageBlockDurable(ctx, key, "bad/id", strings.NewReader("x")); !errors.Is(err, blobstore.ErrInvalidKey) {
		t.Errorf("a bad block id staged: %v", err)
	}
}
