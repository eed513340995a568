package sqlmeta

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Owner flock files: the host-local half of an owner session's liveness
// (package locks judges owners with them and with the session rows). Each
// owner (a locks.Table) holds an exclusive flock(2) on its own file
// <db>.owners/<owner> for as long as it lives; the kernel drops the lock
// the instant the process dies, SIGKILL included. Another process (or
// another owner in this process: flock locks belong to open file
// descriptions) probes an owner with LOCK_EX|LOCK_NB: getting the lock
// means the owner is dead. A missing file also means dead: the file is
// created and locked before the owner's row is written, and removed only
// after the owner was reaped or closed.

// ErrInvalidOwner: an owner id that cannot name a file (ValidOwnerID).
var ErrInvalidOwner = errors.New("invalid owner id")

// OwnerLock is an owner's held lock file.
type OwnerLock struct {
	path string
	f    *os.File
}

// OwnersDir is the directory of the owner files of the database at dbPath.
func OwnersDir(dbPath string) string { return dbPath + ".owners" }

func ownerPath(dir, o string) string { return filepath.Join(dir, o) }

// ValidOwnerID keeps owner ids usable as file names.
func ValidOwnerID(o string) bool {
	if o == "" || len(o) > 128 {
		return false
	}
	for _, c := range o {
		ok := c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return false
		}
	}
	return o != "." && o != ".."
}

// LockOwnerFile creates dir/<o> and takes its exclusive flock.
func LockOwnerFile(dir, o string) (*OwnerLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("owner dir %s: %w", dir, err)
	}
	p := ownerPath(dir, o)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("owner file %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("owner file %s: lock: %w (owner id in use?)", p, err)
	}
	return &OwnerLock{path: p, f: f}, nil
}

// Release drops the lock and removes the file.
func (l *OwnerLock) Release() error {
	rmErr := os.Remove(l.path)
	if errors.Is(rmErr, os.ErrNotExist) {
		rmErr = nil
	}
	closeErr := l.f.Close() // closing the description drops the flock
	if rmErr != nil {
		return fmt.Errorf("owner file %s: %w", l.path, rmErr)
	}
	if closeErr != nil {
		return fmt.Errorf("owner file %s: %w", l.path, closeErr)
	}
	return nil
}

// OwnerAlive probes owner o. Errors other than "held" and "missing" are
// reported; callers treat an erroring probe as alive (never reap on doubt).
// An id that cannot name a file is ErrInvalidOwner.
func OwnerAlive(dir, o string) (bool, error) {
	if !ValidOwnerID(o) {
		return false, fmt.Errorf("owner %q: %w", o, ErrInvalidOwner)
	}
	p := ownerPath(dir, o)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("probe owner %s: %w", p, err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return true, fmt.Errorf("probe owner %s: %w", p, err)
	}
	// We got the lock: nobody holds it. Closing f drops it again.
	return false, nil
}

// RemoveOwnerFile deletes a reaped owner's file.
func RemoveOwnerFile(dir, o string) error {
	err := os.Remove(ownerPath(dir, o))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("owner file %s: %w", ownerPath(dir, o), err)
	}
	return nil
}
