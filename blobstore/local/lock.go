package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// keyLocks serialises the goroutines of one process per key, waiting with
// a context; flock on the key's lock file then serialises processes.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{} // holds one token while locked
	refs int
}

func (l *keyLocks) acquire(ctx context.Context, kd string) (func(), error) {
	l.mu.Lock()
	k := l.m[kd]
	if k == nil {
		k = &keyLock{ch: make(chan struct{}, 1)}
		l.m[kd] = k
	}
	k.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		k.refs--
		if k.refs == 0 {
			delete(l.m, kd)
		}
		l.mu.Unlock()
	}
	select {
	case k.ch <- struct{}{}:
		return func() { <-k.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// lockKey takes the key's lock, in-process and across processes, creating
// the key directory if needed. The returned function unlocks.
func (s *Store) lockKey(ctx context.Context, key, kd string) (func(), error) {
	unlockMem, err := s.locks.acquire(ctx, kd)
	if err != nil {
		return nil, fmt.Errorf("lock %q: %w", key, err)
	}
	f, err := s.flock(kd)
	if err != nil {
		unlockMem()
		return nil, fmt.Errorf("lock %q: %w", key, err)
	}
	return func() {
		_ = f.Close() // closing drops the flock
		unlockMem()
	}, nil
}

// flock locks kd/lock exclusively. Garbage collection may remove the lock
// file and the directory while holding the lock, so after locking check
// that the path still names the locked inode, else start over.
func (s *Store) flock(kd string) (*os.File, error) {
	path := filepath.Join(kd, lockName)
	for range 100 {
		if err := s.ensureKeyDir(kd); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrNotExist) {
			continue // directory removed under us
		}
		if err != nil {
			return nil, err
		}
		if err := flockRetry(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		fst, err1 := f.Stat()
		pst, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(fst, pst) {
			return f, nil
		}
		f.Close()
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, err2
		}
	}
	return nil, fmt.Errorf("flock %s: lock file keeps being replaced", path)
}

func flockRetry(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
