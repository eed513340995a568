package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// blobAddrFlag is serve's --blob-addr (cli-contract.md).
func blobAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "blob-addr", Value: "127.0.0.1:10000",
		Usage: "Blob service listen address, path-style http://ADDR/ACCOUNT/CONTAINER/BLOB (off disables it)"}
}

// blobEndpoint is serve's running Blob service: its listener, HTTP server
// and the SQLite metadata store (blob.db in --data); content goes to the
// data directory's blob store (--blob-backend).
type blobEndpoint struct {
	url     string // http://ADDR/ACCOUNT, or "off"
	srv     *http.Server
	store   *sqlstore.Store
	serveFn chan error
}

// startBlob listens on --blob-addr and serves the Blob service over
// dataPath/blob.db and content; addr "off" gives an endpoint that serves
// nothing.
func startBlob(ctx context.Context, c *cli.Context, dataPath string, content blobstore.Store, logger *slog.Logger) (*blobEndpoint, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return &blobEndpoint{url: "off"}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--blob-addr: %w", err)
	}
	store, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		ln.Close()
		return nil, err
	}
	svc := blobsvc.New(store, content, nil)
	// Commits a crash interrupted between content and metadata are
	// finished (or dropped) before the first request.
	if n, err := svc.Recover(ctx); err != nil {
		ln.Close()
		store.Close()
		return nil, fmt.Errorf("blob service recovery: %w", err)
	} else if n > 0 {
		logger.Info("blob service finished interrupted commits", "count", n)
	}
	handler, err := blob.New(blob.Config{
		Service:     svc,
		Account:     c.String("account"),
		Key:         c.String("key"),
		DisableAuth: c.Bool("no-auth"),
		Logger:      logger,
	})
	if err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	b := &blobEndpoint{
		url:   fmt.Sprintf("http://%s/%s", ln.Addr(), c.String("account")),
		store: store,
		srv: &http.Server{
			Handler:           logFailedRequests(handler, logger, slog.LevelDebug),
			ReadHeaderTimeout: 30 * time.Second,
			// No ReadTimeout: a Put Blob body may be gigabytes; it streams
			// into the content store, so a slow client holds no memory.
			IdleTimeout:    2 * time.Minute,
			MaxHeaderBytes: 1 << 20,
			ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		serveFn: make(chan error, 1),
	}
	go func() { b.serveFn <- b.srv.Serve(ln) }()
	return b, nil
}

// failed delivers the error that stopped serving (a listener failure);
// nil when off, a channel that never delivers.
func (b *blobEndpoint) failed() <-chan error { return b.serveFn }

// shutdown stops accepting, waits for in-flight requests (until ctx
// ends) and closes the store.
func (b *blobEndpoint) shutdown(ctx context.Context) error {
	if b.srv == nil {
		return nil
	}
	err := b.srv.Shutdown(ctx)
	if err != nil {
		err = fmt.Errorf("blob shutdown: %w", err)
		b.srv.Close()
	}
	return errors.Join(err, b.store.Close())
}

// stopBlob shuts the Blob service down within shutdownGrace, logging a
// failure (serve's return value is taken by then).
func stopBlob(b *blobEndpoint, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := b.shutdown(ctx); err != nil {
		logger.Error("stopping the blob service", "err", err)
	}
}
