package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// The writer claim (blobsvc/doc.go, "One writer per metadata database").
//
// The Blob service checks a conditional write against the state it read
// and serialises the writers of one blob with an in-process lock, so one
// process at a time may write a blob.db. The claim says which: the row
// bs_claim names the owner session (package locks) of the process that
// holds it. A claim whose owner is dead — its process killed (its flock
// free), closed, or its heartbeat expired — is free, with no clean-up
// needed: liveness is the lock table's one decision (locks.Tx.OwnerAlive),
// not a second mechanism. Commit intents name their owner too, and the
// claim holder recovers only dead owners' intents.

// claimSchema is the claim's table; bs_intents.owner is added to older
// databases by addIntentOwner.
const claimSchema = `
CREATE TABLE IF NOT EXISTS bs_claim (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	owner   TEXT    NOT NULL, -- the holder's owner session (locks.OwnerID)
	pid     INTEGER NOT NULL, -- the holder's process, for messages only
	claimed INTEGER NOT NULL  -- Unix nanoseconds
);
`

// Owners is the owner session a claim and the commit intents belong to,
// and the judge of other owners' liveness: a lock table (TableOwners).
type Owners interface {
	// Owner is this process's owner id.
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

// ErrClaimLost is a write of a store whose claim another process has
// taken since (its owner session expired): it writes nothing more.
var ErrClaimLost = errors.New("blob sqlstore: the writer claim was taken over: this process no longer writes the database")

// ErrNotClaimed is Intents on a store that does not hold the claim:
// recovery runs only under it.
var ErrNotClaimed = errors.New("blob sqlstore: recovery needs the writer claim")

// ClaimedError is Claim's refusal: a live owner holds the claim.
type ClaimedError struct {
	Path  string // the database
	Owner string // the holder's owner session
	Pid   int    // the holder's process id (0: unknown)
}

func (e *ClaimedError) Error() string {
	holder := "another process"
	if e.Pid > 0 {
		holder = "process " + strconv.Itoa(e.Pid)
	}
	return fmt.Sprintf("blob sqlstore: %s: %s (owner %s) holds the writer claim", e.Path, holder, e.Owner)
}

// claimState is what a claiming store remembers.
type claimState struct {
	mu     sync.Mutex
	owner  string // the owner the claim was taken for; "" unclaimed
	owners Owners
}

func (c *claimState) get() (string, Owners) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner, c.owners
}

// Claim takes the database's writer claim for o's owner session: free, or
// held by a dead owner (a killed process's claim is free at once), it
// becomes this store's; held by a live owner, it is refused with a
// *ClaimedError naming the holder. Claim again with the same owner is a
// no-op. The decision runs in one write transaction, so two stores
// claiming at once never both succeed.
func (s *Store) Claim(ctx context.Context, o Owners) error {
	me := o.Owner()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return wrap("claim", s.path, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var holder string
	var pid int
	err = tx.QueryRowContext(ctx, `SELECT owner, pid FROM bs_claim WHERE id = 1`).Scan(&holder, &pid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return wrap("claim", s.path, err)
	case holder != me:
		alive, err := o.Alive(ctx, holder)
		if err != nil {
			return fmt.Errorf("blob sqlstore: claim %s: is owner %s alive: %w", s.path, holder, err)
		}
		if alive {
			return &ClaimedError{Path: s.path, Owner: holder, Pid: pid}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bs_claim(id, owner, pid, claimed) VALUES(1, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, claimed = excluded.claimed`,
		me, os.Getpid(), time.Now().UnixNano()); err != nil {
		return wrap("claim", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap("claim", s.path, err)
	}
	s.claim.mu.Lock()
	s.claim.owner, s.claim.owners = me, o
	s.claim.mu.Unlock()
	return nil
}

// release gives the claim up (Close), if this store still holds it.
func (s *Store) release(ctx context.Context) error {
	me, _ := s.claim.get()
	if me == "" {
		return nil
	}
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM bs_claim WHERE owner = ?`, me); err != nil {
		return wrap("release the claim of", s.path, err)
	}
	return nil
}

// begin starts a write transaction, fenced (fenceTx).
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if err := s.fenceTx(ctx, tx); err != nil {
		tx.Rollback() //nolint:errcheck // nothing written
		return nil, err
	}
	return tx, nil
}

// exec runs one write statement: as is in a store that never claimed, in
// a fenced transaction (begin) in one that did.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if me, _ := s.claim.get(); me == "" {
		return s.writer.ExecContext(ctx, q, args...)
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// fenceTx fails a write transaction of a claiming store whose claim is no
// longer its own (ErrClaimLost): every write of the store runs one (begin,
// exec), so a process whose claim was taken over — its session expired
// while it was stopped — writes nothing beside the new holder. A store
// that never claimed (tests, one process) writes as before claims
// existed.
func (s *Store) fenceTx(ctx context.Context, tx *sql.Tx) error {
	me, _ := s.claim.get()
	if me == "" {
		return nil
	}
	var holder string
	err := tx.QueryRowContext(ctx, `SELECT owner FROM bs_claim WHERE id = 1`).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) || err == nil && holder != me {
		return fmt.Errorf("%s: %w", s.path, ErrClaimLost)
	}
	if err != nil {
		return wrap("check the claim of", s.path, err)
	}
	return nil
}
