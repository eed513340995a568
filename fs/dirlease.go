package fs

// Directory leases (locks/dirlease.go): a change of a directory's entries
// — a child created, removed, renamed in or out, its attributes, size or
// times changed — breaks the directory's Read-caching leases, recorded
// here in the transaction that makes the change, beside the
// CHANGE_NOTIFY notices of notify.go, whichever protocol asked. The
// changing open's parent lease key, if any, comes in the transaction's
// context (locks.WithParentLease, set by the SMB server).

import (
	"context"
	"fmt"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// breakParents records the directory lease breaks of an update's changes
// (removals are broken where the row goes: RemoveFile, removeTree).
func (q *q) breakParents(chs []Change) error {
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

// breakParentConn records the directory lease breaks of a removal from
// parent, for the Remove hook that has only the transaction's connection.
// The break deadline is the wall clock's: the hook has no FileSystem and
// its clock.
func breakParentConn(ctx context.Context, tx *locks.Conn, parent FileID) error {
	_, err := locks.BreakDirCachingConn(ctx, tx, parent, time.Now())
	return err
}
