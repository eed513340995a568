package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

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

// startBlob listens on --blob-addr and serves the Blob service over
// dataPath/blob.db (metadata) and content (the data directory's blob
// store, --blob-backend); addr "off" gives an endpoint that serves nothing.
func startBlob(ctx context.Context, c *cli.Context, dataPath string, content blobstore.Store, logger *slog.Logger) (*httpEndpoint, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return offEndpoint("blob"), nil
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
	return serveEndpoint("blob", ln, c.String("account"), handler, store, 0, logger), nil
}
