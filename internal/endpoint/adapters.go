package endpoint

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// HTTP is an Azure service over HTTP (FileREST, Blob, Queue, Table): its
// server and the store it closes once the server has stopped (nil: none).
type HTTP struct {
	Label  string
	Server *http.Server
	Store  io.Closer
}

func (h *HTTP) Name() string { return h.Label }

// Serve serves ln until Shutdown (nil) or an accept error.
func (h *HTTP) Serve(ln net.Listener) error {
	err := h.Server.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, waits for requests in flight until ctx ends
// (then closes their connections) and closes the store.
func (h *HTTP) Shutdown(ctx context.Context) error {
	err := h.Server.Shutdown(ctx)
	if err != nil {
		h.Server.Close()
	}
	if h.Store != nil {
		err = errors.Join(err, h.Store.Close())
	}
	return err
}

// Closable is a server with its own accept loop: Serve returns Closed
// once Close has been called (smb.Server and smb.ErrServerClosed).
type Closable interface {
	Serve(ln net.Listener) error
	Close() error
}

// Server adapts a Closable. Shutdown closes it (which, for SMB, closes
// every connection and its opens) and ignores ctx: the server waits for
// its own connections.
type Server struct {
	Label  string
	Srv    Closable
	Closed error // what Srv.Serve returns after Close
}

func (s *Server) Name() string { return s.Label }

func (s *Server) Serve(ln net.Listener) error {
	err := s.Srv.Serve(ln)
	if s.Closed != nil && errors.Is(err, s.Closed) {
		return nil
	}
	return err
}

func (s *Server) Shutdown(context.Context) error { return s.Srv.Close() }

// Func is an endpoint with no listener that serves until it is shut down
// (the mount: it stops by unmounting). Serve ignores its listener; Stop
// is called once by Shutdown. Make one with NewFunc.
type Func struct {
	label   string
	stop    func() error
	stopped chan struct{}
	once    sync.Once
}

// NewFunc is an endpoint named label that Shutdown stops with stop.
func NewFunc(label string, stop func() error) *Func {
	return &Func{label: label, stop: stop, stopped: make(chan struct{})}
}

func (f *Func) Name() string { return f.label }

// Serve waits for Shutdown.
func (f *Func) Serve(net.Listener) error {
	<-f.stopped
	return nil
}

func (f *Func) Shutdown(context.Context) error {
	var err error
	f.once.Do(func() {
		err = f.stop()
		close(f.stopped)
	})
	return err
}
