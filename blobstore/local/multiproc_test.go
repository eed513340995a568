package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

const (
	envCounterDir = "BLOBSHARE_COUNTER_CHILD_DIR"
	counterKey    = "shared/counter"
	counterIncs   = 25
)

// increment adds one to the decimal number in counterKey with an
// optimistic read-stage-commit(If-Match) loop and returns how many
// attempts lost a race.
func increment(ctx context.Context, s *Store) (int, error) {
	for lost := 0; ; lost++ {
		var n int
		cond := blobstore.Conditions{IfNoneMatch: "*"}
		rc, info, err := s.ReadRange(ctx, counterKey, 0, -1)
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
		case err != nil:
			return lost, err
		default:
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return lost, err
			}
			if n, err = strconv.Atoi(string(b)); err != nil {
				return lost, fmt.Errorf("counter holds %q: %w", b, err)
			}
			cond = blobstore.Conditions{IfMatch: info.ETag}
		}
		_, err = blobstore.Put(ctx, s, counterKey, strings.NewReader(strconv.Itoa(n+1)), 0, cond)
		if errors.Is(err, blobstore.ErrPreconditionFailed) {
			continue
		}
		return lost, err
	}
}

// TestCounterChild is the body of TestCrossProcessIfMatch's children.
func TestCounterChild(t *testing.T) {
	dir := os.Getenv(envCounterDir)
	if dir == "" {
		t.Skip("only run as a child of TestCrossProcessIfMatch")
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for range counterIncs {
		l, err := increment(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		lost += l
	}
	fmt.Printf("lost %d\n", lost)
}

// TestCrossProcessIfMatch has several processes (and goroutines in this
// one) increment one counter blob through If-Match commits on one
// directory, with garbage collection running alongside: no increment may
// be lost, which holds only if conditions are checked under a lock that
// spans processes.
func TestCrossProcessIfMatch(t *testing.T) {
	const children = 3
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out string
		err error
	}
	results := make(chan result, children+1)
	for range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCounterChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envCounterDir+"="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			err := cmd.Wait()
			results <- result{out.String(), err}
		}()
	}
	go func() {
		lost := 0
		for range counterIncs {
			l, err := increment(ctx, s)
			if err != nil {
				results <- result{"", err}
				return
			}
			lost += l
		}
		results <- result{fmt.Sprintf("lost %d (parent)", lost), nil}
	}()
	gcDone := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{OlderThan: time.Hour}); err != nil && ctx.Err() == nil {
				gcDone <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		gcDone <- nil
	}()
	races := 0
	for range children + 1 {
		r := <-results
		if r.err != nil {
			t.Fatalf("incrementer failed: %v\n%s", r.err, r.out)
		}
		var lost int
		if i := strings.Index(r.out, "lost "); i >= 0 {
			fmt.Sscanf(r.out[i:], "lost %d", &lost)
		}
		races += lost
	}
	cancel()
	if err := <-gcDone; err != nil {
		t.Fatalf("garbage collection: %v", err)
	}
	b, err := io.ReadAll(mustRead(t, s, counterKey))
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa((children + 1) * counterIncs)
	if string(b) != want {
		t.Fatalf("counter = %s after %d increments each by %d incrementers, want %s (lost updates)", b, counterIncs, children+1, want)
	}
	t.Logf("%d increments, %d lost races retried", (children+1)*counterIncs, races)
}

func mustRead(t *testing.T, s *Store, key string) io.Reader {
	t.Helper()
	rc, _, err := s.ReadRange(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}
