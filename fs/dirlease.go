package fs

// Directory leases (locks/dirlease.go): a change of a directory's entries
// — a child created, removed, renamed in or out, its attributes, size or
// times changed — breaks the directory's Read-caching leases, recorded
// here in the transaction that makes the change, beside the
// CHANGE_NOTIFY notices of notify.go, whichever protocol asked. The
// changing open's parent lease key, if any, comes in the transaction's
// context (locks.WithParentLease, set by the SMB server).
//
// A change pays for the lookup of its directory's leases only while a
// directory lease may exist anywhere: the processes over one data
// directory share a counter of granted directory leases in a mapped file
// beside the database, blobshare.dirleases, as the watch hint of
// notify.go. The SMB server counts a directory open up (HoldDirLease)
// before the transaction that may grant its lease, so a change either
// sees the count or commits before the lease exists, and down
// (ReleaseDirLease) once the open's caching is gone. A process that dies
// holding some leaves the counter high: that costs changes the lookup,
// never a break.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// dirLeaseHolds is this FileSystem's share of the directory lease hint:
// the handles it counted.
type dirLeaseHolds struct {
	hint *hint // nil: every change asks the database
	mu   sync.Mutex
	held map[locks.HandleID]struct{}
}

func (fsys *FileSystem) openDirLeaseHint() {
	h, err := openCounter(fsys.table.Path(), ".dirleases", "directory lease hint")
	if err != nil {
		fsys.log.Warn("fs: every change will ask the database for directory leases", "err", err)
		return
	}
	fsys.dirLeases.hint = h
}

// HoldDirLease counts the directory lease that open h may be granted:
// call it before the transaction that grants it (the SMB server's), and
// ReleaseDirLease once h's caching is gone (or nothing was granted).
// Holding h twice counts once.
func (fsys *FileSystem) HoldDirLease(h *Handle) {
	d := &fsys.dirLeases
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.held[h.ID()]; ok {
		return
	}
	if d.held == nil {
		d.held = map[locks.HandleID]struct{}{}
	}
	d.held[h.ID()] = struct{}{}
	d.hint.add(1)
}

// ReleaseDirLease undoes HoldDirLease(h) (nothing if h is not held).
func (fsys *FileSystem) ReleaseDirLease(h *Handle) {
	d := &fsys.dirLeases
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.held[h.ID()]; !ok {
		return
	}
	delete(d.held, h.ID())
	d.hint.add(-1)
}

// breakParents records the directory lease breaks of an update's changes
// (removals are broken where the row goes: RemoveFile, removeTree).
func (q *q) breakParents(chs []Change) error {
	if len(chs) == 0 || !q.fs.dirLeases.hint.anyRows() {
		return nil
	}
	var dirs []FileID
	add := func(d FileID) {
		if d == 0 {
			return
		}
		for _, x := range dirs {
			if x == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	for _, c := range chs {
		switch c.Kind {
		case ChangeCreate:
			add(c.Parent)
		case ChangeRename:
			add(c.Parent)
			add(c.NewParent)
		case ChangeAttr, ChangeData:
			if c.Filter != notifyNothing {
				add(c.Parent)
			}
		}
	}
	for _, d := range dirs {
		if err := q.ltx.BreakDirCaching(d); err != nil {
			return fmt.Errorf("directory %d: %w", d, err)
		}
	}
	return nil
}

// breakDir records the directory lease breaks of a change of dir's
// entries, when a directory lease may exist.
func (q *q) breakDir(dir FileID) error {
	if !q.fs.dirLeases.hint.anyRows() {
		return nil
	}
	return q.ltx.BreakDirCaching(dir)
}

// breakParentConn records the directory lease breaks of a removal from
// parent, for the Remove hook that has only the transaction's connection
// (and no FileSystem, so no hint: one indexed lookup per removal, as
// recordRemoval's anyWatch).
// The break deadline is the wall clock's: the hook has no FileSystem and
// its clock.
func breakParentConn(ctx context.Context, tx *locks.Conn, parent FileID) error {
	_, err := locks.BreakDirCachingConn(ctx, tx, parent, time.Now())
	return err
}
