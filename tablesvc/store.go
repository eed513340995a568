package tablesvc

import (
	"context"
)

// Store keeps tables, their ACLs, entities and the service properties.
// Table names are matched case-insensitively (by their lower-cased form)
// and kept in the case they were created with.
//
// Entity writes go through Write only: the Service runs its whole decision
// (exists? ETag current? new Timestamp after the old one?) inside fn,
// against what Tx.Get reads in the same transaction, so no check is ever
// made on a read outside the write that depends on it. A Store must make
// each Write serializable with respect to every other Write on the same
// table, across processes sharing the database (sqlstore: BEGIN
// IMMEDIATE; pgstore: READ COMMITTED with a per-entity advisory lock taken
// before each entity is read or written, rerunning fn when it must take
// its locks in another order — fn is written to be run again from
// scratch).
//
// Missing tables are ErrTableNotFound and missing entities
// ErrEntityNotFound, wrapped with the table or key.
type Store interface {
	// CreateTable creates the table; ErrTableExists if a table with the
	// same lower-cased name exists.
	CreateTable(ctx context.Context, name string) error
	// DeleteTable removes the table, its ACL and its entities in one
	// transaction.
	DeleteTable(ctx context.Context, name string) error
	// Table returns the table as created.
	Table(ctx context.Context, name string) (Table, error)
	// ScanTables calls yield for each table whose lower-cased name is ≥
	// from, in lower-cased name order, until yield returns false.
	ScanTables(ctx context.Context, from string, yield func(Table) bool) error
	ACL(ctx context.Context, table string) ([]SignedIdentifier, error)
	SetACL(ctx context.Context, table string, ids []SignedIdentifier) error
	// ServiceProperties returns the stored document (nil if never set);
	// SetServiceProperties replaces it.
	ServiceProperties(ctx context.Context) ([]byte, error)
	SetServiceProperties(ctx context.Context, doc []byte) error

	// Get returns one entity.
	Get(ctx context.Context, table, pk, rk string) (Entity, error)
	// Scan calls yield for each entity of the table inside r, in
	// (PartitionKey, RowKey) ordinal order, until yield returns false. It
	// streams: it holds at most a few rows in memory whatever the table's
	// size. ErrTableNotFound if the table does not exist when it starts.
	Scan(ctx context.Context, table string, r KeyRange, yield func(Entity) bool) error
	// Write runs fn in one write transaction on the table (ErrTableNotFound
	// if it does not exist); fn's error rolls everything back and is
	// returned as is. fn may be called more than once (see the type's doc).
	Write(ctx context.Context, table string, fn func(Tx) error) error
}

// SingleWriter is a Store with a cheaper Write for the one-entity
// operations: fn makes at most one change (one Put, Delete or Insert), as
// its last step, so the store need not prepare to undo fn's changes apart
// from the change itself (sqlstore: no savepoint of its own inside a
// group commit). Everything else about Write holds.
type SingleWriter interface {
	WriteSingle(ctx context.Context, table string, fn func(Tx) error) error
}

// Inserter is a Tx that inserts an entity only if its keys are free, in
// one step (sqlstore: one INSERT … ON CONFLICT DO NOTHING), sparing Insert
// Entity the read before its write.
type Inserter interface {
	// Insert stores e if no entity has its keys and says whether it did.
	Insert(ctx context.Context, e Entity) (bool, error)
}

// Tx is the view of one table inside a Store.Write transaction.
type Tx interface {
	// Get returns the entity and true, or false if there is none.
	Get(ctx context.Context, pk, rk string) (Entity, bool, error)
	// Put stores e whole (inserting or replacing), Timestamp included.
	Put(ctx context.Context, e Entity) error
	// Delete removes the entity if present.
	Delete(ctx context.Context, pk, rk string) error
}

// Bound is one end of a key range; the zero Bound is unbounded.
type Bound struct {
	Set       bool
	Value     string
	Inclusive bool
}

// KeyRange bounds a Scan. PK bounds apply to PartitionKey, RK bounds to
// RowKey (each on its own: rk ≥ RKLow in every partition of the range);
// After, if set, starts the scan at the first entity with (PartitionKey,
// RowKey) ≥ (After.PK, After.RK) — the query continuation.
type KeyRange struct {
	PKLow, PKHigh Bound
	RKLow, RKHigh Bound
	After         *Key
}

// Key is an entity's (PartitionKey, RowKey).
type Key struct{ PK, RK string }

// Contains says whether (pk, rk) is inside r.
func (r KeyRange) Contains(pk, rk string) bool {
	if r.After != nil && (pk < r.After.PK || pk == r.After.PK && rk < r.After.RK) {
		return false
	}
	return r.PKLow.below(pk) && r.PKHigh.above(pk) && r.RKLow.below(rk) && r.RKHigh.above(rk)
}

// Empty says whether no key can be inside r.
func (r KeyRange) Empty() bool {
	return boundsEmpty(r.PKLow, r.PKHigh) || boundsEmpty(r.RKLow, r.RKHigh)
}

func boundsEmpty(lo, hi Bound) bool {
	if !lo.Set || !hi.Set {
		return false
	}
	return lo.Value > hi.Value || lo.Value == hi.Value && !(lo.Inclusive && hi.Inclusive)
}

// below: v satisfies b as a lower bound.
func (b Bound) below(v string) bool {
	return !b.Set || v > b.Value || b.Inclusive && v == b.Value
}

// above: v satisfies b as an upper bound.
func (b Bound) above(v string) bool {
	return !b.Set || v < b.Value || b.Inclusive && v == b.Value
}
