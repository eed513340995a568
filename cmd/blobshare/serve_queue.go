package main

import (
	"context"
	"fmt"
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
		var store interface {
			msgqueue.Store
			io.Closer
		}
		var err error
		if m.postgres != "" {
			store, err = pgstore.Open(ctx, m.postgres, pgstore.Options{})
			if err != nil {
				err = fmt.Errorf("--meta %s: %w", redactURL(m.postgres), err)
			}
		} else {
			store, err = sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
		}
		if err != nil {
			return nil, nil, err
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
			store.Close()
			return nil, nil, err
		}
		return store, handler, nil
	})
}
