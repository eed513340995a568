package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// DB is a store's database: one writer connection and a read-only pool.
type DB struct {
	Writer *sql.DB // one connection: write transactions are serialised here
	Reader *sql.DB // read-only (query_only) connections
}

// Options tune Open.
type Options struct {
	BusyTimeout time.Duration // how long a connection waits for a lock held by another process
	MaxReaders  int           // read-only connections at most
}

// Open opens (creating if needed) the database at path and applies
// schema on the writer. Errors name the path.
func Open(ctx context.Context, path, schema string, o Options) (*DB, error) {
	dsn := func(readOnly bool) string {
		d := "file:" + (&url.URL{Path: path}).EscapedPath() +
			"?_pragma=busy_timeout(" + fmt.Sprint(o.BusyTimeout.Milliseconds()) + ")" +
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		if readOnly {
			d += "&_pragma=query_only(1)"
		}
		return d
	}
	w, err := sql.Open("sqlite", dsn(false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("schema of %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(o.MaxReaders)
	r.SetMaxIdleConns(o.MaxReaders)
	r.SetConnMaxIdleTime(0)
	return &DB{Writer: w, Reader: r}, nil
}

// Close closes both sides.
func (db *DB) Close() error { return errors.Join(db.Reader.Close(), db.Writer.Close()) }
