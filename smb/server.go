package smb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// FileSystem is what the server needs of package fs.
type FileSystem interface {
	OpenEntry(ctx context.Context, req fs.OpenEntryRequest) (*fs.Handle, fs.Attr, fs.OpenAction, error)
	GetShare(ctx context.Context, name string) (fs.Attr, error)
	ListEntries(ctx context.Context, dir fs.FileID) ([]fs.Attr, error)
	Lookup(ctx context.Context, parent fs.FileID, name string) (fs.Attr, error)
	Setattr(ctx context.Context, id fs.FileID, req fs.SetattrRequest) (fs.Attr, error)
	StatFS(ctx context.Context) (fs.StatFS, error)
	PermissionOf(ctx context.Context, id fs.FileID) (sddl string, err error)
}

var _ FileSystem = (*fs.FileSystem)(nil)

// Config configures a Server.
type Config struct {
	FS FileSystem
	// Account is the user name clients log on with (any domain); Key is
	// the password, the account key exactly as typed.
	Account, Key string
	// Logger receives connection-level logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SigningOptional lets clients that do not sign in; by default the
	// server requires signed messages once a session is set up.
	SigningOptional bool
	// EncryptData requires encryption (serve --smb-encrypt): sessions of
	// clients that cannot encrypt (SMB 2.x, or no common cipher) are
	// refused, and a session's unencrypted requests get
	// STATUS_ACCESS_DENIED. Without it, a client that encrypts its
	// requests gets encrypted responses.
	EncryptData bool
	// Caching is the lock table oplocks and leases are granted, broken
	// and acknowledged in (lease.go): with it the server announces
	// SMB2_GLOBAL_CAP_LEASING (2.1 and later) and grants what MS-SMB2 and
	// MS-FSA allow; nil grants none (every CREATE answers oplock level
	// none). Pass the FileSystem's lock table.
	Caching *locks.Table
	// BreakTimeout is how long a break that needs an acknowledgment waits
	// before it completes to none; 0 means locks.DefaultBreakTimeout (35 s).
	BreakTimeout time.Duration
}

// Server serves SMB2/3 on listeners. Every file share of the FileSystem is
// an SMB share of the same name; IPC$ exists for clients that probe it.
type Server struct {
	cfg        Config
	log        *slog.Logger
	now        func() time.Time
	guid       [16]byte
	started    time.Time
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	mu         sync.Mutex
	listeners  map[net.Listener]struct{}
	conns      map[*conn]struct{}
	nextSessID uint64
	closed     bool
	// sessions holds every session by id, for binding connections
	// (channel.go).
	sessions map[uint64]*session

	// readBufs pools the buffers READs are read into and answered from
	// (*[]byte of readBufSize; fileio.go).
	readBufs sync.Pool

	// caches maps this process's cached opens and leases to their
	// connections, for break notifications (lease.go).
	caches cacheHolders
	// clients lists each client's connections, for lease breaks
	// (clientconns.go).
	clients clientConns
	// durables holds the durable opens and the replay cache
	// (durable.go); nextPersistent numbers persistent file ids.
	durables       durableOpens
	nextPersistent atomic.Uint64
	// notify holds the watched directory opens (CHANGE_NOTIFY, notify.go).
	notify notifyState
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("smb: server closed")

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.FS == nil || cfg.Account == "" {
		return nil, errors.New("smb: Config needs FS and Account")
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now,
		listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}, sessions: map[uint64]*session{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now()
	if _, err := rand.Read(s.guid[:]); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.durables.init()
	s.notify.init()
	if n, ok := cfg.FS.(Notifier); ok {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.deliverNotices(s.ctx, n)
		}()
	}
	if cfg.Caching != nil {
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			s.deliverBreaks(s.ctx)
		}()
		go func() {
			defer s.wg.Done()
			s.scavenge(s.ctx)
		}()
	}
	return s, nil
}

// Serve accepts connections on ln until Close (ErrServerClosed) or an
// accept error. Each connection is served on a goroutine of its own that
// Close stops and waits for.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.listeners, ln)
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve(s.ctx)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops the listeners, closes every connection (closing its open
// handles) and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	// Disconnected durable opens end with the server: durable, not
	// persistent.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.closeDurables(ctx)
	return nil
}

// newSessionID returns a fresh nonzero session id.
func (s *Server) newSessionID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextSessID++
	// Spread ids out so that one connection's guesses do not hit another's
	// session by counting: the top half is random per server.
	return uint64(s.guid[0])<<56 | uint64(s.guid[1])<<48 | uint64(s.guid[2])<<40 | s.nextSessID
}

// closeOpen closes o's handle (committing its writes). The fake quota
// file has no handle.
func (s *Server) closeOpen(ctx context.Context, o *open) error {
	if o.quota {
		return nil
	}
	s.unwatch(ctx, o)
	err := o.h.Close(o.parentCtx(ctx))
	s.dropCache(ctx, o)
	s.forgetDurable(ctx, o)
	if err != nil {
		return fmt.Errorf("smb: closing %s: %w", o.path, err)
	}
	return nil
}
