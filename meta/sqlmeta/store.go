package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Store is the database of a service's store (blobsvc/sqlstore,
// msgqueue/sqlstore, tablesvc/sqlstore): a single writer connection, so
// writes queue in the process instead of meeting SQLITE_BUSY, and a pool
// of read-only connections beside it, both opened with the engine's
// pragmas (dsn). The stores run their statements on these pools
// themselves; their errors go through Classify.
type Store struct {
	Writer *sql.DB // one connection: write transactions are serialised here
	Reader *sql.DB // read-only (query_only) connections
}

// StoreOptions tune OpenStore.
type StoreOptions struct {
	BusyTimeout time.Duration // how long a connection waits for a lock held by another process
	MaxReaders  int           // read-only connections at most
}

// OpenStore opens (creating if needed) the database at path and brings
// its one part to this build's version (Ensure, in one write transaction
// on the writer), recorded as the file's user_version. Errors name the
// path; a version this build cannot open is a *meta.SchemaError.
//
// A store's DDL is all CREATE … IF NOT EXISTS and runs at every open, as
// it did before stores were versioned: a table or index added to it needs
// no migration (a database of the same version gets it at its next open);
// a column added or changed does.
func OpenStore(ctx context.Context, path string, part Part, o StoreOptions) (*Store, error) {
	busy := o.BusyTimeout.Milliseconds()
	w, err := sql.Open("sqlite", dsn(path, busy))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := ensureOn(ctx, w, path, part); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, busy, "query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(o.MaxReaders)
	r.SetMaxIdleConns(o.MaxReaders)
	r.SetConnMaxIdleTime(0)
	return &Store{Writer: w, Reader: r}, nil
}

// ensureOn runs Ensure for part, then part.DDL (see OpenStore), in one
// BEGIN IMMEDIATE transaction on a connection of db.
func ensureOn(ctx context.Context, db *sql.DB, path string, part Part) error {
	c, err := newConn(ctx, db)
	if err != nil {
		return fmt.Errorf("schema of %s: %w", path, Classify(err))
	}
	if _, err := c.ExecContext(ctx, sqlBeginWrite); err != nil {
		c.close(true)
		return fmt.Errorf("schema of %s: begin: %w", path, err)
	}
	err = Ensure(ctx, c, path, part)
	if err == nil {
		if _, err = c.ExecContext(ctx, part.DDL); err != nil {
			err = fmt.Errorf("schema of %s: %w", path, err)
		}
	}
	if err != nil {
		_, rerr := c.ExecContext(context.WithoutCancel(ctx), sqlRollback)
		c.close(rerr != nil && !noTransaction(rerr))
		return err
	}
	if _, err := c.ExecContext(ctx, sqlCommit); err != nil {
		c.close(true)
		return fmt.Errorf("schema of %s: commit: %w", path, err)
	}
	c.close(false)
	return nil
}

// Close closes both sides.
func (s *Store) Close() error { return errors.Join(s.Reader.Close(), s.Writer.Close()) }
