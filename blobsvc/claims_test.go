package blobsvc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/meta"
)

// process is one Service on the shared directory dir as a process of its
// own would run it: its own metadata store, content store and lock-table
// owner session.
type process struct {
	svc   *blobsvc.Service
	meta  *sqlstore.Store
	table *locks.Table
}

func newProcess(t *testing.T, dir string) process {
	t.Helper()
	ctx := context.Background()
	table, err := locks.Open(ctx, filepath.Join(dir, "locks.db"), locks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close(context.Background()) })
	meta, err := sqlstore.Open(ctx, filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { meta.Close() })
	meta.UseOwners(sqlstore.TableOwners(table))
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return process{svc: blobsvc.New(meta, content, nil), meta: meta, table: table}
}

// twoProcesses are two processes on one new directory with the
// container "box".
func twoProcesses(t *testing.T) (a, b process) {
	t.Helper()
	dir := t.TempDir()
	a, b = newProcess(t, dir), newProcess(t, dir)
	if _, err := a.svc.CreateContainer(context.Background(), "box", nil, ""); err != nil {
		t.Fatal(err)
	}
	return a, b
}

func readAll(t *testing.T, svc *blobsvc.Service, name string) (blobsvc.Blob, string) {
	t.Helper()
	b, rc, _, _, err := svc.OpenBlob(context.Background(), "box", name, "", nil, "", blobsvc.Conditions{})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, string(data)
}

// TestTwoProcessesIfMatch: writers split over two Services on one
// metadata database (two owner sessions: two processes), each round
// conditioned on the blob's one ETag, Put Blob, Set Blob Metadata, Lease
// Blob acquires and Put Block List with If-None-Match: * mixed: exactly
// one wins each round, the others fail their condition.
func TestTwoProcessesIfMatch(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t)
	procs := []process{a, b}
	if _, err := a.svc.PutBlob(ctx, "box", "f", strings.NewReader("first"), blobsvc.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 6, 15
	for round := range rounds {
		cur, err := b.svc.GetBlob(ctx, "box", "f", "", "", blobsvc.Conditions{})
		if err != nil {
			t.Fatal(err)
		}
		o := blobsvc.WriteOptions{Cond: blobsvc.Conditions{IfMatch: cur.ETag}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		start := make(chan struct{})
		for i := range writers {
			svc := procs[i%2].svc
			wg.Go(func() {
				<-start
				var got blobsvc.Blob
				var err error
				if i%4 < 2 {
					got, err = svc.PutBlob(ctx, "box", "f", strings.NewReader(fmt.Sprint(round, i)), o)
				} else {
					got, err = svc.SetBlobMetadata(ctx, "box", "f", map[string]string{"w": fmt.Sprint(i)}, "", o.Cond)
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, got.ETag)
				case !errors.Is(err, blobsvc.ErrConditionNotMet):
					t.Errorf("round %d writer %d: %v, want success or ErrConditionNotMet", round, i, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d writers won, want 1", round, len(won))
		}
		if got, _ := readAll(t, a.svc, "f"); got.ETag != won[0] {
			t.Fatalf("round %d: the blob's ETag %s, want the winner's %s", round, got.ETag, won[0])
		}
	}
}

// heldCommit installs on p a commit hook that holds p's commits of blob
// name at stage until release is closed, signalling reached once.
func heldCommit(p process, name string, stage blobsvc.CommitStage) (reached chan struct{}, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	p.svc.SetCommitHook(func(ctx context.Context, st blobsvc.CommitStage, b blobsvc.Blob) {
		if st != stage || b.Name != name {
			return
		}
		once.Do(func() { close(reached) })
		<-release
	})
	return reached, release
}

// TestWriteWaitsForLiveClaim: while one process holds a blob's commit
// after its intent (alive), the other process's write of the blob waits
// for the claim, ends with its context, and leaves the intent alone; once
// the commit finishes, the waiting process's next write goes through,
// checked against the finished commit's row.
func TestWriteWaitsForLiveClaim(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t)
	if _, err := a.svc.PutBlob(ctx, "box", "f", strings.NewReader("old"), blobsvc.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	reached, release := heldCommit(a, "f", blobsvc.StageIntent)
	done := make(chan error, 1)
	var committed blobsvc.Blob
	go func() {
		var err error
		committed, err = a.svc.PutBlob(ctx, "box", "f", strings.NewReader("new"), blobsvc.WriteOptions{})
		done <- err
	}()
	<-reached
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err := b.svc.SetBlobMetadata(wctx, "box", "f", map[string]string{"k": "v"}, "", blobsvc.Conditions{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write while a live process holds the claim: %v, want its context's end", err)
	}
	if in, ok, err := b.meta.Intent(ctx, "box", "f"); err != nil || !ok || in.Blob.Size != 3 {
		t.Fatalf("the live commit's intent: %+v %v %v", in, ok, err)
	}
	if got, data := readAll(t, b.svc, "f"); data != "old" || got.Metadata["k"] != "" {
		t.Fatalf("read beside the held commit: %q %v, want the old content", data, got.Metadata)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the held commit: %v", err)
	}
	got, err := b.svc.SetBlobMetadata(ctx, "box", "f", map[string]string{"k": "v"}, "", blobsvc.Conditions{IfMatch: committed.ETag})
	if err != nil {
		t.Fatalf("write after the commit finished, If-Match its ETag: %v", err)
	}
	if _, data := readAll(t, a.svc, "f"); data != "new" || got.Metadata["k"] != "v" {
		t.Fatalf("after both: %q %v", data, got.Metadata)
	}
}

// TestDeadCommitResolved: a process dies (its owner session ends) holding
// a blob's commit after its content commit, before its row. The other
// process's reader finds row and content apart and resolves the dead
// owner's intent (the new content, whole); the dead process, resumed, is
// fenced: its row write fails with ErrClaimLost and changes nothing.
func TestDeadCommitResolved(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t)
	if _, err := a.svc.PutBlob(ctx, "box", "f", strings.NewReader("old"), blobsvc.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	reached, release := heldCommit(a, "f", blobsvc.StageContent)
	done := make(chan error, 1)
	go func() {
		_, err := a.svc.PutBlob(ctx, "box", "f", strings.NewReader("new content"), blobsvc.WriteOptions{})
		done <- err
	}()
	<-reached
	if err := a.table.Close(ctx); err != nil { // a's owner session ends, as at SIGKILL
		t.Fatal(err)
	}
	got, data := readAll(t, b.svc, "f")
	if data != "new content" || got.Size != int64(len(data)) {
		t.Fatalf("read after the holder died: %q (size %d), want the new content whole", data, got.Size)
	}
	if _, ok, err := b.meta.Intent(ctx, "box", "f"); err != nil || ok {
		t.Fatalf("the dead owner's intent after the read: %v %v, want resolved", ok, err)
	}
	if _, err := b.svc.SetBlobMetadata(ctx, "box", "f", map[string]string{"k": "b"}, "", blobsvc.Conditions{IfMatch: got.ETag}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; !errors.Is(err, blobsvc.ErrClaimLost) || !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("the dead process's row write: %v, want ErrClaimLost, which front ends answer as meta.ErrUnavailable (503)", err)
	}
	if cur, data := readAll(t, b.svc, "f"); data != "new content" || cur.Metadata["k"] != "b" {
		t.Fatalf("after the fenced write: %q %v", data, cur.Metadata)
	}
}
