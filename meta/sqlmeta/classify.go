package sqlmeta

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/blobshare/blobshare/meta"
)

// dbError is a driver error with the class Classify gave it. Both stay in
// the chain: errors.Is finds the class, errors.As the driver's error.
type dbError struct {
	kind error
	err  error
}

func (e *dbError) Error() string   { return e.err.Error() }
func (e *dbError) Unwrap() []error { return []error{e.kind, e.err} }

// Classify returns err with the class (package meta) its SQLite error,
// anywhere in the chain, belongs to, or err unchanged. Every statement run
// through a Conn, a Row or a transaction of a DB comes classified; the
// stores that run statements on their own pools pass their errors through
// it. SQLite reports a missing table and a missing transaction only as the
// generic SQLITE_ERROR with a message: those two are told apart by the
// message text, in this one function, because the driver offers nothing
// else.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var de *dbError
	if errors.As(err, &de) {
		return err // classified already
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	var kind error
	switch se.Code() & 0xff { // the primary result code; extended codes add high bits
	case sqlite3.SQLITE_CONSTRAINT:
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			kind = meta.ErrUniqueViolation
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			kind = meta.ErrPrimaryKeyViolation
		}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		kind = meta.ErrBusy
	case sqlite3.SQLITE_FULL:
		kind = meta.ErrStorageFull
	case sqlite3.SQLITE_ERROR:
		switch msg := se.Error(); {
		case strings.Contains(msg, "no such table"):
			kind = meta.ErrNoTable
		case strings.Contains(msg, "no transaction is active"):
			kind = meta.ErrNoTransaction
		}
	}
	if kind == nil {
		return err
	}
	return &dbError{kind: kind, err: err}
}

// IsBusy reports a busy or locked database (meta.ErrBusy).
func IsBusy(err error) bool { return errors.Is(Classify(err), meta.ErrBusy) }

// noTransaction reports SQLite's answer to a ROLLBACK with no transaction
// open (a failed statement or COMMIT may already have ended it).
func noTransaction(err error) bool { return errors.Is(Classify(err), meta.ErrNoTransaction) }
