package pgdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NodesPart is the node registry's name in meta_schema.
const NodesPart = "nodes"

var nodeMigrations = []string{
	`CREATE TABLE meta_nodes (
		id        text COLLATE "C" PRIMARY KEY,
		host      text NOT NULL,
		pid       bigint NOT NULL,
		program   text NOT NULL,
		endpoints text NOT NULL,
		started   timestamptz NOT NULL,
		heartbeat timestamptz NOT NULL,
		expires   timestamptz NOT NULL
	)`,
}

// Defaults of NodeOptions.
const (
	DefaultHeartbeat = 2 * time.Second
	DefaultExpiry    = 10 * time.Second
	// nodeForget is how long an expired node stays listed (as expired)
	// before a registration removes its row.
	nodeForget = time.Hour
)

// NodeInfo describes a node for the registry.
type NodeInfo struct {
	Host      string
	PID       int
	Program   string // "blobshare serve"
	Endpoints string // where it serves, for people: "queue=http://…, table=http://…"
}

// NodeOptions tune RegisterNode.
type NodeOptions struct {
	Heartbeat time.Duration // between heartbeats (default DefaultHeartbeat)
	Expiry    time.Duration // a node is dead this long after its last heartbeat (default DefaultExpiry)
	Logger    *slog.Logger
}

// Node is this process's row in the node registry, kept alive by a
// heartbeat goroutine until Close (see the package doc).
type Node struct {
	pool *pgxpool.Pool
	info NodeInfo
	o    NodeOptions
	log  *slog.Logger

	mu sync.Mutex
	id string

	stop chan struct{}
	done chan struct{}
}

// RegisterNode migrates the registry of schema, adds this node's row and
// starts its heartbeats.
func RegisterNode(ctx context.Context, pool *pgxpool.Pool, schema string, info NodeInfo, o NodeOptions) (*Node, error) {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Expiry <= 0 {
		o.Expiry = DefaultExpiry
	}
	if err := Migrate(ctx, pool, schema, NodesPart, nodeMigrations); err != nil {
		return nil, err
	}
	n := &Node{pool: pool, info: info, o: o, log: o.Logger, stop: make(chan struct{}), done: make(chan struct{})}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if err := n.register(ctx); err != nil {
		return nil, err
	}
	go n.beat()
	return n, nil
}

// ID is the node's id in the registry (a new one after its heartbeat
// expired).
func (n *Node) ID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.id
}

// register inserts a row under a new id, the expiry on the database's
// clock, and forgets nodes expired for longer than nodeForget.
func (n *Node) register(ctx context.Context) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	err := Retry(ctx, func() error {
		_, err := n.pool.Exec(ctx, `WITH gone AS (DELETE FROM meta_nodes WHERE expires < now() - $7 * interval '1 millisecond')
			INSERT INTO meta_nodes(id, host, pid, program, endpoints, started, heartbeat, expires)
			VALUES ($1, $2, $3, $4, $5, now(), now(), now() + $6 * interval '1 millisecond')`,
			id, n.info.Host, n.info.PID, n.info.Program, n.info.Endpoints, n.o.Expiry.Milliseconds(), nodeForget.Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("register node: %w", Classify(err))
	}
	n.mu.Lock()
	n.id = id
	n.mu.Unlock()
	return nil
}

// beat renews the row every Heartbeat until Close. A heartbeat that finds
// the row expired (the node was cut off or paused past its expiry) does
// not bring it back: the node registers again under a new id, so that
// what the others concluded from its death stays true.
func (n *Node) beat() {
	defer close(n.done)
	t := time.NewTicker(n.o.Heartbeat)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.o.Heartbeat)
		tag, err := n.pool.Exec(ctx, `UPDATE meta_nodes SET heartbeat = now(), expires = now() + $2 * interval '1 millisecond'
			WHERE id = $1 AND expires > now()`, n.ID(), n.o.Expiry.Milliseconds())
		if err == nil && tag.RowsAffected() == 0 {
			old := n.ID()
			if err = n.register(ctx); err == nil {
				n.log.Warn("node heartbeat had expired; registered again under a new id", "old", old, "node", n.ID())
			}
		}
		cancel()
		switch {
		case err != nil && !failing:
			n.log.Warn("node heartbeat failed", "node", n.ID(), "err", Classify(err))
			failing = true
		case err == nil && failing:
			n.log.Info("node heartbeat renewed", "node", n.ID())
			failing = false
		}
	}
}

// Close stops the heartbeats and removes the node's row (best effort: a
// row left behind expires).
func (n *Node) Close(ctx context.Context) error {
	close(n.stop)
	<-n.done
	if _, err := n.pool.Exec(ctx, `DELETE FROM meta_nodes WHERE id = $1`, n.ID()); err != nil {
		return fmt.Errorf("unregister node %s: %w", n.ID(), Classify(err))
	}
	return nil
}

// NodeStatus is a registered node as the database sees it now.
type NodeStatus struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Program   string    `json:"program"`
	Endpoints string    `json:"endpoints"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	Expires   time.Time `json:"expires"`
	// Alive: the expiry is still ahead on the database's clock.
	Alive bool `json:"alive"`
	// Now is the database's clock when read (ages are against it, not
	// the reader's clock).
	Now time.Time `json:"-"`
}

// Nodes lists the registry of the pool's schema, oldest first (none when
// no node ever registered).
func Nodes(ctx context.Context, pool *pgxpool.Pool) ([]NodeStatus, error) {
	rows, err := pool.Query(ctx, `SELECT id, host, pid, program, endpoints, started, heartbeat, expires, expires > now(), now()
		FROM meta_nodes ORDER BY started, id`)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table: no node ever registered
			return nil, nil
		}
		return nil, fmt.Errorf("list nodes: %w", Classify(err))
	}
	nodes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (NodeStatus, error) {
		var s NodeStatus
		err := r.Scan(&s.ID, &s.Host, &s.PID, &s.Program, &s.Endpoints, &s.Started, &s.Heartbeat, &s.Expires, &s.Alive, &s.Now)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", Classify(err))
	}
	return nodes, nil
}
