package pgdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Owner sessions on PostgreSQL: a registered node is the owner session of
// what its process holds in the stores (blob claims and commit intents),
// and any node judges another's liveness from the registry, on the
// database's clock.
//
// An owner is alive while its row exists, its heartbeat has not expired
// (expires > now()), and its session advisory lock is held — unless its
// last heartbeat is older than the server's start: a restart frees every
// session lock, which proves nothing until the node has connected again
// (and it heartbeats right after retaking its lock), so until then the
// heartbeat alone decides (meta-engine.md §3.4, "current incarnation").
// A killed node's lock is free within milliseconds, so its claims are
// taken over at once rather than after the expiry; a node frozen past its
// expiry is dead, and re-registers under a new id when it wakes, as does
// one whose session was cut while the server ran on (see the package doc,
// Fencing).
const aliveSQL = `SELECT EXISTS (SELECT 1 FROM meta_nodes n
	WHERE n.id = $1 AND n.expires > now()
	AND (n.heartbeat < pg_postmaster_start_time() OR EXISTS (SELECT 1 FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid = ((n.lock_key >> 32) & 4294967295)::oid AND l.objid = (n.lock_key & 4294967295)::oid)))`

// Querier is what NodeAlive reads with: a pool, a connection or a
// transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// NodeAlive reports whether the node id is alive (see aliveSQL's
// comment); an id never registered, or removed (Close), is dead. A
// registry not yet created has no live node.
func NodeAlive(ctx context.Context, q Querier, id string) (bool, error) {
	var alive bool
	if err := q.QueryRow(ctx, aliveSQL, id).Scan(&alive); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table: no node ever registered
			return false, nil
		}
		return true, fmt.Errorf("is node %s alive: %w", id, Classify(err))
	}
	return alive, nil
}

// Owner is the node's id as the owner of what its process holds (it
// changes when the node registers again after its heartbeat expired).
func (n *Node) Owner() string { return n.ID() }

// Alive reports whether node id is alive (NodeAlive), reading with the
// node's pool; a probe that fails counts as alive, with its error (never
// take over on doubt).
func (n *Node) Alive(ctx context.Context, id string) (bool, error) {
	return NodeAlive(ctx, n.pool, id)
}
