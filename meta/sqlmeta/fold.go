package sqlmeta

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// DefaultFoldDelay is how long a folded write transaction stays open for
// the next folded change when Options.FoldDelay is 0.
const DefaultFoldDelay = time.Millisecond

// Statements of a fold: each folded fn runs inside a savepoint of the open
// transaction, so a failing one undoes only itself.
const (
	sqlSavepoint  = `SAVEPOINT fold`
	sqlRelease    = `RELEASE fold`
	sqlRollbackTo = `ROLLBACK TO fold`
)

// fold is the write transaction UpdateFolded keeps open on the writer
// connection, under wmu.
type fold struct {
	open  bool
	gen   uint64      // counts folds; the deadline of an earlier one finds it moved on
	timer *time.Timer // commits the fold at its deadline
	// lost is set when a fold's changes were undone after being
	// acknowledged (its COMMIT, or a rollback to a savepoint, failed):
	// this process's state beside the database followed them, so the DB
	// refuses every transaction afterwards, as a file system that lost its
	// journal goes read-only.
	lost error
}

// UpdateFolded runs fn inside the write transaction this process keeps
// open for folded changes — opening one (BEGIN IMMEDIATE, busy retried as
// in Update) when none is — and returns once fn's changes are part of it,
// before they are committed. The transaction commits at the first of:
// FoldDelay after it opened (DefaultFoldDelay, 1 ms); the next Update of
// this process (whose fn runs in it, in a savepoint, and commits it) or
// View (which commits it first); CommitFolded; Close. A Peek or
// PeekStatement runs inside it instead, on the same connection, and sees
// its changes.
//
// fn runs once, inside a savepoint taken before it: an error of fn rolls
// back to the savepoint, undoing fn's changes and no other fn's, and is
// returned (classified). OnCommit functions (and Hooks.Committed) run when
// fn's savepoint is released into the fold, OnRollback ones when it is
// rolled back: state kept beside the database follows the fold, which the
// next fn must see. A fold whose COMMIT fails after that has lost changes
// that were acknowledged and that such state already follows: the DB then
// refuses every further transaction (meta.ErrUnavailable) and logs it.
//
// What a crash may lose: the changes folded since the last commit, at most
// FoldDelay of them. Use it only for changes whose caller accepts that (the
// mount's namespace metadata, as a local file system's un-synced journal);
// never for a change acknowledged to a REST or SMB client, or an fsync —
// those use Update, or CommitFolded before answering.
func (d *DB) UpdateFolded(ctx context.Context, fn func(tx *Tx) error) error {
	return d.Exclusive(func(w *Writer) error { return w.UpdateFolded(ctx, fn) })
}

// UpdateFolded is DB.UpdateFolded under the writer mutex already held.
func (w *Writer) UpdateFolded(ctx context.Context, fn func(tx *Tx) error) error {
	d := (*DB)(w)
	if err := d.usable(); err != nil {
		return err
	}
	if !d.fold.open {
		if err := d.openFold(ctx); err != nil {
			return err
		}
	}
	c := d.writer
	sctx := context.WithoutCancel(ctx)
	if _, err := c.ExecContext(sctx, sqlSavepoint); err != nil {
		return d.loseFold(fmt.Errorf("%s: %s: savepoint: %w", d.name, d.path, err))
	}
	tx := &Tx{conn: c, ctx: ctx, sctx: sctx, write: true}
	ferr := fn(tx)
	if ferr == nil {
		if _, err := c.ExecContext(sctx, sqlRelease); err != nil {
			ferr = fmt.Errorf("%s: %s: release savepoint: %w", d.name, d.path, err)
		}
	}
	if ferr != nil {
		// ROLLBACK TO keeps the savepoint; RELEASE ends it. If either
		// fails (SQLite rolled the whole transaction back, on an I/O
		// error say), earlier folded changes are gone with it.
		_, rerr := c.ExecContext(sctx, sqlRollbackTo)
		if rerr == nil {
			_, rerr = c.ExecContext(sctx, sqlRelease)
		}
		if tx.hooks != nil {
			tx.hooks.RolledBack()
		}
		for _, f := range tx.onRollback {
			f()
		}
		if rerr != nil {
			return d.loseFold(fmt.Errorf("%s: %s: rollback to savepoint: %w (after %w)", d.name, d.path, rerr, ferr))
		}
		return Classify(ferr)
	}
	if tx.hooks != nil {
		tx.hooks.Committed()
	}
	for _, f := range tx.onCommit {
		f()
	}
	if tx.urgent {
		return d.commitFold()
	}
	return nil
}

// updateInFold is Update while a fold is open (under wmu): fn runs in the
// fold, in a savepoint, and the fold commits with fn's changes before
// Update returns — one COMMIT where committing the fold and then running
// fn in a transaction of its own took two, with the same outcome: fn
// decides after every folded change, and its changes are committed when
// Update returns. A failing fn is rolled back to its savepoint; the fold
// still commits.
func (d *DB) updateInFold(ctx context.Context, fn func(tx *Tx) error) error {
	c := d.writer
	sctx := context.WithoutCancel(ctx)
	if _, err := c.ExecContext(sctx, sqlSavepoint); err != nil {
		return d.loseFold(fmt.Errorf("%s: %s: savepoint: %w", d.name, d.path, err))
	}
	tx := &Tx{conn: c, ctx: ctx, sctx: sctx, write: true}
	ferr := fn(tx)
	if ferr == nil {
		if _, err := c.ExecContext(sctx, sqlRelease); err != nil {
			ferr = fmt.Errorf("%s: %s: release savepoint: %w", d.name, d.path, err)
		}
	}
	rolledBack := func() {
		if tx.hooks != nil {
			tx.hooks.RolledBack()
		}
		for _, f := range tx.onRollback {
			f()
		}
	}
	if ferr != nil {
		_, rerr := c.ExecContext(sctx, sqlRollbackTo)
		if rerr == nil {
			_, rerr = c.ExecContext(sctx, sqlRelease)
		}
		rolledBack()
		if rerr != nil {
			return d.loseFold(fmt.Errorf("%s: %s: rollback to savepoint: %w (after %w)", d.name, d.path, rerr, ferr))
		}
		if err := d.commitFold(); err != nil {
			return err
		}
		return Classify(ferr)
	}
	if err := d.commitFold(); err != nil {
		rolledBack()
		return err
	}
	if tx.hooks != nil {
		tx.hooks.Committed()
	}
	for _, f := range tx.onCommit {
		f()
	}
	return nil
}

// CommitFolded commits the folded transaction, if one is open, and
// returns once it has (an fsync through the mount; a caller about to
// acknowledge something that depends on folded changes to another
// process).
func (d *DB) CommitFolded() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.usable(); err != nil {
		return err
	}
	return d.commitFold()
}

// usable is the error every transaction fails with once the DB is closed
// or lost a fold.
func (d *DB) usable() error {
	if d.closed.Load() {
		return fmt.Errorf("%s: %s: %w", d.name, d.path, meta.ErrClosed)
	}
	if d.fold.lost != nil {
		return d.fold.lost
	}
	return nil
}

// openFold begins the folded transaction (under wmu), retrying a busy
// database as Update does, and arms its deadline.
func (d *DB) openFold(ctx context.Context) error {
	backoff := time.Millisecond
	for {
		_, err := d.begin(ctx, txWrite, false)
		if err == nil {
			break
		}
		if !IsBusy(err) {
			return fmt.Errorf("%s: %s: begin: %w", d.name, d.path, Classify(err))
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s: busy: %w (%w)", d.name, d.path, ctx.Err(), Classify(err))
		case <-time.After(wait):
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
	d.fold.open = true
	d.foldOpen.Store(true)
	d.fold.gen++
	gen := d.fold.gen
	d.fold.timer = time.AfterFunc(d.foldDelay, func() { d.foldDeadline(gen) })
	return nil
}

// foldDeadline commits fold gen if it is still the open one.
func (d *DB) foldDeadline(gen uint64) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if d.fold.open && d.fold.gen == gen && !d.closed.Load() {
		if err := d.commitFold(); err != nil {
			d.log.Error("folded transaction not committed", "err", err)
		}
	}
}

// commitFold commits the open fold, if any (under wmu).
func (d *DB) commitFold() error {
	if !d.fold.open {
		return nil
	}
	d.fold.open = false
	d.fold.timer.Stop()
	d.fold.timer = nil
	// foldOpen stays set until COMMIT has returned: a read of this
	// process that sees it clear must see the fold committed (a reader
	// that began during the COMMIT would miss it).
	defer d.foldOpen.Store(false)
	if _, err := d.writer.ExecContext(context.Background(), sqlCommit); err != nil {
		return d.loseFold(fmt.Errorf("%s: %s: commit folded changes: %w", d.name, d.path, err))
	}
	d.ckpt.committed()
	return nil
}

// loseFold rolls back what is left of the open fold and makes the DB
// refuse every further transaction (see fold.lost); it returns that error.
func (d *DB) loseFold(cause error) error {
	if d.fold.timer != nil {
		d.fold.timer.Stop()
		d.fold.timer = nil
	}
	d.fold.open = false
	d.foldOpen.Store(false)
	if d.writer != nil {
		_, err := d.writer.ExecContext(context.Background(), sqlRollback)
		d.end(d.writer, txWrite, err != nil && !noTransaction(err))
	}
	d.fold.lost = fmt.Errorf("%w: folded changes lost: %w", meta.ErrUnavailable, cause)
	d.log.Error("folded write transaction lost; refusing further transactions", "path", d.path, "err", cause)
	return d.fold.lost
}
