package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/msgqueue/pgstore"
	"github.com/blobshare/blobshare/msgqueue/sqlstore"
	"github.com/blobshare/blobshare/queue"
)

// queueAddrFlag is serve's --queue-addr (cli-contract.md).
func queueAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "queue-addr", Value: "127.0.0.1:10001",
		Usage: "Queue service listen address, path-style http://ADDR/ACCOUNT/QUEUE (off disables it)"}
}

// startQueue listens on --queue-addr and serves the Queue service over
// dataPath/queue.db, or the PostgreSQL database of --meta; addr "off"
// gives an endpoint that serves nothing.
func startQueue(ctx context.Context, c *cli.Context, m meta, dataPath string, logger *slog.Logger) (*httpEndpoint, error) {
	// Queue bodies are at most a few hundred KiB: a minute bounds a request.
	return startStoreEndpoint(c, "queue", "queue-addr", time.Minute, logger, func() (io.Closer, http.Handler, error) {
		type store interface {
			msgqueue.Store
			io.Closer
		}
		st, err := openStore(m,
			func(url string) (store, error) { return pgstore.Open(ctx, url, pgstore.Options{}) },
			func() (store, error) { return sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName)) })
		if err != nil {
			return nil, nil, err
		}
		handler, err := queue.New(queue.Config{
			Service:     msgqueue.New(st, nil),
			Account:     c.String("account"),
			Key:         c.String("key"),
			DisableAuth: c.Bool("no-auth"),
			OAuth:       c.String("oauth") == "basic",
			Logger:      logger,
		})
		if err != nil {
			st.Close()
			return nil, nil, err
		}
		return st, handler, nil
	})
}
