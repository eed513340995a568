package locks

import (
	"github.com/blobshare/blobshare/meta"
	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// Driver errors are classified once, by the engine (sqlmeta.Classify):
// every error of a statement run through a Conn, a Row or a transaction of
// the Table carries one of the engine's sentinels (package meta) when
// callers must tell it apart. Callers above the storage layer (fs, rest)
// match them with errors.Is — as locks.ErrBusy and so on, the same values —
// and never look at the driver's codes or messages.
var (
	ErrBusy                = meta.ErrBusy
	ErrStorageFull         = meta.ErrStorageFull
	ErrNoTable             = meta.ErrNoTable
	ErrNoTransaction       = meta.ErrNoTransaction
	ErrUniqueViolation     = meta.ErrUniqueViolation
	ErrPrimaryKeyViolation = meta.ErrPrimaryKeyViolation
)

// classify is the engine's classifier.
func classify(err error) error { return sqlmeta.Classify(err) }
