package locks

// Owner sessions (doc.go, "Sessions"): each Table registers a row in
// lk_owners — owner id, host, pid, program, start, and a heartbeat deadline
// on the database's clock — renews the deadline from a goroutine of its
// own, and fences itself when it finds the row expired or gone. Whether
// another owner is alive is one decision, judgeOwner: dead when it has no
// row, when its deadline has passed by the database's clock, or — on this
// host — when its flock is free.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/meta/sqlmeta"
)

// Session defaults (Options.HeartbeatInterval, Options.SessionExpiry).
const (
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultSessionExpiry     = 10 * time.Second
)

// DeathCause says why an owner counts as dead; "" while it is alive.
type DeathCause string

const (
	CauseNone             DeathCause = ""
	CauseUnregistered     DeathCause = "not registered"    // no session row: reaped, closed, or never registered
	CauseHeartbeatExpired DeathCause = "heartbeat expired" // its deadline passed by the database's clock
	CauseFlockFree        DeathCause = "flock free"        // same host: its process is gone (killed at once)
)

// session is this Table's registration as an owner.
type session struct {
	owner OwnerID
	lock  *sqlmeta.OwnerLock

	mu         sync.Mutex
	validUntil time.Time // local deadline: decide only before it without renewing
	lost       error     // set once the session is found expired or reaped
}

func (s *session) valid(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost == nil && now.Before(s.validUntil)
}

func (s *session) renewed(until time.Time) {
	s.mu.Lock()
	if s.lost == nil && until.After(s.validUntil) {
		s.validUntil = until
	}
	s.mu.Unlock()
}

func (s *session) lostErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// markLost fences the session: every write transaction of the Table fails
// with it until the Table has registered again.
func (s *session) markLost(err error) {
	s.mu.Lock()
	if s.lost == nil {
		s.lost = err
	}
	s.mu.Unlock()
}

// ownerRow is an owner's session row.
type ownerRow struct {
	host    string
	expires int64 // heartbeat deadline, ns on the database's clock; 0: a row of a build before sessions (flock only)
}

// judgeOwner is the one liveness decision: an owner without a row is dead;
// one whose heartbeat deadline has passed by the database's clock now is
// dead wherever it runs (a frozen or cut-off process); one on this host
// (or registered before hosts were recorded) is dead when probe finds its
// flock free (a killed process, at once). A probe that fails counts as
// alive: never reap on doubt.
func judgeOwner(row ownerRow, found bool, now time.Time, host string, probe func() (bool, error)) (DeathCause, error) {
	if !found {
		return CauseUnregistered, nil
	}
	if row.expires != 0 && now.UnixNano() >= row.expires {
		return CauseHeartbeatExpired, nil
	}
	if row.host != "" && row.host != host {
		return CauseNone, nil // another host: its heartbeat alone tells
	}
	alive, err := probe()
	if err != nil {
		if errors.Is(err, sqlmeta.ErrInvalidOwner) {
			return CauseFlockFree, nil // not a name we could have created
		}
		return CauseNone, &probeError{err}
	}
	if !alive {
		return CauseFlockFree, nil
	}
	return CauseNone, nil
}

// probeError is a flock probe that failed: the owner counts as alive.
type probeError struct{ err error }

func (e *probeError) Error() string { return e.err.Error() }
func (e *probeError) Unwrap() error { return e.err }

// thisHost names this machine in session rows: the flock probe applies only
// to owners of the same host.
func thisHost() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// thisProgram names this process in its session row: the program and its
// subcommand, never its flags (they may carry keys).
func thisProgram() string {
	if len(os.Args) == 0 {
		return ""
	}
	p := filepath.Base(os.Args[0])
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") && len(os.Args[1]) < 32 {
		p += " " + os.Args[1]
	}
	return p
}

// now is the database's clock for this transaction: read once, inside it
// (after BEGIN), so a write transaction judges expiry under the write lock.
func (tx *Tx) now() time.Time {
	if tx.at.IsZero() {
		tx.at = tx.t.clock()
	}
	return tx.at
}

// ownerKey is owner o's key lock (doc.go, "Key locks"): the session
// decisions — judging an owner in a write transaction (a reaping may
// follow), renewing, reaping — lock it as file decisions lock their file,
// so that on an engine without a global write lock a renewal and a reaping
// of one owner never interleave. Owner keys have the top bit set; file ids,
// counted up from 1, never do. Two owners hashing alike only share a lock.
func ownerKey(o OwnerID) FileID {
	h := fnv.New64a()
	h.Write([]byte(o))
	return FileID(h.Sum64() | 1<<63)
}

// ownerCause judges owner o (judgeOwner) inside the transaction; in a
// write transaction under o's key lock, which a reaping of o then holds.
func (tx *Tx) ownerCause(o OwnerID) (DeathCause, error) {
	tx.lockKeys("ownerCause", ownerKey(o))
	if err := tx.holds(ownerKey(o), "session of owner "+string(o)); err != nil {
		return CauseNone, err
	}
	var row ownerRow
	found := true
	err := tx.queryRow(`SELECT host, expires FROM lk_owners WHERE owner = ?`, []any{string(o)}, &row.host, &row.expires)
	if errors.Is(err, sql.ErrNoRows) {
		found, err = false, nil
	}
	if err != nil {
		return CauseNone, fmt.Errorf("locks: session of owner %s: %w", o, err)
	}
	return judgeOwner(row, found, tx.now(), tx.t.host, func() (bool, error) { return ownerAlive(tx.t.ownersDir, o) })
}

// OwnerAlive reports whether owner o is alive (judgeOwner): this Table's
// own owner always is. Package fs asks it about the owner of a commit
// intent. A probe that fails counts as alive and is logged.
func (tx *Tx) OwnerAlive(o OwnerID) (bool, error) {
	dead, err := tx.ownerDead(o)
	return !dead, err
}

// register writes session s's row, its deadline expiry past now.
func (tx *Tx) register(s *session) error {
	_, err := tx.exec(`INSERT INTO lk_owners(owner, pid, started, host, program, expires) VALUES(?, ?, ?, ?, ?, ?)`,
		string(s.owner), os.Getpid(), tx.t.opts.Now().UnixNano(), tx.t.host, tx.t.program,
		tx.now().Add(tx.t.opts.SessionExpiry).UnixNano())
	if err != nil {
		return fmt.Errorf("register owner %s: %w", s.owner, err)
	}
	return nil
}

// renew moves owner o's deadline to expiry past now, if it has not passed:
// false means the session is expired or reaped — never brought back.
func (tx *Tx) renew(o OwnerID) (bool, error) {
	tx.lockKeys("renew", ownerKey(o))
	if err := tx.holds(ownerKey(o), "session of owner "+string(o)); err != nil {
		return false, err
	}
	now := tx.now()
	res, err := tx.exec(`UPDATE lk_owners SET expires = ? WHERE owner = ? AND expires > ?`,
		now.Add(tx.t.opts.SessionExpiry).UnixNano(), string(o), now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("locks: heartbeat of owner %s: %w", o, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("locks: heartbeat of owner %s: %w", o, err)
	}
	return n == 1, nil
}

// localDeadline is how long after a renewal sent at sent this process
// decides without renewing again: one heartbeat interval before the stored
// deadline, so that a wall clock stepped by up to that much still finds
// the process fenced before anyone may reap it.
func (t *Table) localDeadline(sent time.Time) time.Time {
	return sent.Add(t.opts.SessionExpiry - t.opts.HeartbeatInterval)
}

// fence runs first in every decision's write transaction (after BEGIN, so
// no reaper can commit between it and the decision): past the local
// deadline it renews inside the transaction (taking effect if that
// commits), and a session found expired or reaped fails the transaction
// with ErrSessionLost.
func (t *Table) fence(tx *Tx) error {
	s := tx.sess
	if err := s.lostErr(); err != nil {
		return err
	}
	sent := t.clock()
	if s.valid(sent) {
		return nil
	}
	ok, err := tx.renew(s.owner)
	if err != nil {
		return err
	}
	if !ok {
		err := fmt.Errorf("locks: %s: owner %s: session expired or reaped: %w", t.path, s.owner, ErrSessionLost)
		s.markLost(err)
		t.log.Warn("session lost; registering as a new owner", "err", err)
		return err
	}
	tx.onCommit = append(tx.onCommit, func() { s.renewed(t.localDeadline(sent)) })
	return nil
}

// heartbeat renews this Table's session once; a session found expired or
// reaped is marked lost (the next decision fails and registers anew).
func (t *Table) heartbeat(ctx context.Context) error {
	w := t.db.LockWriter()
	defer w.Unlock()
	if t.closed.Load() {
		return nil
	}
	s := t.sess.Load()
	if s.lostErr() != nil {
		return nil
	}
	sent := t.clock()
	var ok bool
	err := t.updateLocked(ctx, w, false, func(tx *Tx) error {
		var err error
		ok, err = tx.renew(s.owner)
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		err := fmt.Errorf("locks: %s: owner %s: heartbeat found the session expired or reaped: %w", t.path, s.owner, ErrSessionLost)
		s.markLost(err)
		t.log.Warn("session lost", "err", err)
		return nil
	}
	s.renewed(t.localDeadline(sent))
	return nil
}

// heartbeats renews the session every HeartbeatInterval until stop closes.
func (t *Table) heartbeats(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(t.opts.HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if err := t.heartbeat(ctx); err != nil && ctx.Err() == nil {
			t.log.Warn("heartbeat failed", "err", err)
		}
	}
}

// newSession takes the flock of a new owner id.
func (t *Table) newSession(o OwnerID) (*session, error) {
	lock, err := lockOwnerFile(t.ownersDir, o)
	if err != nil {
		return nil, err
	}
	return &session{owner: o, lock: lock, validUntil: t.localDeadline(t.clock())}, nil
}

// reregister replaces a lost session (under the engine's writer mutex,
// w): a new owner id, its flock and row, in the transaction that reaps the
// old owner's handles — they are gone, as after a network drop.
func (t *Table) reregister(ctx context.Context, w *sqlmeta.Writer) error {
	old := t.sess.Load()
	s, err := t.newSession(OwnerID(uuid.NewString()))
	if err != nil {
		return fmt.Errorf("locks: %s: register again: %w", t.path, err)
	}
	err = t.updateLocked(ctx, w, false, func(tx *Tx) error {
		tx.sess = s
		if err := tx.reapOwner(old.owner); err != nil {
			return err
		}
		return tx.register(s)
	})
	if err != nil {
		s.lock.Release()
		return fmt.Errorf("locks: %s: register again: %w", t.path, err)
	}
	t.sess.Store(s)
	t.ownMu.Lock()
	clear(t.ownFiles)
	clear(t.locked)
	t.ownMu.Unlock()
	if err := old.lock.Release(); err != nil {
		t.log.Warn("old owner file not removed", "err", err)
	}
	t.log.Info("registered as a new owner after losing the session", "old_owner", string(old.owner), "new_owner", string(s.owner))
	return nil
}
