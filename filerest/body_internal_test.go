package filerest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// TestToErrorStorageFull: out of space, however wrapped, is 403
// ShareSizeLimitReached; other storage failures stay 500.
func TestToErrorStorageFull(t *testing.T) {
	wrap := func(err error) error {
		return &fs.Error{Op: "put range", Path: "s/f", Err: fmt.Errorf("stage block 0: %w",
			&os.PathError{Op: "write", Path: "/d/blobs/x", Err: err})}
	}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"ENOSPC", wrap(syscall.ENOSPC), http.StatusForbidden, CodeShareSizeLimitReached},
		{"EDQUOT", wrap(syscall.EDQUOT), http.StatusForbidden, CodeShareSizeLimitReached},
		{"database full", fmt.Errorf("commit s/f: %w", locks.ErrStorageFull), http.StatusForbidden, CodeShareSizeLimitReached},
		{"database busy", fmt.Errorf("commit: %w", locks.ErrBusy), http.StatusInternalServerError, CodeInternalError},
		{"EIO", wrap(syscall.EIO), http.StatusInternalServerError, CodeInternalError},
		{"EROFS", wrap(syscall.EROFS), http.StatusInternalServerError, CodeInternalError},
		{"body read deadline", fmt.Errorf("read request body: %w", os.ErrDeadlineExceeded), http.StatusBadRequest, CodeInvalidInput},
		{"short body", fmt.Errorf("body: %w", io.ErrUnexpectedEOF), http.StatusBadRequest, CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := toError(tc.err)
			if e.Status != tc.status || e.Code != tc.code {
				t.Errorf("toError(%v) = %d %s, want %d %s", tc.err, e.Status, e.Code, tc.status, tc.code)
			}
			if !errors.Is(e, tc.err) {
				t.Errorf("the rendered error does not keep its cause")
			}
			if tc.code == CodeShareSizeLimitReached && e.Message != "The specified share is full." {
				t.Errorf("message %q", e.Message)
			}
		})
	}
}

// TestBudget: charges fit the size, waiters are served in order, a
// cancelled waiter holds nothing and lets the next one in.
func TestBudget(t *testing.T) {
	ctx := context.Background()
	b := newBudget(10)
	if got := b.clamp(25); got != 10 {
		t.Errorf("clamp(25) = %d, want 10", got)
	}
	if err := b.acquire(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if b.tryAcquire(5) {
		t.Fatal("tryAcquire(5) with 4 free succeeded")
	}
	// A waiter for 8 blocks; a later small one must queue behind it.
	got := make(chan string, 3)
	go func() {
		if err := b.acquire(ctx, 8); err == nil {
			got <- "big"
		}
	}()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
	if b.tryAcquire(1) {
		t.Fatal("tryAcquire jumped the queue")
	}
	// A cancelled waiter leaves the queue and holds nothing.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- b.acquire(cctx, 2) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 2 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("cancelled acquire: %v", err)
	}
	b.release(6)
	select {
	case s := <-got:
		if s != "big" {
			t.Fatal(s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued waiter was not granted after the release")
	}
	b.release(8)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.avail != 10 || b.waiters.Len() != 0 {
		t.Errorf("after everything is released: avail %d, %d waiters; want 10, 0", b.avail, b.waiters.Len())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition not reached in 5 s")
}

// TestBodyCharge: whole-block ranges are charged the staging buffer only;
// partial ones their length too.
func TestBodyCharge(t *testing.T) {
	for _, tc := range []struct{ off, n, want int64 }{
		{0, fs.BlockSize, fs.BlockSize},
		{fs.BlockSize, fs.BlockSize, fs.BlockSize},
		{1, fs.BlockSize - 1, 2*fs.BlockSize - 1},
		{0, 1 << 20, fs.BlockSize + 1<<20},
	} {
		if got := bodyCharge(tc.off, tc.n); got != tc.want {
			t.Errorf("bodyCharge(%d, %d) = %d, want %d", tc.off, tc.n, got, tc.want)
		}
	}
}

// TestHeaderKeysCanonical: every key put writes is in the form
// http.Header keeps keys in, so that Get and Del find it.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{hETag, hLastModified, hFileAttributes, hFileCreation, hFileLastWrite, hFileChange,
		hFileID, hFileParentID, hFilePermKey, hLeaseStatus, hLeaseState, hLeaseDuration, hType, hServerEncrypted,
		hAcceptRanges, hContentLength} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header key %q is not canonical: %q", k, c)
		}
	}
}
