package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
)

// TestCommitResolvesStagedAndCommitted: a commit resolves each id as
// Azure's "Latest" does, a staging winning over a committed block of the
// same id, whether the list is short (a link tried per id) or long (the
// key directory read once, stagedScanFrom); an id neither staged nor
// committed fails the commit and changes nothing.
func TestCommitResolvesStagedAndCommitted(t *testing.T) {
	for _, n := range []int{3, stagedScanFrom, 40} {
		t.Run(fmt.Sprintf("ids=%d", n), func(t *testing.T) {
			ctx := context.Background()
			s := newTestStore(t)
			const key = "dir/file"
			id := func(i int) string { return fmt.Sprintf("id%03d", i) }
			var ids []string
			for i := range n {
				if _, err := s.StageBlock(ctx, key, id(i), strings.NewReader("old"+id(i))); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id(i))
			}
			if _, err := s.CommitBlocks(ctx, key, ids, blobstore.Conditions{}); err != nil {
				t.Fatal(err)
			}
			// Restage every other id, durably or not; commit the list
			// with the first id twice.
			want := "old" + id(0)
			for i := range n {
				if i%2 == 1 {
					stage := s.StageBlock
					if i%4 == 1 {
						stage = s.StageBlockDurable
					}
					if _, err := stage(ctx, key, id(i), strings.NewReader("new"+id(i))); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range n {
				if i%2 == 1 {
					want += "new" + id(i)
				} else {
					want += "old" + id(i)
				}
			}
			info, err := s.CommitBlocks(ctx, key, append([]string{id(0)}, ids...), blobstore.Conditions{})
			if err != nil {
				t.Fatal(err)
			}
			read := func() string {
				rc, _, err := s.ReadRange(ctx, key, 0, -1)
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
			if got := read(); got != want {
				t.Fatalf("read %q, want %q", got, want)
			}
			_, err = s.CommitBlocks(ctx, key, append(ids, "missing"), blobstore.Conditions{})
			if !errors.Is(err, blobstore.ErrNotFound) {
				t.Fatalf("commit naming a missing block: %v, want ErrNotFound", err)
			}
			if _, cur, err := s.Blocks(ctx, key); err != nil || cur.ETag != info.ETag {
				t.Fatalf("after the failed commit: %v, etag %q want %q", err, cur.ETag, info.ETag)
			}
			if got := read(); got != want {
				t.Fatalf("after the failed commit: read %q, want %q", got, want)
			}
		})
	}
}
