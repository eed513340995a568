package fs

// Key locks of the namespace's decisions (doc.go, "Key locks"). A decision
// that checks and then writes locks the entries it decides on through
// locks.Tx.LockKeys — entry ids, one id space with the lock table's files —
// before it relies on what it read:
//
//   - create (file, directory, share): the parent, whose key guards the
//     names in it;
//   - unlink and rmdir, REST Delete File and Delete Directory: the parent
//     and the entry (the entry's key also guards "directory empty":
//     creating in a directory locks it);
//   - rename: both parents, the source and a replaced destination;
//   - changes of an entry (properties, metadata, attributes, times, a
//     content commit): the entry.
//
// Keys found by a lookup are locked in one sorted call, and the lookup is
// repeated when LockKeys says state read before it may be stale; if the
// names now lead elsewhere, the new ids are locked and the lookup runs
// again. In test runs every write helper (insert, updateEntry, touchDir,
// the emptiness checks, removals) audits its key (locks.Tx.AuditKey).

import (
	"errors"
	"fmt"
	"slices"
)

// maxRelocks bounds the rounds of lookup, lock and re-check of one
// decision; each extra round means another transaction renamed or
// replaced what the lookup found before this one held the parent.
const maxRelocks = 8

// lock takes the key locks of a namespace decision (locks.Tx.LockKeys),
// unless the lock audit's test leaves this decision's out. recheck says
// that what the decision read before may have changed.
func (q *q) lock(decision string, keys ...FileID) (recheck bool, err error) {
	if q.fs.skipKeyLock != "" && decision == q.fs.skipKeyLock {
		return false, nil
	}
	recheck, err = q.ltx.LockKeys(keys...)
	if err != nil {
		return false, fmt.Errorf("%s: lock %v: %w", decision, keys, err)
	}
	return recheck, nil
}

// holds audits a read-for-update of key's row (or of the names in it, for
// a directory) in a write transaction (locks.Tx.AuditKey).
func (q *q) holds(key FileID, what string) error {
	return q.ltx.AuditKey(key, what)
}

// lockChild is childRef under the key locks of parent and of the child
// found: the child as read once both are held (ErrNotFound with only the
// parent locked, when there is none).
func (q *q) lockChild(decision string, parent FileID, name string) (entry, error) {
	return q.lockFound(decision, parent, func() (entry, error) { return q.childRef(parent, name) })
}

// shareLocked is share under the key locks of the root (whose names are
// the shares) and of the share found.
func (q *q) shareLocked(decision, name string) (entry, error) {
	if err := ValidateShareName(name); err != nil {
		return entry{}, err
	}
	return q.lockFound(decision, RootID, func() (entry, error) { return q.share(name) })
}

// lockFound runs read, a lookup of a name in parent, locks parent and the
// entry it found in one call, and runs read again while LockKeys says what
// it read may be stale, until it finds the entry it locked (or, having
// found nothing, still finds nothing).
func (q *q) lockFound(decision string, parent FileID, read func() (entry, error)) (entry, error) {
	e, err := read()
	for range maxRelocks {
		keys := []FileID{parent}
		switch {
		case err == nil:
			keys = append(keys, e.id)
		case !isNotFound(err):
			return entry{}, err
		}
		recheck, lerr := q.lock(decision, keys...)
		if lerr != nil {
			return entry{}, lerr
		}
		if !recheck {
			return e, err
		}
		e2, err2 := read()
		if sameFound(e, err, e2, err2) {
			return e2, err2
		}
		e, err = e2, err2
	}
	return entry{}, errPathMoved
}

func isNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrShareNotFound)
}

func sameFound(a entry, aerr error, b entry, berr error) bool {
	if aerr != nil || berr != nil {
		return isNotFound(aerr) && isNotFound(berr)
	}
	return a.id == b.id
}

// keys are the ids a decision on a resolved path locks: the directory that
// holds the last component and the entry, when found.
func (r resolved) keys() []FileID {
	if r.found {
		return []FileID{r.parent.id, r.e.id}
	}
	return []FileID{r.parent.id}
}

// resolveLocked is resolve under the key locks of the path's parent and
// entry: the result as read once they are held. A path that cannot be
// resolved (no share, no parent) is answered from the lookup without a
// lock: nothing is written for it.
func (q *q) resolveLocked(decision, path string) (resolved, error) {
	r, err := q.resolve(path)
	for range maxRelocks {
		if err != nil {
			return r, err
		}
		recheck, lerr := q.lock(decision, r.keys()...)
		if lerr != nil {
			return resolved{}, lerr
		}
		if !recheck {
			return r, nil
		}
		r2, err2 := q.resolve(path)
		if err2 == nil && r2.parent.id == r.parent.id && r2.found == r.found && (!r.found || r2.e.id == r.e.id) {
			return r2, nil
		}
		r, err = r2, err2
	}
	return resolved{}, errPathMoved
}

// mustResolveLocked is resolveLocked for a path that must exist.
func (q *q) mustResolveLocked(decision, path string) (resolved, error) {
	r, err := q.resolveLocked(decision, path)
	if err != nil {
		return r, err
	}
	if !r.found {
		return r, ErrNotFound
	}
	return r, nil
}

// getLocked is get under the key lock of id: a change of one entry.
func (q *q) getLocked(decision string, id FileID) (entry, error) {
	if _, err := q.lock(decision, id); err != nil {
		return entry{}, err
	}
	return q.get(id)
}

// entryLocked is get under the key locks of the entry and of its parent:
// a decision that moves or removes an entry it knows by id (a rename
// through a handle). It re-reads the entry until its parent is the one
// locked.
func (q *q) entryLocked(decision string, id FileID) (entry, error) {
	e, err := q.get(id)
	for range maxRelocks {
		if err != nil {
			return entry{}, err
		}
		recheck, lerr := q.lock(decision, e.parent, id)
		if lerr != nil {
			return entry{}, lerr
		}
		if !recheck {
			return e, nil
		}
		e2, err2 := q.get(id)
		if err2 == nil && e2.parent == e.parent {
			return e2, nil
		}
		e, err = e2, err2
	}
	return entry{}, errPathMoved
}

// lockAncestors locks dir and every directory above it up to the root and
// returns them, dir first: what a directory's move into dir decides on
// ("not into itself"). A concurrent move that changes this chain locks
// the old parent of what it moves, which is on the chain, so the two
// serialise.
func (q *q) lockAncestors(decision string, dir FileID) ([]FileID, error) {
	chain, err := q.ancestors(dir)
	for range maxRelocks {
		if err != nil {
			return nil, err
		}
		recheck, lerr := q.lock(decision, chain...)
		if lerr != nil {
			return nil, lerr
		}
		if !recheck {
			return chain, nil
		}
		again, err2 := q.ancestors(dir)
		if err2 == nil && slices.Equal(again, chain) {
			return again, nil
		}
		chain, err = again, err2
	}
	return nil, errPathMoved
}

// ancestors lists dir and its parents up to the root, dir first.
func (q *q) ancestors(dir FileID) ([]FileID, error) {
	var chain []FileID
	for b := dir; b != 0; {
		chain = append(chain, b)
		e, err := q.get(b)
		if err != nil {
			return nil, err
		}
		b = e.parent
	}
	return chain, nil
}
