package main

import (
	"context"
	"log/slog"
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

// startQueue listens on --queue-addr and serves the Queue service over
// dataPath/queue.db; addr "off" gives an endpoint that serves nothing.
func startQueue(ctx context.Context, c *cli.Context, dataPath string, logger *slog.Logger) (*httpEndpoint, error) {
	addr := c.String("queue-addr")
	if addr == "off" {
		return offEndpoint("queue"), nil
	}
	ln, err := listenHTTP(c, "queue-addr")
	if err != nil {
		return nil, err
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
		OAuth:       c.String("oauth") == "basic",
		Logger:      logger,
	})
	if err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	// Queue bodies are at most a few hundred KiB: a minute bounds a request.
	return serveEndpoint("queue", ln, c.String("account"), productStyle(c, handler), store, time.Minute, logger), nil
}
