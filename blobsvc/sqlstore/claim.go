package sqlstore

import (
	"context"
	"database/sql"
	"sync"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/locks"
)

// Owner sessions (blobsvc/doc.go, "Several processes on one metadata
// database").
//
// Per-blob claims (claims.go) and commit intents name the owner session
// of the process that wrote them, and any process judges another's
// liveness through Owners: the lock table's one decision
// (locks.Tx.OwnerAlive — registered, heartbeating, a flock the kernel
// drops at SIGKILL), not a second mechanism. A claim or an intent whose
// owner is dead is free at once, with no clean-up needed first.

// claimSchema is the per-blob claims' table (claims.go). bs_claim, the
// one writer claim of the database older versions took, is no longer
// read or written; bs_intents.owner is added to older databases by
// migration 1 (migrate.go).
const claimSchema = `
CREATE TABLE IF NOT EXISTS bs_blob_claims (
	container TEXT    NOT NULL,
	name      TEXT    NOT NULL, -- '' for the container itself
	owner     TEXT    NOT NULL, -- the holder's owner session (Owners.Owner)
	token     TEXT    NOT NULL, -- this claim's identity: a takeover or a release names it
	claimed   INTEGER NOT NULL, -- Unix nanoseconds, for status and messages
	PRIMARY KEY (container, name)
);
`

// Owners is the owner session claims and commit intents belong to, and
// the judge of other owners' liveness: a lock table (TableOwners).
type Owners interface {
	// Owner is this process's owner id (it may change: a session the
	// others reaped re-registers).
	Owner() string
	// Alive reports whether owner o is alive; a probe that fails counts
	// as alive (never take over on doubt).
	Alive(ctx context.Context, o string) (bool, error)
}

// TableOwners is the lock table t's owner session as Owners.
func TableOwners(t *locks.Table) Owners { return tableOwners{t} }

type tableOwners struct{ t *locks.Table }

func (o tableOwners) Owner() string { return string(o.t.Owner()) }

func (o tableOwners) Alive(ctx context.Context, owner string) (bool, error) {
	var alive bool
	err := o.t.View(ctx, func(tx *locks.Tx) error {
		var err error
		alive, err = tx.OwnerAlive(locks.OwnerID(owner))
		return err
	})
	if err != nil {
		return true, err
	}
	return alive, nil
}

// soloOwners is the Owners of a store nobody gave one (UseOwners): the
// store is alone on its database, so an owner that is not its own is a
// dead one — what a process that crashed before this one opened left.
type soloOwners struct{ id string }

func (o soloOwners) Owner() string { return o.id }

func (o soloOwners) Alive(_ context.Context, owner string) (bool, error) { return owner == o.id, nil }

// ownerState is the store's owner session.
type ownerState struct {
	mu     sync.Mutex
	owners Owners
}

func (s *Store) owners() Owners {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	if s.own.owners == nil {
		s.own.owners = soloOwners{id: "solo-" + uuid.NewString()}
	}
	return s.own.owners
}

// UseOwners makes o the owner session of the store's claims and commit
// intents, and the judge of other owners' liveness. Without it the store
// counts itself alone on the database (every other owner dead): tests
// and single-process tools.
func (s *Store) UseOwners(o Owners) {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	s.own.owners = o
}

// begin starts a write transaction (immediate: it holds SQLite's write
// lock from its first statement, so a read in it is not overtaken by
// another process's write).
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	return s.writer.BeginTx(ctx, nil)
}

// exec runs one write statement.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.writer.ExecContext(ctx, q, args...)
}
