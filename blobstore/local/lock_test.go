package local

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// TestLockWaitHonoursContext: a commit waiting for the key lock held by
// another goroutine gives up when its context ends, and succeeds once the
// lock is free.
func TestLockWaitHonoursContext(t *testing.T) {
	s := newTestStore(t)
	const key = "locked/blob"
	if _, err := s.StageBlock(context.Background(), key, "a", strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	kd, _ := s.keyDir(key)
	unlock, err := s.lockKey(context.Background(), key, kd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.CommitBlocks(ctx, key, []string{"a"}, blobstore.Conditions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("commit while the key is locked = %v, want context.DeadlineExceeded", err)
	}
	if err := s.Delete(ctx, key, blobstore.Conditions{IfMatch: "*"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("delete after the deadline = %v, want context.DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.CommitBlocks(context.Background(), key, []string{"a"}, blobstore.Conditions{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("commit finished while the key was locked: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("commit after unlock: %v", err)
	}
	if got := readString(t, s, key); got != "a" {
		t.Fatalf("content %q", got)
	}
	// Other keys never wait for this one.
	unlock, err = s.lockKey(context.Background(), key, kd)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if _, err := blobstore.Put(ctx2, s, "other/blob", strings.NewReader("x"), 0, blobstore.Conditions{}); err != nil {
		t.Fatalf("commit of another key while one is locked: %v", err)
	}
}
