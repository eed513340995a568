package pgdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/blobshare/blobshare/meta"
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
		expires   timestamptz NOT NULL,
		lock_key  bigint NOT NULL
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

// NodeOptions tune RegisterNode. A node fences itself when no heartbeat
// succeeded for Expiry − Expiry/5 (Deciding), so Heartbeat must be well
// below that for a healthy node to keep deciding (the defaults: 2 s
// against 8 s).
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

	// lock is the connection holding the node's session advisory lock,
	// and running its heartbeats; nil after it failed, until the next
	// heartbeat connects again. Only register and beat use it (one at a
	// time: register runs before beat starts, then only inside it).
	lock   *pgx.Conn
	schema string

	// sent is when (on this process's monotonic clock) the last
	// heartbeat or registration that succeeded was sent; lost is set
	// while the lock connection is known lost. Either fences the node
	// (Deciding).
	sent atomic.Pointer[time.Time]
	lost atomic.Bool

	ctx      context.Context // the heartbeats' life, cancelled by Close
	cancel   context.CancelFunc
	haltOnce sync.Once
	done     chan struct{}
}

// ErrFenced is Deciding's answer while the node may have been judged
// dead by the others: it is meta.ErrUnavailable too (requests answer
// busy, 503).
var ErrFenced = fmt.Errorf("node fenced: its heartbeat or session lock is not current: %w", meta.ErrUnavailable)

// fenceMargin is how long before its expiry (on its own clock) a node
// stops deciding: the expiry the others judge by is counted from when
// the database ran the heartbeat, later than when it was sent, so the
// node stops at least a margin before any other node can think it dead.
func (o NodeOptions) fenceMargin() time.Duration { return o.Expiry / 5 }

// Deciding reports whether the node may decide (claim, write under a
// claim): nil, or ErrFenced when its lock connection is lost or its last
// successful heartbeat was sent more than Expiry − Expiry/5 ago by the
// process's monotonic clock (8 s at the default 10 s). It holds until a
// heartbeat succeeds again or the node registers under a new id.
func (n *Node) Deciding() error {
	if n.lost.Load() {
		return fmt.Errorf("node %s: session lock lost: %w", n.ID(), ErrFenced)
	}
	if sent := n.sent.Load(); sent == nil || time.Since(*sent) > n.o.Expiry-n.o.fenceMargin() {
		return fmt.Errorf("node %s: no heartbeat for %s: %w", n.ID(), n.o.Expiry-n.o.fenceMargin(), ErrFenced)
	}
	return nil
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
	n := &Node{pool: pool, info: info, o: o, log: o.Logger, schema: schema, done: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if err := n.register(ctx); err != nil {
		n.cancel()
		n.dropLock()
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

// nodeLockKey is the session advisory lock of node id in schema.
func nodeLockKey(schema, id string) int64 { return Key(schema, "node", id) }

// register takes the session lock of a new id on the lock connection
// (connecting it if needed, and letting go of the previous id's lock),
// then inserts the row, the expiry on the database's clock, marks the
// previous id's row expired (whatever happens later, a database restart
// included, the old id stays dead: it is never renewed or re-inserted),
// and forgets nodes expired for longer than nodeForget.
func (n *Node) register(ctx context.Context) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	key := nodeLockKey(n.schema, id)
	n.mu.Lock()
	info, old := n.info, n.id
	n.mu.Unlock()
	if err := n.connectLock(ctx); err != nil {
		return fmt.Errorf("register node: %w", err)
	}
	if _, err := n.lock.Exec(ctx, `SELECT pg_advisory_unlock_all(), pg_advisory_lock($1)`, key); err != nil {
		n.dropLock()
		return fmt.Errorf("register node: %w", Classify(err))
	}
	sent := time.Now()
	_, err := n.lock.Exec(ctx, `WITH gone AS (DELETE FROM meta_nodes WHERE expires < now() - $7 * interval '1 millisecond'),
		dead AS (UPDATE meta_nodes SET expires = least(expires, now()) WHERE id = $9)
		INSERT INTO meta_nodes(id, host, pid, program, endpoints, started, heartbeat, expires, lock_key)
		VALUES ($1, $2, $3, $4, $5, now(), now(), now() + $6 * interval '1 millisecond', $8)`,
		id, info.Host, info.PID, info.Program, info.Endpoints, n.o.Expiry.Milliseconds(), nodeForget.Milliseconds(), key, old)
	if err != nil {
		n.dropLock()
		return fmt.Errorf("register node: %w", Classify(err))
	}
	n.mu.Lock()
	n.id = id
	n.mu.Unlock()
	n.sent.Store(&sent)
	n.lost.Store(false)
	return nil
}

// SetEndpoints records where the node serves (NodeInfo.Endpoints), for a
// node registered before its endpoints listened: its claims need an
// owner before the endpoints start (a Blob endpoint recovers dead
// owners' commits first). A registration under a new id keeps them.
func (n *Node) SetEndpoints(ctx context.Context, endpoints string) error {
	n.mu.Lock()
	n.info.Endpoints = endpoints
	id := n.id
	n.mu.Unlock()
	if _, err := n.pool.Exec(ctx, `UPDATE meta_nodes SET endpoints = $1 WHERE id = $2`, endpoints, id); err != nil {
		return fmt.Errorf("node %s: record endpoints: %w", id, Classify(err))
	}
	return nil
}

// connectLock gives the node its lock connection if it has none: a new
// connection of its own, with the pool's settings, never one of the
// pool's (it holds a session lock, which must not go back to other
// users; and after its session was cut, a pooled connection may be one
// whose backend is about to end too).
func (n *Node) connectLock(ctx context.Context) error {
	if n.lock != nil && !n.lock.IsClosed() {
		return nil
	}
	c, err := pgx.ConnectConfig(ctx, n.pool.Config().ConnConfig.Copy())
	if err != nil {
		return Classify(err)
	}
	n.lock = c
	return nil
}

func (n *Node) dropLock() {
	n.lost.Store(true)
	if n.lock == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n.lock.Close(ctx)
	n.lock = nil
}

// heartbeat renews the row on the lock connection. A lost lock
// connection is connected again; the node keeps its id only if its row
// is unexpired and its last heartbeat is older than the server's start
// (a database restart freed the lock: nobody could judge the node dead
// by it, NodeAlive) and it gets its lock back. Otherwise (its session was
// cut while the server ran on, so the others may have judged it dead and
// taken over what it held; or its row expired, as when it was paused or
// cut off past its expiry; or another session holds its lock) it
// registers again under a new id, so that what the others concluded from
// its death stays true.
func (n *Node) heartbeat(ctx context.Context) error {
	had := n.lock != nil && !n.lock.IsClosed()
	err := n.heartbeatOnce(ctx)
	if had && errors.Is(err, meta.ErrUnavailable) {
		// The connection died since the last heartbeat (the server
		// restarted): connect again now rather than a beat later.
		err = n.heartbeatOnce(ctx)
	}
	return err
}

func (n *Node) heartbeatOnce(ctx context.Context) error {
	if n.lock == nil || n.lock.IsClosed() {
		n.lost.Store(true)
		if err := n.connectLock(ctx); err != nil {
			return err
		}
		var keep bool
		err := n.lock.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM meta_nodes
			WHERE id = $1 AND expires > now() AND heartbeat < pg_postmaster_start_time())`, n.ID()).Scan(&keep)
		if err == nil && keep {
			err = n.lock.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, nodeLockKey(n.schema, n.ID())).Scan(&keep)
		}
		if err != nil {
			n.dropLock()
			return Classify(err)
		}
		if !keep { // cut off in this incarnation, expired, or its lock held elsewhere
			return n.reregister(ctx)
		}
	}
	sent := time.Now()
	tag, err := n.lock.Exec(ctx, `UPDATE meta_nodes SET heartbeat = now(), expires = now() + $2 * interval '1 millisecond'
		WHERE id = $1 AND expires > now()`, n.ID(), n.o.Expiry.Milliseconds())
	if err != nil {
		n.dropLock()
		return Classify(err)
	}
	if tag.RowsAffected() == 0 {
		return n.reregister(ctx)
	}
	n.sent.Store(&sent)
	n.lost.Store(false)
	return nil
}

func (n *Node) reregister(ctx context.Context) error {
	old := n.ID()
	if err := n.register(ctx); err != nil {
		return err
	}
	n.log.Warn("node lost its session or its heartbeat expired; registered again under a new id", "old", old, "node", n.ID())
	return nil
}

// beat runs a heartbeat every Heartbeat until Close; after a failed one
// it tries again every Heartbeat/8, so that once the database is back the
// node holds its lock again soon (until then status shows it KILLED).
// Between heartbeats it waits on the lock connection, so that the
// connection's loss (its backend terminated, the server gone) fences the
// node and is repaired at once rather than at the next heartbeat.
func (n *Node) beat() {
	defer close(n.done)
	failing := false
	next := n.o.Heartbeat
	for {
		if !n.watch(time.Now().Add(next)) {
			n.lost.Store(true)
		}
		if n.ctx.Err() != nil {
			return
		}
		// A heartbeat cut short loses the lock connection (pgx closes a
		// connection whose statement it interrupts), so it may take up to
		// half the expiry, however short the interval.
		ctx, cancel := context.WithTimeout(n.ctx, n.o.Expiry/2)
		err := n.heartbeat(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			n.log.Warn("node heartbeat failed", "node", n.ID(), "err", err)
			failing = true
		case err == nil && failing:
			n.log.Info("node heartbeat renewed", "node", n.ID())
			failing = false
		}
		next = n.o.Heartbeat
		if failing {
			next /= 8
		}
	}
}

// watch waits until deadline or Close, reading the idle lock connection
// meanwhile: false when it was lost (the server sends a FATAL error to a
// terminated backend's client, or the socket closes). Without a
// connection it just waits.
func (n *Node) watch(deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(n.ctx, deadline)
	defer cancel()
	if n.lock == nil || n.lock.IsClosed() {
		<-ctx.Done()
		return false
	}
	// No LISTEN on this connection: nothing but an error ends the wait
	// before the deadline (pgx's default context handling sets a read
	// deadline, which leaves the connection usable).
	err := n.lock.PgConn().WaitForNotification(ctx)
	if ctx.Err() != nil && !n.lock.IsClosed() {
		return true
	}
	if err == nil {
		return true
	}
	n.log.Warn("node lost its session lock connection; fenced until it registers again", "node", n.ID(), "err", err)
	n.dropLock()
	return false
}

// halt stops the heartbeats and waits for them (once).
func (n *Node) halt() {
	n.haltOnce.Do(func() {
		n.cancel()
		<-n.done
	})
}

// Close stops the heartbeats, removes the node's row (best effort: a row
// left behind expires) and closes the lock connection.
func (n *Node) Close(ctx context.Context) error {
	n.halt()
	defer n.dropLock()
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
	// Expired: the expiry has passed on the database's clock.
	Expired bool `json:"expired"`
	// LockHeld: the node's database session (its lock connection) is
	// there. A killed node's session ends at once, so its lock is free
	// within milliseconds, long before its heartbeat expires.
	LockHeld bool `json:"lock_held"`
	// Alive: not expired and the lock held.
	Alive bool `json:"alive"`
	// Now is the database's clock when read (ages are against it, not
	// the reader's clock).
	Now time.Time `json:"-"`
}

// Nodes lists the registry of the pool's schema, oldest first (none when
// no node ever registered).
func Nodes(ctx context.Context, pool *pgxpool.Pool) ([]NodeStatus, error) {
	// pg_locks shows a bigint advisory key's high half in classid, its
	// low half in objid, and objsubid 1.
	rows, err := pool.Query(ctx, `SELECT n.id, n.host, n.pid, n.program, n.endpoints, n.started, n.heartbeat, n.expires,
			n.expires <= now(), EXISTS (SELECT 1 FROM pg_locks l
				WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
				AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND l.classid = ((n.lock_key >> 32) & 4294967295)::oid AND l.objid = (n.lock_key & 4294967295)::oid),
			now()
		FROM meta_nodes n ORDER BY n.started, n.id`)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table: no node ever registered
			return nil, nil
		}
		return nil, fmt.Errorf("list nodes: %w", Classify(err))
	}
	nodes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (NodeStatus, error) {
		var s NodeStatus
		err := r.Scan(&s.ID, &s.Host, &s.PID, &s.Program, &s.Endpoints, &s.Started, &s.Heartbeat, &s.Expires, &s.Expired, &s.LockHeld, &s.Now)
		s.Alive = !s.Expired && s.LockHeld
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", Classify(err))
	}
	return nodes, nil
}
