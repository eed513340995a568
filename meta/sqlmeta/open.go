package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/blobshare/blobshare/meta"
)

// BusyTimeoutMS is SQLite's own wait for a lock another connection holds;
// Update retries with backoff beyond it until the context ends.
const BusyTimeoutMS = 5000

// DefaultMaxReaders is how many read transactions of one DB may run at once
// unless Options say otherwise.
const DefaultMaxReaders = 7

// uriPath escapes a file path for a SQLite "file:" URI, where '?' starts
// the parameters, '#' a fragment, and '%' an escape.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// dsn is the one way blobshare opens a SQLite file read-write: WAL,
// synchronous=NORMAL (durable against a process crash; a power loss may
// lose the last transactions), a busy timeout of busyMS, and database/sql's
// transactions immediate; extra pragmas follow.
func dsn(path string, busyMS int64, extra ...string) string {
	d := "file:" + uriPath(path) +
		"?_pragma=busy_timeout(" + fmt.Sprint(busyMS) + ")" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)"
	for _, p := range extra {
		d += "&_pragma=" + p
	}
	return d + "&_txlock=immediate"
}

// Options tune Open.
type Options struct {
	// Name prefixes the DB's errors ("locks": "locks: <path>: busy: …").
	Name string
	// MaxReaders bounds the read transactions running at once
	// (DefaultMaxReaders when 0).
	MaxReaders int
	Logger     *slog.Logger
	// FoldDelay is how long a transaction of UpdateFolded stays open for
	// the next folded change (DefaultFoldDelay when 0).
	FoldDelay time.Duration
}

// DB is one SQLite database file of the metadata engine, shared by the
// processes that open it: a held writer connection behind a mutex of this
// process, a pool of reader connections, and a checkpointer goroutine
// (checkpoint.go). Transactions run through Update, View, Peek and
// PeekStatement (txn.go).
type DB struct {
	db   *sql.DB
	path string
	name string
	log  *slog.Logger

	wmu sync.Mutex // serializes this process's write transactions (and Peeks on the writer)
	// writer is the connection of every write transaction (under wmu):
	// one writer keeps its page cache from one transaction to the next,
	// where SQLite drops the cache of a connection another one wrote
	// behind. Nil until the first Update, and again after it went bad.
	writer  *Conn
	readers *readers // connections of read transactions
	ckpt    *checkpointer

	// fold is UpdateFolded's open transaction (fold.go), under wmu;
	// foldOpen mirrors fold.open for readers that do not hold wmu.
	fold      fold
	foldOpen  atomic.Bool
	foldDelay time.Duration

	closeOnce sync.Once
	closed    atomic.Bool
}

// Open opens (creating if needed) the SQLite database at path. Several
// processes may open the same path. The schema is the caller's: each part
// of it runs Ensure in an Update (migrate.go).
func Open(path string, o Options) (*DB, error) {
	if o.MaxReaders <= 0 {
		o.MaxReaders = DefaultMaxReaders
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Name == "" {
		o.Name = "sqlmeta"
	}
	if o.FoldDelay <= 0 {
		o.FoldDelay = DefaultFoldDelay
	}
	// Each connection's automatic checkpoint is raised to the safety net:
	// the checkpointer runs them (checkpoint.go).
	db, err := sql.Open("sqlite", dsn(path, BusyTimeoutMS,
		"wal_autocheckpoint("+fmt.Sprint(walSafetyNetPages)+")", "foreign_keys(1)"))
	if err != nil {
		return nil, fmt.Errorf("%s: open %s: %w", o.Name, path, err)
	}
	// The DB holds its connections itself (a writer, the readers and
	// the checkpointer's): database/sql's pool only opens them, plus one
	// for users of SQL().
	db.SetMaxOpenConns(o.MaxReaders + 3)
	db.SetMaxIdleConns(o.MaxReaders + 3)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	d := &DB{
		db:        db,
		path:      path,
		name:      o.Name,
		log:       o.Logger,
		readers:   newReaders(db, o.MaxReaders),
		foldDelay: o.FoldDelay,
	}
	d.ckpt = newCheckpointer(db, path, o.Logger)
	return d, nil
}

// SQL returns the underlying database, for tools and tests: writes through
// it are neither serialized with the DB's transactions nor atomic with
// their checks, and each use takes one of the DB's connections meanwhile.
func (d *DB) SQL() *sql.DB { return d.db }

// Path returns the database path given to Open.
func (d *DB) Path() string { return d.path }

// Close stops the checkpointer (waiting for a checkpoint in progress),
// waits for a write transaction in progress, commits folded changes
// (UpdateFolded), and closes every connection;
// transactions fail with meta.ErrClosed afterwards. Calling Close again
// returns nil.
func (d *DB) Close() error {
	var err error
	d.closeOnce.Do(func() {
		d.ckpt.close()
		d.wmu.Lock()
		if d.fold.lost == nil {
			if ferr := d.commitFold(); ferr != nil {
				err = ferr
			}
		}
		d.closed.Store(true)
		if d.writer != nil {
			d.writer.close(false)
			d.writer = nil
		}
		d.wmu.Unlock()
		d.readers.close()
		if cerr := d.db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: close %s: %w", d.name, d.path, cerr)
		}
	})
	return err
}

// Inspect runs fn on a query-only connection of the database at path
// inside one read transaction, without joining it as an owner or writing
// anything (`blobshare status`). A path with no database is an error
// wrapping os.ErrNotExist (the caller checks: opening would create it).
func Inspect(ctx context.Context, path string, fn func(ctx context.Context, c *Conn) error) error {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+
		"?_pragma=busy_timeout("+fmt.Sprint(BusyTimeoutMS)+")"+
		"&_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("inspect %s: %w", path, err)
	}
	defer db.Close()
	c, err := newConn(ctx, db)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", path, Classify(err))
	}
	defer c.close(false)
	if _, err := c.ExecContext(ctx, sqlBeginRead); err != nil {
		return fmt.Errorf("inspect %s: begin: %w", path, Classify(err))
	}
	ferr := fn(ctx, c)
	if _, err := c.ExecContext(context.WithoutCancel(ctx), sqlRollback); err != nil && !errors.Is(Classify(err), meta.ErrNoTransaction) {
		ferr = errors.Join(ferr, fmt.Errorf("inspect %s: end: %w", path, err))
	}
	return ferr
}
