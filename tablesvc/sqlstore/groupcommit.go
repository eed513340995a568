package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"

	"github.com/blobshare/blobshare/tablesvc"
)

// Group commit of entity writes.
//
// Every entity write needs SQLite's write lock, so writes run one after
// another whatever their tables; a transaction of its own per write paid
// BEGIN, the table check and COMMIT (the WAL append and the wal-index
// update) each time, about half of a write's cost. Instead a write queues,
// and whoever takes commitMu runs every write queued so far in one
// transaction: each inside a savepoint, so that one write's failure (a
// stale ETag, an existing entity, a batch operation refused half way)
// undoes that write alone and is answered with its own error, while the
// others commit together. A write is answered only after the COMMIT that
// holds it, so an acknowledged write is committed (and seen by the next
// read) exactly as before; what a group shares is the commit's cost.
//
// Each write still decides against the state every earlier write of the
// group left (they run in order on one connection inside one
// transaction), and the write lock is held from the group's BEGIN
// IMMEDIATE to its COMMIT, across processes too.

// Point reads (Get) queue here too, and the leader runs them on the
// writer's connection first, inside the group's transaction before any of
// its writes (or, in a group of reads only, each in its own autocommit
// statement): they see every write answered before they were queued
// (those are committed) and nothing uncommitted. The writer's connection
// keeps its page cache across its own commits, where a reader connection
// finds the database changed at every read under a steady write load and
// reads its pages again, and inside the transaction a read takes no WAL
// read lock of its own (fcntl calls): under BenchmarkTableCycles' load a
// point read cost 35 µs of CPU on a reader connection, 20 here.

// maxGroup bounds the writes one transaction takes, so that a burst does
// not hold the write lock (and the leader's own answer) without end.
const maxGroup = 64

// The savepoint every write of a group runs in.
const (
	savepointSQL = `SAVEPOINT w`
	releaseSQL   = `RELEASE w`
	undoSQL      = `ROLLBACK TO w`
)

// groupWrite is a Write waiting for a group. The group that takes it sets
// err and then closes ready (answer).
type groupWrite struct {
	ctx   context.Context
	table string
	fn    func(tablesvc.Tx) error
	// single: fn makes at most one change, as its last step
	// (tablesvc.SingleWriter), so it needs no savepoint.
	single bool
	// read, if set, makes this a point read instead of a write.
	read *pointRead

	err   error
	ready chan struct{}
}

// pointRead is a Get queued for the group's leader; e is its answer.
type pointRead struct {
	pk, rk string
	e      tablesvc.Entity
}

func (w *groupWrite) answered() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

func (w *groupWrite) answer(err error) {
	w.err = err
	close(w.ready)
}

// Write implements tablesvc.Store: fn runs inside one immediate
// transaction (sqlmeta.OpenStore opens it with BEGIN IMMEDIATE), which holds
// SQLite's write lock from its first statement to its commit — across
// processes sharing the file too — so whatever fn read through Tx.Get is
// still true when its writes commit. The transaction is shared with the
// other writes queued at the same time (see the group commit above).
func (s *Store) Write(ctx context.Context, table string, fn func(tablesvc.Tx) error) error {
	return s.submit(&groupWrite{ctx: ctx, table: table, fn: fn, ready: make(chan struct{})})
}

// WriteSingle implements tablesvc.SingleWriter: Write for an fn that makes
// at most one change, as its last step. Inside a group it runs without a
// savepoint: when fn fails before its change there is nothing to undo,
// and when the change itself fails the group is abandoned (SQLite may
// have rolled the whole transaction back), as a failed undo abandons it.
func (s *Store) WriteSingle(ctx context.Context, table string, fn func(tablesvc.Tx) error) error {
	return s.submit(&groupWrite{ctx: ctx, table: table, fn: fn, single: true, ready: make(chan struct{})})
}

// submit queues w and waits for its answer, leading groups while it waits
// if no one else does.
func (s *Store) submit(w *groupWrite) error {
	s.queueMu.Lock()
	s.queue = append(s.queue, w)
	if s.queuedHook != nil {
		s.queuedHook(len(s.queue))
	}
	s.queueMu.Unlock()

	select {
	case <-w.ready: // another writer's group took it
		return w.err
	case s.lead <- struct{}{}:
	}
	// The leader commits groups until its own write is answered; writes
	// queued after that wait for the next leader.
	for !w.answered() {
		// Let the requests this core is already reading join the group
		// first: on two cores under 16 clients a group held 1.3 writes
		// without this and 5 with it, and each group's BEGIN and COMMIT
		// (the WAL append) cost about 40 µs of CPU.
		runtime.Gosched()
		s.queueMu.Lock()
		n := min(len(s.queue), maxGroup)
		group := s.queue[:n:n]
		s.queue = s.queue[n:]
		s.queueMu.Unlock()
		s.commitGroup(group)
	}
	<-s.lead
	return w.err
}

// commitGroup runs group in one transaction and answers each write. The
// transaction is not bound to any one write's context (a caller that
// gives up must not undo the others); each write's own context is checked
// before its turn; its statements run without it (noCancel).
func (s *Store) commitGroup(group []*groupWrite) {
	// Each write's own outcome (a refusal) is kept until the group ends:
	// only then is it known that nothing of the group is half applied.
	if s.groupHook != nil {
		s.groupHook(len(group))
	}
	var reads, writes []*groupWrite
	for _, w := range group {
		if w.read != nil {
			reads = append(reads, w)
		} else {
			writes = append(writes, w)
		}
	}
	if len(writes) == 0 {
		for _, r := range reads {
			r.answer(s.pointRead(nil, r))
		}
		return
	}
	group = writes
	own := make([]error, len(group))
	answer := func(err error) {
		for i, w := range group {
			if own[i] != nil {
				w.answer(own[i])
			} else {
				w.answer(err)
			}
		}
	}
	sqlTx, err := s.writer.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range reads {
			r.answer(s.pointRead(nil, r))
		}
		answer(fmt.Errorf("sqlstore: begin write on %s: %w", s.path, err))
		return
	}
	defer sqlTx.Rollback() //nolint:errcheck // after Commit it is a no-op
	tx := &txStmts{tx: sqlTx}
	// The reads first: nothing of this group is written yet, so they see
	// the committed state (the write lock held since BEGIN IMMEDIATE makes
	// it the newest), and are answered at once.
	for _, r := range reads {
		r.answer(s.pointRead(tx, r))
	}
	exists := map[string]bool{} // table key → exists, read once per group
	committed := 0
	for i, w := range group {
		if err := s.runOne(tx, w, exists, len(group) > 1); err != nil {
			var fatal *groupAbort
			if errors.As(err, &fatal) {
				clear(own)
				answer(fatal.err)
				return
			}
			own[i] = err
			continue
		}
		committed++
	}
	if committed == 0 {
		answer(nil) // every write has its own error; nothing to commit
		return
	}
	if err := sqlTx.Commit(); err != nil {
		answer(fmt.Errorf("sqlstore: commit write on %s: %w", s.path, err))
		return
	}
	answer(nil)
}

// groupAbort is an error after which the group's transaction cannot go
// on (a savepoint that cannot be undone): every write not yet answered
// fails with it.
type groupAbort struct{ err error }

func (e *groupAbort) Error() string { return e.err.Error() }

// runOne runs one write of a group inside its savepoint (when the group
// has more than one write; a lone write's failure rolls back the whole
// transaction, which holds nothing else). A nil return leaves the write
// pending its group's commit.
func (s *Store) runOne(tx *txStmts, w *groupWrite, exists map[string]bool, savepoint bool) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	key := lower(w.table)
	ok, known := exists[key]
	if !known {
		var one int
		err := tx.stmt(s.existsStmt).QueryRowContext(noCancel, key).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s.wrap("write", w.table, err)
		}
		ok = err == nil
		exists[key] = ok
	}
	if !ok {
		return notFound(w.table)
	}
	if savepoint && w.single {
		// No savepoint: a failure before the one change leaves nothing to
		// undo; a failed change abandons the group.
		t := &storeTx{s: s, tx: tx, table: w.table, tbl: key}
		err := w.fn(t)
		if err != nil && t.changed {
			return &groupAbort{err}
		}
		return err
	}
	if savepoint {
		if _, err := tx.stmt(s.savepointStmt).ExecContext(noCancel); err != nil {
			return s.wrap("savepoint for a write on", w.table, err)
		}
	}
	err := w.fn(&storeTx{s: s, tx: tx, table: w.table, tbl: key})
	if !savepoint {
		return err
	}
	if err != nil {
		// Undo this write alone; the savepoint stays open until released.
		// Neither statement takes the write's context: a cancelled caller
		// must still have its half-done write undone.
		bg := context.Background()
		if _, uerr := tx.stmt(s.undoStmt).ExecContext(bg); uerr != nil {
			return &groupAbort{s.wrap("undo a failed write on", w.table, uerr)}
		}
		if _, rerr := tx.stmt(s.releaseStmt).ExecContext(bg); rerr != nil {
			return &groupAbort{s.wrap("release the savepoint of", w.table, rerr)}
		}
		return err
	}
	if _, err := tx.stmt(s.releaseStmt).ExecContext(noCancel); err != nil {
		return &groupAbort{s.wrap("release the savepoint of", w.table, err)}
	}
	return nil
}

// txStmts are the writer's prepared statements bound to one group's
// transaction, each bound once per group: sql.Tx.StmtContext allocates
// and registers a new statement at every call.
type txStmts struct {
	tx    *sql.Tx
	bound map[*sql.Stmt]*sql.Stmt
}

func (t *txStmts) stmt(st *sql.Stmt) *sql.Stmt {
	if b, ok := t.bound[st]; ok {
		return b
	}
	if t.bound == nil {
		t.bound = map[*sql.Stmt]*sql.Stmt{}
	}
	b := t.tx.StmtContext(noCancel, st)
	t.bound[st] = b
	return b
}
