package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/local"
)

// Blocks staged by a process that died before committing are collected
// when serve starts and no other blobshare process is alive; committed
// content is untouched.
func TestServeCollectsOrphanedBlocksAtStart(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()

	// First life: a share with a file, then stop cleanly.
	s := startServe(t, data)
	m := &mixed{srv: s, share: serviceClient(t, s).NewShareClient("gcshare")}
	if _, err := m.share.Create(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	m.putFile(t, "kept.txt", []byte("committed content"))
	stopServe(t, s)

	// A "crashed writer": blocks staged in the store, never committed.
	store, err := local.New(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := store.StageBlock(ctx, "f/orphan", blobstore.NewBlockID(), strings.NewReader("lost bytes")); err != nil {
			t.Fatal(err)
		}
	}

	s2 := startServe(t, data)
	eventually(t, "the collection log line", func() error {
		if strings.Contains(s2.Stderr.String(), "staged_blocks=3") {
			return nil
		}
		return errNotYet
	})
	m2 := &mixed{srv: s2, share: serviceClient(t, s2).NewShareClient("gcshare")}
	got, err := m2.download(t, "kept.txt", fileRangeAll)
	if err != nil || string(got) != "committed content" {
		t.Fatalf("committed file after collection: %q, %v", got, err)
	}
}

var errNotYet = errors.New("not yet")
