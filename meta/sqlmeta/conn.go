package sqlmeta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"

	"github.com/blobshare/blobshare/meta"
)

// Conn is the SQLite connection one transaction runs on. Every statement
// is prepared once per connection and kept: parsing costs SQLite more than
// most of the statements themselves.
//
// A DB runs transactions itself (BEGIN / COMMIT on its own connections)
// rather than through database/sql's Tx: that, and statements bound to
// their connection once instead of at every transaction, halves the cost
// of a short transaction (locks' BenchmarkSQLiteFloor against
// BenchmarkSQLiteTx).
//
// A Conn is used by one goroutine at a time: the one running the
// transaction.
type Conn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
}

// maxStmts bounds the statements cached per connection; queries beyond it
// run unprepared (nothing in blobshare comes near it, but SQL built at run
// time must not grow the cache without bound).
const maxStmts = 256

func newConn(ctx context.Context, db *sql.DB) (*Conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, stmts: map[string]*sql.Stmt{}}, nil
}

// stmt returns the prepared statement for query, or nil when the cache is
// full and query must run unprepared.
func (c *Conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if len(c.stmts) >= maxStmts {
		return nil, nil
	}
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// ExecContext runs a statement that returns no rows.
func (c *Conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, Classify(err)
	}
	if s == nil {
		res, err := c.c.ExecContext(ctx, query, args...)
		return res, Classify(err)
	}
	res, err := s.ExecContext(ctx, args...)
	return res, Classify(err)
}

// QueryContext runs a query; the caller closes the rows.
func (c *Conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, Classify(err)
	}
	if s == nil {
		rows, err := c.c.QueryContext(ctx, query, args...)
		return rows, Classify(err)
	}
	rows, err := s.QueryContext(ctx, args...)
	return rows, Classify(err)
}

// QueryRowContext runs a query expected to return at most one row.
func (c *Conn) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	s, err := c.stmt(ctx, query)
	if err != nil || s == nil {
		// Unprepared: a query that failed to prepare fails here again,
		// and the row carries that error to Scan.
		return &Row{c.c.QueryRowContext(ctx, query, args...)}
	}
	return &Row{s.QueryRowContext(ctx, args...)}
}

// Row is the result of QueryRowContext: database/sql's Row whose errors
// are classified (meta.ErrBusy, meta.ErrNoTable, ...). No row is sql.ErrNoRows, as
// with database/sql.
type Row struct{ r *sql.Row }

// Scan copies the row's columns into dest (see sql.Row.Scan).
func (r *Row) Scan(dest ...any) error { return Classify(r.r.Scan(dest...)) }

// Err is the query's error, if any, without scanning.
func (r *Row) Err() error { return Classify(r.r.Err()) }

// close closes the statements and gives the connection back to
// database/sql; discard makes database/sql close it instead (its state,
// an open transaction say, is unknown).
func (c *Conn) close(discard bool) {
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
	if discard {
		_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
	}
	c.c.Close()
}

// Statements that run every transaction (prepared like the rest).
const (
	sqlBeginWrite = `BEGIN IMMEDIATE`
	sqlBeginRead  = `BEGIN`
	sqlCommit     = `COMMIT`
	sqlRollback   = `ROLLBACK`
)

// readers is a DB's pool of connections for read transactions. The
// write connection is separate (DB.writer, under wmu).
type readers struct {
	db   *sql.DB
	idle chan *Conn

	mu     sync.Mutex
	open   int
	max    int
	closed bool
}

func newReaders(db *sql.DB, max int) *readers {
	return &readers{db: db, idle: make(chan *Conn, max), max: max}
}

// get returns an idle connection, opens one while fewer than max are
// open, or waits for one to come back.
func (r *readers) get(ctx context.Context) (*Conn, error) {
	select {
	case c := <-r.idle:
		return c, nil
	default:
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("readers: %w", meta.ErrClosed)
	}
	if r.open < r.max {
		r.open++
		r.mu.Unlock()
		c, err := newConn(ctx, r.db)
		if err != nil {
			r.mu.Lock()
			r.open--
			r.mu.Unlock()
			return nil, err
		}
		return c, nil
	}
	r.mu.Unlock()
	select {
	case c := <-r.idle:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put gives c back; discard closes it for good instead.
func (r *readers) put(c *Conn, discard bool) {
	r.mu.Lock()
	if discard || r.closed {
		r.open--
		r.mu.Unlock()
		c.close(discard)
		return
	}
	r.idle <- c // never blocks: at most max connections exist
	r.mu.Unlock()
}

// close closes the idle connections; those in use close when put back.
func (r *readers) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	for {
		select {
		case c := <-r.idle:
			r.mu.Lock()
			r.open--
			r.mu.Unlock()
			c.close(false)
		default:
			return
		}
	}
}
