package locks

// Per-key transaction locks and their audit (doc.go, "Key locks"). Every
// write decision locks the keys it decides on — entry ids: files and
// directories share one id space — before it reads their state, so that
// what makes a decision exact is a lock on what it decides about, not
// SQLite's database-wide write lock. On SQLite the lock itself is a no-op
// (BEGIN IMMEDIATE already serialises writers); an engine without a
// global write lock takes pg_advisory_xact_lock(key) or its like here.
// In test runs the Table records the keys each write transaction holds,
// and every read-for-update of a file's state checks that its key is
// among them: a decision that forgets its lock fails the default suite.

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// LockKeys takes the transaction locks of keys: exclusive until the
// transaction ends, in ascending order, each key once however often it is
// asked for (a key already held costs nothing). Call it before reading the
// state the decision depends on; state read earlier in the transaction may
// have changed by the time the lock is granted, so recheck reports that the
// caller must read again what it decided on (the path still names the ids
// it locked, the handle is still open) and start over if it moved.
//
// On SQLite no other writer can run inside the transaction, so recheck is
// false — except in test runs, where it is true whenever a key was newly
// taken, so that the callers' re-checks run (and find nothing moved) in the
// default suite. Locks taken by a second call may be below keys already
// held: on an engine with real key locks two such transactions can
// deadlock, which the engine detects and Update retries; decisions take
// what they can know up front in one call. In a read transaction it fails
// with ErrInvalidParameter: reads need no locks (a View is one snapshot).
func (tx *Tx) LockKeys(keys ...FileID) (recheck bool, err error) {
	if err := tx.mustWrite("LockKeys"); err != nil {
		return false, err
	}
	return tx.lockKeys("", keys...), nil
}

// lockKeys is LockKeys for a decision of this package, named so that the
// lock audit's test can leave one decision's lock out (Options.skipKeyLock)
// and see the audit catch it. It reports whether a key was newly taken in
// a test run (LockKeys' recheck); in a read transaction it does nothing.
func (tx *Tx) lockKeys(decision string, keys ...FileID) bool {
	if !tx.write {
		return false
	}
	if !tx.t.audit {
		return false // SQLite: BEGIN IMMEDIATE holds every key already
	}
	if decision != "" && decision == tx.t.opts.skipKeyLock {
		return false
	}
	taken := false
	for _, k := range keys {
		i, found := slices.BinarySearch(tx.held, k)
		if !found {
			tx.held = slices.Insert(tx.held, i, k)
			taken = true
		}
	}
	return taken
}

// AuditKey is the lock audit for the namespace's reads-for-update (package
// fs): in a write transaction of a test run it fails with ErrKeyNotLocked,
// naming key, what and the call site, unless key is locked (LockKeys). In a
// built program, and in read transactions, it returns nil at the cost of a
// branch.
func (tx *Tx) AuditKey(key FileID, what string) error { return tx.holds(key, what) }

// holds is the lock audit of a read-for-update: what names the state of
// key about to be read (and then written) in a write transaction. It
// fails, in test runs only, with ErrKeyNotLocked naming the key and the
// decision that read it without its lock.
func (tx *Tx) holds(key FileID, what string) error {
	if !tx.t.audit || !tx.write {
		return nil
	}
	if _, found := slices.BinarySearch(tx.held, key); found {
		return nil
	}
	tx.t.auditFailures.Add(1)
	err := fmt.Errorf("locks: lock audit: %s of file %d read for update without its key lock (held %v), at %s: %w",
		what, key, tx.held, callSite(), ErrKeyNotLocked)
	tx.t.log.Error("lock audit failed", "err", err)
	return err
}

// callSite names the decision that called the audit: the stack from the
// first frame outside this file's helpers, up to six frames of this
// module.
func callSite() string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for {
		f, more := frames.Next()
		name := f.Function
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		if strings.HasPrefix(f.Function, "github.com/blobshare/blobshare/") {
			out = append(out, fmt.Sprintf("%s (%s:%d)", name, shortFile(f.File), f.Line))
		}
		if !more || len(out) == 6 {
			break
		}
	}
	return strings.Join(out, " ← ")
}

func shortFile(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

// auditKeyLocks is whether a Table audits key locks: in test runs (go
// test), never in a built program, which pays nothing for it, and not in
// benchmark runs (go test -bench, which ./bench runs), which measure what a
// built program runs: the audit's recording, and the re-checks LockKeys
// asks for in test runs, are no part of it.
func auditKeyLocks() bool {
	if !testing.Testing() {
		return false
	}
	bench := flag.Lookup("test.bench")
	return bench == nil || bench.Value.String() == ""
}
