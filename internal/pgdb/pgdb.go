package pgdb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/blobshare/blobshare/meta"
)

// Sentinels of classified driver errors.
var (
	// ErrRetry: the transaction lost a serialization or deadlock
	// conflict; running it again from scratch may succeed. It is the
	// engine's retry class, meta.ErrBusy.
	ErrRetry = meta.ErrBusy
	// ErrUniqueViolation: an insert met an existing key
	// (meta.ErrUniqueViolation).
	ErrUniqueViolation = meta.ErrUniqueViolation
	// ErrIncompatibleSchema: the database's schema is newer than this
	// build knows.
	ErrIncompatibleSchema = errors.New("database schema newer than this blobshare")
)

// MaxAttempts bounds Retry's runs of one transaction.
const MaxAttempts = 30

// Classify maps err to the package's sentinels and meta's classes
// (keeping err in the chain); nil stays nil, an error already classified
// and unknown errors are returned as they are.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrRetry) || errors.Is(err, ErrUniqueViolation) || errors.Is(err, meta.ErrUnavailable) {
		return err
	}
	// A connection that could not be made, whatever the server said (it
	// may refuse with an error of its own: not accepting connections,
	// too many clients, starting up).
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", meta.ErrUnavailable, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01":
			return fmt.Errorf("%w: %w", ErrRetry, err)
		case pe.Code == "23505":
			return fmt.Errorf("%w: %w", ErrUniqueViolation, err)
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // admin or crash shutdown, cannot connect now
			pe.Code == "53300": // too many connections
			return fmt.Errorf("%w: %w", meta.ErrUnavailable, err)
		}
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", meta.ErrUnavailable, err)
	}
	return err
}

// unreachable says whether err is the connection's, not the statement's:
// a connection that could not be made, or one that broke under the
// statement (the server went away). A caller's cancelled context is not.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err)
}

// Retry runs fn until it returns something other than an error wrapping
// ErrRetry (after Classify), at most MaxAttempts times, sleeping a
// jittered, doubling backoff between runs.
func Retry(ctx context.Context, fn func() error) error {
	backoff := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := Classify(fn())
		if !errors.Is(err, ErrRetry) || attempt == MaxAttempts {
			return err
		}
		d := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %v)", ctx.Err(), err)
		case <-time.After(d):
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// Key hashes parts into an advisory lock key.
func Key(parts ...string) int64 {
	h := fnv.New64a()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return int64(h.Sum64())
}

// Options tune Open.
type Options struct {
	// MaxConns caps the pool (0: pgxpool's default, 4 or the CPU count).
	MaxConns int32
}

// Open connects a pool to connString (a postgres:// URL or a libpq
// key=value string; search_path selects the schema) and returns it with
// the schema's name (current_schema()).
func Open(ctx context.Context, connString string, o Options) (*pgxpool.Pool, string, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, "", fmt.Errorf("parse connection string: %w", err) // pgx redacts the password
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	// A transaction never waits on anything but the database, so an idle
	// one is a stuck client: let the server end it and free its locks.
	if _, ok := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !ok {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "30000"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connect to %s: %w", cfg.ConnConfig.Host, err)
	}
	var schema *string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, "", fmt.Errorf("connect to %s: %w", cfg.ConnConfig.Host, err)
	}
	if schema == nil {
		pool.Close()
		return nil, "", fmt.Errorf("connect to %s: the search_path names no existing schema", cfg.ConnConfig.Host)
	}
	return pool, *schema, nil
}

// Migrate brings part's schema to len(steps) (see the package doc).
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema, part string, steps []string) error {
	err := Retry(ctx, func() error {
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, Key(schema, "migrations")); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS meta_schema (
				part    text PRIMARY KEY,
				version bigint NOT NULL)`); err != nil {
				return err
			}
			var version int64
			err := tx.QueryRow(ctx, `SELECT version FROM meta_schema WHERE part = $1`, part).Scan(&version)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if version > int64(len(steps)) {
				return fmt.Errorf("%s at version %d, this build knows %d: %w", part, version, len(steps), ErrIncompatibleSchema)
			}
			for i := version; i < int64(len(steps)); i++ {
				if _, err := tx.Exec(ctx, steps[i]); err != nil {
					return fmt.Errorf("migration %d: %w", i+1, err)
				}
			}
			_, err = tx.Exec(ctx, `INSERT INTO meta_schema(part, version) VALUES($1, $2)
				ON CONFLICT(part) DO UPDATE SET version = excluded.version`, part, len(steps))
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("schema %s, part %s: %w", schema, part, err)
	}
	return nil
}

// Version reads part's recorded schema version (0: none).
func Version(ctx context.Context, pool *pgxpool.Pool, part string) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, `SELECT version FROM meta_schema WHERE part = $1`, part).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}
