// Package meta is the shared vocabulary and contract of blobshare's
// metadata engine: the classes that driver errors are sorted into, the
// schema-version error, and the small interfaces a consumer of the engine
// needs (an owner's liveness, the database's clock). It imports no
// database driver and holds no records of any service; the engine itself
// is meta/sqlmeta (SQLite), and internal/pgdb classifies PostgreSQL's
// errors into the same sentinels.
//
// # Error classes
//
// An engine classifies each driver error once, where the statement ran,
// and keeps the driver's error in the chain beside the sentinel:
// errors.Is finds the class, errors.As the driver's error. Callers above
// the engine (locks, fs, the stores, the front ends) match the classes and
// never a driver's codes or messages, so a second engine only has to sort
// its own errors the same way.
//
//   - ErrBusy: run the transaction again (SQLite busy or locked;
//     PostgreSQL serialization failure or deadlock). The engine's Update
//     retries it; it reaches a caller only when its context ends first.
//   - ErrUnavailable: the database could not be reached or dropped the
//     connection; front ends answer 503 ServerBusy.
//   - ErrStorageFull: the database's disk (or size limit) is full.
//   - ErrUniqueViolation, ErrPrimaryKeyViolation: a key taken.
//   - ErrNoTable, ErrNoTransaction: a part of the schema never created; a
//     COMMIT or ROLLBACK with no transaction open.
//   - *SchemaError (errors.Is ErrIncompatibleSchema): a part of the schema
//     whose version this build cannot open.
//
// # Contract of an engine's transactions
//
// Update runs a function in a write transaction and may run it more than
// once (busy, a conflict, a COMMIT that failed before it was sent): the
// function must have no effect outside the transaction except through
// hooks that run after the commit. View is one consistent snapshot. Peek
// is a View for a few point reads; PeekStatement a Peek of one read
// statement. Package meta/sqlmeta documents how SQLite keeps it.
package meta
