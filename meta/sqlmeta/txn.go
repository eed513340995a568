package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/blobshare/blobshare/meta"
)

// Tx is one transaction of a DB, on the connection it holds. Statements run
// through Exec, Query and QueryRow (or on Conn) and come classified.
//
// A Tx is used by one goroutine, only inside the fn it was given to.
type Tx struct {
	conn  *Conn
	ctx   context.Context // the caller's
	sctx  context.Context // for the statements: ctx without cancellation
	write bool

	hooks      Hooks
	onCommit   []func()
	onRollback []func()
	urgent     bool // UpdateFolded: commit before returning (Urgent)
}

// Urgent asks UpdateFolded to commit the fold, this fn's changes with it,
// before it returns: fn made a change that another process's read must
// see as soon as the caller answers (a handle that denies sharing, say).
// In Update it changes nothing: Update always commits before returning.
func (tx *Tx) Urgent() { tx.urgent = true }

// Conn is the connection the transaction runs on (its statements are part
// of the transaction).
func (tx *Tx) Conn() *Conn { return tx.conn }

// Context is the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.ctx }

// StmtContext is the context statements run under: Context without its
// cancellation. Statements inside a transaction never wait for a lock (WAL
// readers don't; the writer already holds the write lock), and a
// cancellable context costs the driver a watcher goroutine per statement;
// waiting — BEGIN and the busy retries — watches Context.
func (tx *Tx) StmtContext() context.Context { return tx.sctx }

// Write reports a write transaction (Update).
func (tx *Tx) Write() bool { return tx.write }

// Exec runs a statement that returns no rows.
func (tx *Tx) Exec(query string, args ...any) (sql.Result, error) {
	return tx.conn.ExecContext(tx.sctx, query, args...)
}

// Query runs a query; the caller closes the rows.
func (tx *Tx) Query(query string, args ...any) (*sql.Rows, error) {
	return tx.conn.QueryContext(tx.sctx, query, args...)
}

// QueryRow runs a query expected to return at most one row.
func (tx *Tx) QueryRow(query string, args ...any) *Row {
	return tx.conn.QueryRowContext(tx.sctx, query, args...)
}

// OnCommit registers f to run once this write transaction has committed,
// in registration order, before the DB's next write transaction begins
// (under the same writer lock), and never if it rolls back. In a read
// transaction f never runs.
func (tx *Tx) OnCommit(f func()) {
	if tx.write {
		tx.onCommit = append(tx.onCommit, f)
	}
}

// OnRollback registers f to run if this run of the transaction does not
// commit (fn failed, or COMMIT did): state kept beside the database for
// what the transaction wrote must be forgotten. For a read transaction, f
// runs when fn fails.
func (tx *Tx) OnRollback(f func()) { tx.onRollback = append(tx.onRollback, f) }

// Hooks is OnCommit and OnRollback for a caller that keeps state of its
// own per transaction (the lock table's transaction): Committed runs
// before the OnCommit functions, RolledBack before the OnRollback ones.
// One pair per transaction, set without allocating a function each.
type Hooks interface {
	Committed()
	RolledBack()
}

// SetHooks sets the transaction's Hooks.
func (tx *Tx) SetHooks(h Hooks) { tx.hooks = h }

// Writer is this process's hold on the DB's writer (LockWriter,
// Exclusive): the write transactions run through it are serialized with
// every other write and Peek of the process.
type Writer DB

// LockWriter takes the DB's writer mutex, for a caller that runs several
// write transactions, or decides between them, with no other write of the
// process in between (locks: a decision, and the registration of a new
// owner session when it found its session lost). Unlock gives it back. It
// is not reentrant.
func (d *DB) LockWriter() *Writer {
	d.wmu.Lock()
	return (*Writer)(d)
}

// Unlock gives the writer mutex back.
func (w *Writer) Unlock() { w.wmu.Unlock() }

// Exclusive runs fn holding the DB's writer mutex (LockWriter).
func (d *DB) Exclusive(fn func(w *Writer) error) error {
	w := d.LockWriter()
	defer w.Unlock()
	return fn(w)
}

// Update runs fn in one write transaction: BEGIN IMMEDIATE on the writer
// connection, retried with jittered backoff (1 ms doubling to 200 ms)
// while the database is busy, until ctx ends. fn may therefore run more
// than once and must have no side effects outside the transaction but
// through OnCommit and OnRollback. An error of fn rolls back and is
// returned (classified). Update must not be called from inside fn (the
// writer mutex is not reentrant).
func (d *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return d.Exclusive(func(w *Writer) error { return w.Update(ctx, fn) })
}

// Update is DB.Update under the writer mutex already held.
func (w *Writer) Update(ctx context.Context, fn func(tx *Tx) error) error {
	d := (*DB)(w)
	if err := d.usable(); err != nil {
		return err
	}
	// Folded changes commit with fn's, or first when fn fails: fn decides
	// against every change this process acknowledged (fold.go).
	if d.fold.open {
		return d.updateInFold(ctx, fn)
	}
	backoff := time.Millisecond
	for {
		err := d.try(ctx, txWrite, false, fn)
		if err == nil || !IsBusy(err) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("%s: %s: busy: %w (%w)", d.name, d.path, cerr, err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		d.log.Debug("database busy, retrying", "wait", wait, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s: busy: %w (%w)", d.name, d.path, ctx.Err(), err)
		case <-time.After(wait):
		}
		backoff = min(backoff*2, 200*time.Millisecond)
	}
}

// View runs fn in a read transaction (a consistent snapshot) on a reader
// connection; it may run concurrently with everything. A busy answer is
// retried (at most 50 times, 1 ms apart), so fn may run more than once.
func (d *DB) View(ctx context.Context, fn func(tx *Tx) error) error {
	return d.read(ctx, false, false, fn)
}

// Peek is View for short transactions — a few point reads, as a lookup or
// a check before an I/O makes. When no write transaction of this process
// is running it runs on the writer connection, whose page cache is warm:
// SQLite drops a connection's whole cache whenever another connection has
// committed, so a reader after a write re-reads every page it touches,
// while the writer keeps the pages of its own writes. A write that comes
// meanwhile waits for the Peek, so fn must stay short (no listings, no
// waiting); when a write is running Peek takes a reader like View.
func (d *DB) Peek(ctx context.Context, fn func(tx *Tx) error) error {
	return d.read(ctx, true, false, fn)
}

// PeekStatement is Peek for fn that runs one read statement, such as a
// lookup by name: the statement runs alone, outside a transaction —
// SQLite gives a lone statement a snapshot of its own — which saves the
// BEGIN and ROLLBACK around it, a sixth of a one-query Peek's CPU. fn must
// run a single statement, and only a read: outside a transaction a write
// would commit, and a second statement would see a snapshot of its own.
func (d *DB) PeekStatement(ctx context.Context, fn func(tx *Tx) error) error {
	return d.read(ctx, true, true, fn)
}

// read runs fn in a read transaction; peek takes the idle writer's
// connection when it can (see Peek), lone runs fn's one statement without
// a transaction (see PeekStatement).
func (d *DB) read(ctx context.Context, peek, lone bool, fn func(tx *Tx) error) error {
	if err := d.usable(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		var err error
		if d.foldOpen.Load() {
			// Folded changes are uncommitted: a Peek reads them inside
			// the fold, on its connection (waiting for the writer); a
			// View, on a reader, after committing them.
			if done, err := d.readFolded(ctx, peek, fn); done {
				return err
			}
		}
		if peek && d.wmu.TryLock() {
			if d.fold.open {
				err = d.try(ctx, txPeek, true, fn)
			} else {
				err = d.try(ctx, txPeek, lone, fn)
			}
			d.wmu.Unlock()
		} else {
			err = d.try(ctx, txRead, lone, fn)
		}
		if err != nil && IsBusy(err) && ctx.Err() == nil && attempt < 50 {
			time.Sleep(time.Millisecond)
			continue
		}
		return err
	}
}

// readFolded is read while a fold may be open: a Peek runs fn inside the
// fold (done), a View commits the fold and goes on to a reader (not done).
func (d *DB) readFolded(ctx context.Context, peek bool, fn func(tx *Tx) error) (done bool, err error) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if err := d.usable(); err != nil {
		return true, err
	}
	if !d.fold.open {
		return false, nil
	}
	if peek {
		return true, d.try(ctx, txPeek, true, fn)
	}
	if err := d.commitFold(); err != nil {
		return true, err
	}
	return false, nil
}

// txKind is what a transaction may do and which connection it runs on.
type txKind int

const (
	txRead  txKind = iota // a reader connection
	txPeek                // read-only on the writer connection, under wmu
	txWrite               // the writer connection, under wmu
)

// try runs fn in one transaction. lone (reads only) runs fn's statement
// outside a transaction instead (see PeekStatement).
func (d *DB) try(ctx context.Context, kind txKind, lone bool, fn func(tx *Tx) error) error {
	write := kind == txWrite
	if kind != txRead && d.closed.Load() {
		return fmt.Errorf("%s: %s: %w", d.name, d.path, meta.ErrClosed)
	}
	c, err := d.begin(ctx, kind, lone)
	if err != nil {
		return fmt.Errorf("%s: %s: begin: %w", d.name, d.path, err)
	}
	tx := &Tx{conn: c, ctx: ctx, sctx: context.WithoutCancel(ctx), write: write}
	ferr := fn(tx)
	if ferr == nil && write {
		if _, err := c.ExecContext(tx.sctx, sqlCommit); err != nil {
			ferr = fmt.Errorf("%s: %s: commit: %w", d.name, d.path, err)
		}
	}
	discard := false
	if (ferr != nil || !write) && !lone {
		// A failed COMMIT may leave the transaction open: roll back
		// (SQLite answers "no transaction" when there is none left).
		if _, err := c.ExecContext(tx.sctx, sqlRollback); err != nil && !noTransaction(err) {
			discard = true
		}
	}
	d.end(c, kind, discard)
	if ferr != nil {
		if tx.hooks != nil {
			tx.hooks.RolledBack()
		}
		for _, f := range tx.onRollback {
			f()
		}
		return Classify(ferr)
	}
	if !write {
		return nil
	}
	if tx.hooks != nil {
		tx.hooks.Committed()
	}
	for _, f := range tx.onCommit {
		f()
	}
	d.ckpt.committed()
	return nil
}

// begin takes the connection for a transaction — the writer (under wmu,
// for txWrite and txPeek) or a reader — and begins on it, unless lone.
func (d *DB) begin(ctx context.Context, kind txKind, lone bool) (*Conn, error) {
	var c *Conn
	var err error
	query := sqlBeginRead
	if kind == txWrite {
		query = sqlBeginWrite
	}
	if kind == txRead {
		if c, err = d.readers.get(ctx); err != nil {
			return nil, err
		}
	} else {
		if d.writer == nil {
			if d.writer, err = newConn(ctx, d.db); err != nil {
				return nil, err
			}
		}
		c = d.writer
	}
	if lone {
		return c, nil
	}
	if _, err := c.ExecContext(ctx, query); err != nil {
		// Busy: the connection is fine and is kept. Anything else (an
		// interrupted BEGIN included) leaves its state unknown.
		d.end(c, kind, !IsBusy(err))
		return nil, err
	}
	return c, nil
}

// end gives a transaction's connection back; discard closes it for good.
func (d *DB) end(c *Conn, kind txKind, discard bool) {
	if kind == txRead {
		d.readers.put(c, discard)
		return
	}
	if discard {
		c.close(true)
		d.writer = nil
	}
}
