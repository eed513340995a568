package walsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Syncer syncs the -wal file of one database. The zero value is not
// usable; create it with New. Safe for concurrent use.
type Syncer struct {
	wal   string
	fsync func() error // replaceable in tests
	// waiting, when set, is called once a caller waits for the next
	// round (tests: an event to synchronise on).
	waiting func()

	mu      sync.Mutex
	running *round // the sync under way, nil when none
	next    *round // the sync that starts after running, nil until someone waits for it
}

// round is one fsync and everyone waiting for it.
type round struct {
	started bool
	done    chan struct{} // closed when the fsync returned; err is set then
	err     error
}

// New returns a Syncer for the database file at dbPath (its log is
// dbPath + "-wal").
func New(dbPath string) *Syncer {
	s := &Syncer{wal: dbPath + "-wal"}
	s.fsync = s.syncWAL
	return s
}

// Sync returns once every transaction committed before it was called is
// durable, or with the fsync's error, or with ctx's error when ctx ends
// first (the commits may or may not be durable then).
func (s *Syncer) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.running == nil {
		// Nobody is syncing: this caller leads, taking over a round
		// whose waiters have not woken yet, if any.
		r := s.next
		if r == nil {
			r = &round{done: make(chan struct{})}
		}
		s.next = nil
		return s.lead(r)
	}
	// The sync under way may have started before the caller's commit:
	// wait for the next one.
	if s.next == nil {
		s.next = &round{done: make(chan struct{})}
	}
	r, cur := s.next, s.running
	s.mu.Unlock()
	if s.waiting != nil {
		s.waiting()
	}
	select {
	case <-cur.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	if !r.started {
		// The first waiter to wake starts it (nobody runs: the round
		// under way has ended, and whoever started another took r).
		s.next = nil
		return s.lead(r)
	}
	s.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lead runs round r. s.mu is held on entry and released.
func (s *Syncer) lead(r *round) error {
	r.started = true
	s.running = r
	s.mu.Unlock()
	err := s.fsync()
	s.mu.Lock()
	r.err = err
	s.running = nil
	close(r.done)
	s.mu.Unlock()
	return err
}

// syncWAL fsyncs the -wal file; a missing one has nothing to sync.
func (s *Syncer) syncWAL() error {
	f, err := os.Open(s.wal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("walsync: %w", err)
	}
	err = datasync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("walsync: sync %s: %w", s.wal, err)
	}
	return nil
}
