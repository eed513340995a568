package pgdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Wake says why Subscription.Wait returned: in every case the waiter
// re-checks what it waits for.
type Wake int

const (
	// Notified: a committed transaction notified the subscription's key.
	Notified Wake = iota + 1
	// Resumed: the listener (re)connected, so notifications committed
	// while it was away may have been missed (PostgreSQL does not replay
	// them).
	Resumed
	// Polled: the polling interval passed without a notification (the
	// fallback for a notification that never came).
	Polled
)

func (w Wake) String() string {
	switch w {
	case Notified:
		return "notified"
	case Resumed:
		return "resumed"
	case Polled:
		return "polled"
	}
	return fmt.Sprintf("Wake(%d)", int(w))
}

// ErrUnknownChannel: Subscribe named a channel the Listener was not
// opened with (LISTEN runs for the configured channels only).
var ErrUnknownChannel = errors.New("channel not listened to")

// MaxKeyLen bounds a wake-up key: PostgreSQL's payload limit is 8,000
// bytes.
const MaxKeyLen = 7900

// ListenerOptions tune NewListener.
type ListenerOptions struct {
	// Channels are the channels listened to (names within the schema).
	Channels []string
	// Poll is how long a Wait waits for a notification before it returns
	// Polled (default DefaultPoll).
	Poll time.Duration
	// NoListen turns LISTEN off: every Wait polls (a server without
	// LISTEN/NOTIFY, such as CockroachDB).
	NoListen bool
	// Idle is how long the connection may be silent before the listener
	// checks it with a query (default 30 s): a server that vanished
	// without closing the connection is noticed then.
	Idle   time.Duration
	Logger *slog.Logger
}

// DefaultPoll is the polling fallback's interval.
const DefaultPoll = time.Second

// Listener is a process's one LISTEN connection: it reconnects after an
// outage, wakes the subscribers of a (channel, key) when a transaction
// that called Notify for it commits, and wakes every subscriber when it
// reconnects. See the package doc.
type Listener struct {
	cfg    *pgx.ConnConfig
	schema string
	o      ListenerOptions
	log    *slog.Logger
	names  map[string]string // PostgreSQL channel → channel

	mu   sync.Mutex
	subs map[subKey]map[*Subscription]struct{}

	connected atomic.Bool
	sessions  atomic.Int64 // connections made so far
	cancel    context.CancelFunc
	done      chan struct{}
}

type subKey struct{ channel, key string }

// NewListener starts the listener of schema on connString (connecting in
// the background: Wait polls until it has); Close stops it.
func NewListener(connString, schema string, o ListenerOptions) (*Listener, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("listener: parse connection string: %w", err)
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "blobshare-listener"
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Idle <= 0 {
		o.Idle = 30 * time.Second
	}
	l := &Listener{cfg: cfg, schema: schema, o: o, log: o.Logger, names: map[string]string{},
		subs: map[subKey]map[*Subscription]struct{}{}, done: make(chan struct{})}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	for _, ch := range o.Channels {
		l.names[ChannelName(schema, ch)] = ch
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	if o.NoListen {
		close(l.done)
		return l, nil
	}
	go l.run(ctx)
	return l, nil
}

// ChannelName is the PostgreSQL channel of channel in schema: a hash, so
// that deployments in several schemas of one database (channels are
// database-wide) do not wake each other, and any name fits the 63-byte
// identifier limit.
func ChannelName(schema, channel string) string {
	return fmt.Sprintf("blobshare_%016x", uint64(Key(schema, "channel", channel)))
}

// Notify makes the transaction tx (any pgx query runner inside it) wake
// the subscribers of (channel, key) on every node when it commits;
// nothing happens if it rolls back, and several notifies of one key in a
// transaction wake once.
func Notify(ctx context.Context, tx interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, schema, channel, key string) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("notify %s: key of %d bytes, at most %d", channel, len(key), MaxKeyLen)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ChannelName(schema, channel), key); err != nil {
		return fmt.Errorf("notify %s: %w", channel, Classify(err))
	}
	return nil
}

// Connected says whether the listener holds a listening connection now.
func (l *Listener) Connected() bool { return l.connected.Load() }

// Close stops the listener and waits for its goroutine; subscriptions
// still open only poll from then on.
func (l *Listener) Close() error {
	l.cancel()
	<-l.done
	return nil
}

// Subscription is one waiter's interest in a (channel, key). Subscribe
// before checking the condition waited for, so that a commit after the
// check wakes the Wait after it.
type Subscription struct {
	l    *Listener
	k    subKey
	wake chan Wake // one pending wake-up; more coalesce into it
}

// Subscribe registers interest in (channel, key) until Close.
func (l *Listener) Subscribe(channel, key string) (*Subscription, error) {
	if _, ok := l.names[ChannelName(l.schema, channel)]; !ok {
		return nil, fmt.Errorf("subscribe %s: %w", channel, ErrUnknownChannel)
	}
	s := &Subscription{l: l, k: subKey{channel, key}, wake: make(chan Wake, 1)}
	l.mu.Lock()
	defer l.mu.Unlock()
	set := l.subs[s.k]
	if set == nil {
		set = map[*Subscription]struct{}{}
		l.subs[s.k] = set
	}
	set[s] = struct{}{}
	return s, nil
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	if set := s.l.subs[s.k]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(s.l.subs, s.k)
		}
	}
}

// Wait blocks until a wake-up for the subscription (one that came since
// the last Wait counts), the polling interval, or ctx's end.
func (s *Subscription) Wait(ctx context.Context) (Wake, error) {
	t := time.NewTimer(s.l.o.Poll)
	defer t.Stop()
	select {
	case w := <-s.wake:
		return w, nil
	case <-t.C:
		return Polled, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *Subscription) post(w Wake) {
	select {
	case s.wake <- w:
	default: // one pending wake-up is enough: the waiter re-checks
	}
}

// wakeAll wakes every subscriber (after a reconnection).
func (l *Listener) wakeAll(w Wake) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.subs {
		for s := range set {
			s.post(w)
		}
	}
}

func (l *Listener) dispatch(n *pgconn.Notification) {
	ch, ok := l.names[n.Channel]
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.subs[subKey{ch, n.Payload}] {
		s.post(Notified)
	}
}

// run keeps a listening connection until ctx ends, reconnecting with a
// backoff (10 ms doubling to 1 s) after each loss.
func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := 10 * time.Millisecond
	down := false
	for {
		listened, err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff = 10 * time.Millisecond
		}
		if !down || listened {
			l.log.Warn("wake-up listener lost its connection; waits poll until it is back", "err", err)
			down = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// session connects, listens to every channel, wakes every subscriber
// (notifications may have been missed before) and dispatches
// notifications until the connection fails; listened says whether it got
// that far.
func (l *Listener) session(ctx context.Context) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return false, Classify(err)
	}
	defer func() {
		l.connected.Store(false)
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	for name := range l.names {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{name}.Sanitize()); err != nil {
			return false, Classify(err)
		}
	}
	l.connected.Store(true)
	if l.sessions.Add(1) > 1 {
		l.log.Info("wake-up listener connected again")
	}
	l.wakeAll(Resumed)
	for {
		wctx, cancel := context.WithTimeout(ctx, l.o.Idle)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			l.dispatch(n)
			continue
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			// Silence: make sure the server is still there.
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = conn.Exec(pctx, `SELECT 1`)
			cancel()
			if err == nil {
				continue
			}
		}
		return true, Classify(err)
	}
}
