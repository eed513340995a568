package meta

import (
	"errors"
	"fmt"
)

// The classes of database failures (doc.go, "Error classes").
var (
	// ErrBusy: another transaction holds what this one needs, or won a
	// conflict with it (SQLITE_BUSY, SQLITE_LOCKED; PostgreSQL 40001,
	// 40P01): running the transaction again may succeed.
	ErrBusy = errors.New("database busy")
	// ErrUnavailable: the database could not be reached, refused the
	// connection, or dropped it (a restart, a failover, a network cut).
	// What the request asked may or may not have been applied if the
	// failure came at its commit; a client may retry. Front ends answer
	// 503 ServerBusy.
	ErrUnavailable = errors.New("database unavailable")
	// ErrStorageFull: the database's disk (or its size limit) is full
	// (SQLITE_FULL). FileREST answers a full share.
	ErrStorageFull = errors.New("database storage full")
	// ErrNoTable: a statement named a table the database does not have
	// (yet): a part of the schema was never created.
	ErrNoTable = errors.New("no such table")
	// ErrNoTransaction: COMMIT or ROLLBACK with no transaction open (a
	// failed statement may already have ended it).
	ErrNoTransaction = errors.New("no transaction is active")
	// ErrUniqueViolation: an insert or update would give a UNIQUE index
	// two equal keys (SQLITE_CONSTRAINT_UNIQUE, PostgreSQL 23505).
	ErrUniqueViolation = errors.New("unique constraint violated")
	// ErrPrimaryKeyViolation: a row with that primary key exists
	// (SQLITE_CONSTRAINT_PRIMARYKEY).
	ErrPrimaryKeyViolation = errors.New("primary key constraint violated")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("database closed")
)

// ErrIncompatibleSchema: the database was created by a blobshare build
// whose schema this one cannot open (an older one without a migration, or
// a newer one). Open fails with it, wrapped in a *SchemaError.
var ErrIncompatibleSchema = errors.New("created by an incompatible blobshare version")

// SchemaError reports a database whose schema version is not the one this
// build expects. Part names the tables concerned ("lock table",
// "namespace", "blob", "queue", "table"); Found is 0 for a database from
// before schemas were versioned.
type SchemaError struct {
	Dir   string // the data directory (the database's directory)
	DB    string // the database file
	Part  string // "lock table", "namespace", ...
	Found int64
	Want  int64
}

func (e *SchemaError) Error() string {
	found := fmt.Sprint(e.Found)
	if e.Found == 0 {
		found = "0 (unversioned)"
	}
	return fmt.Sprintf("data directory %s (%s) was %v: %s schema %s, this build expects %d",
		e.Dir, e.DB, ErrIncompatibleSchema, e.Part, found, e.Want)
}

func (e *SchemaError) Unwrap() error { return ErrIncompatibleSchema }
