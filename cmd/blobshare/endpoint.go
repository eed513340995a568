package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/internal/endpoint"
	"github.com/blobshare/blobshare/storagehttp"
)

// httpEndpoint is an Azure service serve runs over HTTP on a listener of
// its own (FileREST, Blob, Queue, Table), built but not serving until
// serve hands it to the supervisor (supervise). One turned off serves
// nothing.
type httpEndpoint struct {
	url string         // http://ADDR/ACCOUNT, or "off"
	ep  *endpoint.HTTP // nil when off
	ln  net.Listener
}

// offEndpoint is an endpoint whose flag said off.
func offEndpoint(name string) *httpEndpoint { return &httpEndpoint{url: "off"} }

// serveEndpoint is the endpoint that serves h on ln, named name in its
// errors ("blob", "queue"), logging failed requests at debug as FileREST
// does, and closing store (nil: none) once its server has stopped.
// readTimeout bounds a whole request; 0 means none, for services whose
// bodies stream (a Put Blob may be gigabytes and holds no memory while a
// slow client sends it).
func serveEndpoint(name string, ln net.Listener, account string, h http.Handler, store io.Closer, readTimeout time.Duration, logger *slog.Logger) *httpEndpoint {
	return &httpEndpoint{
		url: endpointURL(ln, account),
		ln:  ln,
		ep: &endpoint.HTTP{Label: name, Store: store,
			Server: storagehttp.NewServer(logFailedRequests(h, logger, slog.LevelDebug), readTimeout,
				slog.NewLogLogger(logger.Handler(), slog.LevelWarn))},
	}
}

// bound is what the supervisor runs: nothing when off.
func (e *httpEndpoint) bound() []endpoint.Bound {
	if e.ep == nil {
		return nil
	}
	return []endpoint.Bound{{Endpoint: e.ep, Listener: e.ln}}
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
