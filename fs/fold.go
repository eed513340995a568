package fs

import (
	"context"

	"github.com/blobshare/blobshare/locks"
)

// The mount's namespace changes may be folded (Config.FoldMount): each
// FUSE request's decision runs in the lock table's folded write
// transaction (locks.Table.UpdateFolded) and is answered before that
// transaction commits, within a millisecond, with the next requests'
// changes. What that keeps and what it gives up:
//
//   - Every decision is still made inside the one transaction that holds
//     the database's write lock, after every change of this process and
//     every committed change of the others: a folded change, a REST or
//     SMB decision of this process (its Update commits the fold first) and
//     another process's write (it waits on SQLite's busy handler for the
//     fold's commit) all decide against the current state.
//   - Reads of this process see folded changes at once: a Peek runs inside
//     the fold, a View commits it first.
//   - Another process's read sees a folded change up to the fold's delay
//     after the mount answered. A change that makes another process's
//     read-only check refuse something — a handle that denies sharing or
//     deletes on close, a file left delete-pending — commits before the
//     mount answers (locks.Tx.Urgent); a create, a rename, a removal, a
//     share-all open or a close only shows late, as a listing would.
//   - A crash may lose the folded changes not yet committed (at most the
//     last millisecond of them), as a local file system loses its
//     un-synced journal: a prefix of what the mount acknowledged survives.
//     Nothing acknowledged to a REST or SMB client or by an fsync is ever
//     folded: those commit (and REST writes sync the log) before they
//     answer, taking the fold with them. Flushes of data stay unfolded.

// updateMount is update for a namespace change of the mount: folded when
// Config.FoldMount is set.
func (fsys *FileSystem) updateMount(ctx context.Context, fn func(tx *locks.Tx, q *q) ([]Change, error)) error {
	if !fsys.foldMount {
		return fsys.update(ctx, fn)
	}
	return fsys.updateVia(ctx, fsys.table.UpdateFolded, fn)
}

// SetattrMount is Setattr for the mount: its change of times and
// attributes is folded (Config.FoldMount); a truncation, and the commit of
// a handle's staged writes it makes first, are not.
func (fsys *FileSystem) SetattrMount(ctx context.Context, id FileID, req SetattrRequest) (Attr, error) {
	return fsys.setattrVia(ctx, id, req, fsys.updateMount)
}

// CommitFolded commits the mount's folded namespace changes, if any, and
// returns once they are (fsync and fsyncdir through the mount).
func (fsys *FileSystem) CommitFolded() error {
	if !fsys.foldMount {
		return nil
	}
	return fsys.table.CommitFolded()
}

// urgentOpen marks tx urgent when the handle it opened refuses something
// to another process's read-only check (see above).
func urgentOpen(tx *locks.Tx, o locks.OpenRequest) {
	if o.Share != locks.ShareAll || o.DeleteOnClose {
		tx.Urgent()
	}
}
