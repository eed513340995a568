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

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/msgqueue/sqlstore"
	"github.com/blobshare/blobshare/queue"
)

// queueAddrFlag is serve's --queue-addr (cli-contract.md).
func queueAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "queue-addr", Value: "127.0.0.1:10001",
		Usage: "Queue service listen address, path-style http://ADDR/ACCOUNT/QUEUE (off disables it)"}
}

// queueEndpoint is serve's running Queue service: its listener, HTTP
// server and the SQLite store (queue.db in --data).
type queueEndpoint struct {
	url     string // http://ADDR/ACCOUNT, or "off"
	srv     *http.Server
	store   *sqlstore.Store
	serveFn chan error
}

// startQueue listens on --queue-addr and serves the Queue service over
// dataPath/queue.db; addr "off" gives an endpoint that serves nothing.
func startQueue(ctx context.Context, c *cli.Context, dataPath string, logger *slog.Logger) (*queueEndpoint, error) {
	addr := c.String("queue-addr")
	if addr == "off" {
		return &queueEndpoint{url: "off"}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--queue-addr: %w", err)
	}
	store, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		ln.Close()
		return nil, err
	}
	handler, err := queue.New(queue.Config{
		Service:     msgqueue.New(store, nil),
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
	q := &queueEndpoint{
		url:   fmt.Sprintf("http://%s/%s", ln.Addr(), c.String("account")),
		store: store,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 30 * time.Second,
			ReadTimeout:       time.Minute, // bodies are at most a few hundred KiB
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    1 << 20,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		serveFn: make(chan error, 1),
	}
	go func() { q.serveFn <- q.srv.Serve(ln) }()
	return q, nil
}

// failed delivers the error that stopped serving (a listener failure);
// nil when off, a channel that never delivers.
func (q *queueEndpoint) failed() <-chan error { return q.serveFn }

// shutdown stops accepting, waits for in-flight requests (until ctx
// ends) and closes the store.
func (q *queueEndpoint) shutdown(ctx context.Context) error {
	if q.srv == nil {
		return nil
	}
	err := q.srv.Shutdown(ctx)
	if err != nil {
		err = fmt.Errorf("queue shutdown: %w", err)
		q.srv.Close()
	}
	return errors.Join(err, q.store.Close())
}
