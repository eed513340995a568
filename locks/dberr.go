package locks

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/blobshare/blobshare/meta"
)

// Driver errors, classified once, here: every error of a statement run
// through a Conn, a Row or a transaction of the Table is passed through
// classify, which adds one of the engine's sentinels (package meta) to the
// errors that callers must tell apart. Callers above the storage layer
// (fs, rest) match them with errors.Is — as locks.ErrBusy and so on, the
// same values — and never look at the driver's codes or messages.
var (
	ErrBusy                = meta.ErrBusy
	ErrStorageFull         = meta.ErrStorageFull
	ErrNoTable             = meta.ErrNoTable
	ErrNoTransaction       = meta.ErrNoTransaction
	ErrUniqueViolation     = meta.ErrUniqueViolation
	ErrPrimaryKeyViolation = meta.ErrPrimaryKeyViolation
)

// dbError is a driver error with the sentinel classify gave it. Both stay
// in the chain: errors.Is finds the sentinel, errors.As the driver's error.
type dbError struct {
	kind error
	err  error
}

func (e *dbError) Error() string   { return e.err.Error() }
func (e *dbError) Unwrap() []error { return []error{e.kind, e.err} }

// classify returns err with the sentinel its driver error (anywhere in
// the chain) belongs to, or err unchanged. SQLite reports a missing table
// and a missing transaction only as the generic SQLITE_ERROR with a
// message: those two are told apart by the message text, in this one
// function, because the driver offers nothing else.
func classify(err error) error {
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
			kind = ErrUniqueViolation
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			kind = ErrPrimaryKeyViolation
		}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		kind = ErrBusy
	case sqlite3.SQLITE_FULL:
		kind = ErrStorageFull
	case sqlite3.SQLITE_ERROR:
		switch msg := se.Error(); {
		case strings.Contains(msg, "no such table"):
			kind = ErrNoTable
		case strings.Contains(msg, "no transaction is active"):
			kind = ErrNoTransaction
		}
	}
	if kind == nil {
		return err
	}
	return &dbError{kind: kind, err: err}
}
