package walsync

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	_ "modernc.org/sqlite"
)

// blockingSyncer returns a Syncer whose fsyncs each wait for a value on
// release after announcing themselves on started (with their number).
func blockingSyncer() (s *Syncer, started chan int, release chan error, waiting chan struct{}) {
	s = New("unused")
	started, release, waiting = make(chan int, 16), make(chan error), make(chan struct{}, 16)
	var n atomic.Int32
	s.fsync = func() error {
		started <- int(n.Add(1))
		return <-release
	}
	s.waiting = func() { waiting <- struct{}{} }
	return s, started, release, waiting
}

// TestGroup: callers that arrive while a sync runs share the next one,
// and none of them returns before that one has started and ended; its
// error reaches each of them.
func TestGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{"ok", nil}, {"fsync fails", errors.New("EIO")}} {
		t.Run(tc.name, func(t *testing.T) {
			s, started, release, waiting := blockingSyncer()
			ctx := context.Background()
			first := make(chan error, 1)
			go func() { first <- s.Sync(ctx) }()
			if n := <-started; n != 1 {
				t.Fatalf("fsync %d, want 1", n)
			}
			const late = 5
			var returned atomic.Int32
			errs := make(chan error, late)
			for range late {
				go func() {
					err := s.Sync(ctx)
					returned.Add(1)
					errs <- err
				}()
			}
			for range late {
				<-waiting
			}
			release <- nil // the first sync ends; one of the late callers starts the second
			if err := <-first; err != nil {
				t.Fatalf("first Sync: %v", err)
			}
			if n := <-started; n != 2 {
				t.Fatalf("fsync %d, want 2", n)
			}
			if r := returned.Load(); r != 0 {
				t.Fatalf("%d late callers returned before the sync that covers them ended", r)
			}
			release <- tc.err
			for range late {
				if err := <-errs; !errors.Is(err, tc.err) {
					t.Errorf("late caller got %v, want %v", err, tc.err)
				}
			}
			select {
			case n := <-started:
				t.Errorf("fsync %d: the late callers did not share one", n)
			default:
			}
		})
	}
}

// TestCancelledWaiter: a caller whose context ends while it waits returns
// the context's error; the round it waited for is led by the next caller.
func TestCancelledWaiter(t *testing.T) {
	s, started, release, waiting := blockingSyncer()
	first := make(chan error, 1)
	go func() { first <- s.Sync(context.Background()) }()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- s.Sync(ctx) }()
	<-waiting
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter got %v", err)
	}
	release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	next := make(chan error, 1)
	go func() { next <- s.Sync(context.Background()) }()
	if n := <-started; n != 2 {
		t.Fatalf("fsync %d, want 2", n)
	}
	release <- nil
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with a done context: %v", err)
	}
}

// TestDatabase syncs a real database's log after commits from several
// goroutines, and a database without a log.
func TestDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one writer, as the stores open theirs: commits queue in the pool
	if _, err := db.Exec(`CREATE TABLE t(x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	s := New(path)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Exec(`INSERT INTO t VALUES(?)`, i); err != nil {
				t.Error(err)
				return
			}
			if err := s.Sync(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := New(filepath.Join(t.TempDir(), "none.db")).Sync(context.Background()); err != nil {
		t.Errorf("no log: %v", err)
	}
}
