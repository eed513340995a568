package locks

import (
	"context"
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// UpdateFolded is Update folded into the engine's open write transaction
// (sqlmeta.DB.UpdateFolded): fn decides inside the one transaction that
// holds the database's write lock, after every change of this process and
// every committed change of the others, exactly as in Update; UpdateFolded
// returns once fn's changes are in that transaction, which commits within
// the engine's FoldDelay (1 ms), at this process's next Update or View,
// at CommitFolded, or before returning when fn calls Tx.Urgent. Until then
// other processes do not see them (their writes wait for the commit), and
// a crash of this process loses them.
//
// For the mount's namespace changes only (package fs decides which):
// never for a decision acknowledged to a REST or SMB client, which uses
// Update. fn runs once; its error undoes only its own changes.
func (t *Table) UpdateFolded(ctx context.Context, fn func(tx *Tx) error) error {
	w := t.db.LockWriter()
	defer w.Unlock()
	if t.closed.Load() {
		return fmt.Errorf("locks: %s: table closed: %w", t.path, ErrHandleClosed)
	}
	var last *Tx
	err := w.UpdateFolded(ctx, func(m *sqlmeta.Tx) error {
		tx := t.newTx(m)
		last = tx
		tx.nextID, tx.idLimit = t.nextID, t.idLimit
		m.SetHooks((*txHooks)(tx))
		if err := t.fence(tx); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		if len(tx.reaped) > 0 {
			// Owner files go after the commit that removed their rows.
			m.Urgent()
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrSessionLost) && !t.closed.Load() {
			if rerr := t.reregister(ctx, w); rerr != nil {
				t.log.Error("registering as a new owner failed; trying again at the next decision", "err", rerr)
			}
		}
		return closedErr(err)
	}
	for _, o := range last.reaped {
		if rerr := removeOwnerFile(t.ownersDir, o); rerr != nil {
			t.log.Warn("reaped owner file not removed", "dead_owner", string(o), "err", rerr)
		}
	}
	return nil
}

// Urgent makes UpdateFolded commit before it returns (sqlmeta.Tx.Urgent):
// fn made a change another process's read-only check must see once the
// caller answers.
func (tx *Tx) Urgent() { tx.m.Urgent() }

// CommitFolded commits this process's folded changes, if any, and returns
// once they are committed (an fsync through the mount).
func (t *Table) CommitFolded() error { return t.db.CommitFolded() }
