package fs

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The staged-writes hint: every read path must know whether another
// process holds staged visible writes, and asking the database costs a
// statement (a fifth of a Get File Properties, a quarter of a handle
// read). So the processes over one data directory share a counter in a
// memory-mapped file beside the database, blobshare.unflushed: a
// FileSystem adds one before it writes an ns_unflushed row and takes one
// off after the row is gone (a reader removing a dead process's row takes
// it off for it). The counter minus this FileSystem's own rows is never
// below the rows of others, so when it is zero a reader skips the
// statement; a process that died between its add and its row leaves the
// counter high, which costs readers the statement, never an answer. (The
// database is local, as SQLite's must be, so every process sharing it
// maps the same file.)

// hint is the mapped counter; nil when the file could not be mapped (the
// readers then always ask the database).
type hint struct {
	mem []byte
	n   *int64
}

func openHint(dbPath string) (*hint, error) {
	return openCounter(dbPath, ".unflushed", "staged-writes hint")
}

// openCounter maps the shared counter file beside the database named by
// suffix (what names it in errors): the staged-writes hint, and the
// watch hint of change notification (notify.go), which works alike.
func openCounter(dbPath, suffix, what string) (*hint, error) {
	path := strings.TrimSuffix(dbPath, ".db") + suffix
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if st.Size() < 8 {
		if err := f.Truncate(8); err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, path, err)
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return &hint{mem: mem, n: (*int64)(unsafe.Pointer(&mem[0]))}, nil // page-aligned: atomic access is safe
}

func (h *hint) add(d int64) {
	if h != nil {
		atomic.AddInt64(h.n, d)
	}
}

// othersMayHave reports whether rows beyond own may exist.
func (h *hint) othersMayHave(own int64) bool {
	return h == nil || atomic.LoadInt64(h.n)-own > 0
}

// anyRows reports whether rows may exist at all (any process's).
func (h *hint) anyRows() bool {
	return h == nil || atomic.LoadInt64(h.n) > 0
}

func (h *hint) close() {
	if h != nil {
		syscall.Munmap(h.mem)
	}
}
