package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/storagehttp"
)

// httpEndpoint is an Azure service serve runs over HTTP on a listener of
// its own (FileREST, Blob, Queue, Table): its server, the store it closes
// after the server stops (nil: none), and the error that stopped serving.
// One turned off serves nothing.
type httpEndpoint struct {
	name    string // "blob", "queue": names its errors
	url     string // http://ADDR/ACCOUNT, or "off"
	srv     *http.Server
	store   io.Closer
	serveFn chan error
}

// offEndpoint is an endpoint whose flag said off.
func offEndpoint(name string) *httpEndpoint { return &httpEndpoint{name: name, url: "off"} }

// serveEndpoint serves h on ln until shutdown, logging failed requests at
// debug as FileREST does. readTimeout bounds a whole request; 0 means
// none, for services whose bodies stream (a Put Blob may be gigabytes
// and holds no memory while a slow client sends it).
func serveEndpoint(name string, ln net.Listener, account string, h http.Handler, store io.Closer, readTimeout time.Duration, logger *slog.Logger) *httpEndpoint {
	e := &httpEndpoint{
		name:  name,
		url:   endpointURL(ln, account),
		store: store,
		srv: storagehttp.NewServer(logFailedRequests(h, logger, slog.LevelDebug), readTimeout,
			slog.NewLogLogger(logger.Handler(), slog.LevelWarn)),
		serveFn: make(chan error, 1),
	}
	go func() { e.serveFn <- e.srv.Serve(ln) }()
	return e
}

// failed delivers the error that stopped serving (a listener failure);
// when off, a channel that never delivers.
func (e *httpEndpoint) failed() <-chan error { return e.serveFn }

// shutdown stops accepting, waits for in-flight requests (until ctx
// ends) and closes the store.
func (e *httpEndpoint) shutdown(ctx context.Context) error {
	if e.srv == nil {
		return nil
	}
	err := e.srv.Shutdown(ctx)
	if err != nil {
		err = fmt.Errorf("%s shutdown: %w", e.name, err)
		e.srv.Close()
	}
	if e.store != nil {
		err = errors.Join(err, e.store.Close())
	}
	return err
}

// stop shuts the endpoint down within shutdownGrace, logging a failure
// (for a deferred stop, when serve's return value is taken already).
func (e *httpEndpoint) stop(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := e.shutdown(ctx); err != nil {
		logger.Error("stopping the "+e.name+" service", "err", err)
	}
}

// startStoreEndpoint is the start of an Azure service that keeps its
// state in a store of its own in the data directory (Queue, Table): it
// listens on --flag (off: an endpoint that serves nothing), then open
// opens the store and builds the service's handler over it. What it
// opened is closed again if a later step fails; the endpoint closes the
// store after its server stops. readTimeout bounds a whole request.
func startStoreEndpoint(c *cli.Context, name, flag string, readTimeout time.Duration, logger *slog.Logger,
	open func() (io.Closer, http.Handler, error)) (*httpEndpoint, error) {
	if c.String(flag) == "off" {
		return offEndpoint(name), nil
	}
	ln, err := listenHTTP(c, flag)
	if err != nil {
		return nil, err
	}
	store, handler, err := open()
	if err != nil {
		ln.Close()
		return nil, err
	}
	return serveEndpoint(name, ln, c.String("account"), productStyle(c, handler), store, readTimeout, logger), nil
}
