package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
// store, --blob-backend), and returns the service too; addr "off" gives an
// endpoint that serves nothing and no service.
func startBlob(ctx context.Context, c *cli.Context, dataPath string, content blobstore.Store, logger *slog.Logger) (*httpEndpoint, *blobsvc.Service, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return offEndpoint("blob"), nil, nil
	}
	ln, err := listenHTTP(c, "blob-addr")
	if err != nil {
		return nil, nil, err
	}
	store, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	svc := blobsvc.New(store, content, nil)
	// Commits a crash interrupted between content and metadata are
	// finished (or dropped) before the first request.
	if n, err := svc.Recover(ctx); err != nil {
		ln.Close()
		store.Close()
		return nil, nil, fmt.Errorf("blob service recovery: %w", err)
	} else if n > 0 {
		logger.Info("blob service finished interrupted commits", "count", n)
	}
	handler, err := blob.New(blob.Config{
		Service:     svc,
		Account:     c.String("account"),
		Key:         c.String("key"),
		DisableAuth: c.Bool("no-auth"),
		OAuth:       c.String("oauth") == "basic",
		Logger:      logger,
	})
	if err != nil {
		ln.Close()
		store.Close()
		return nil, nil, err
	}
	return serveEndpoint("blob", ln, c.String("account"), productStyle(c, handler), store, 0, logger), svc, nil
}

// blobStagedBlocks is what the blob store's garbage collection keeps for
// the Blob service: its uncommitted blocks, which Put Block List may
// commit after any restart. They come from the running service, or, with
// the endpoint off, from the directory's blob.db if it has one.
func blobStagedBlocks(dataPath string, svc *blobsvc.Service) stagedKeeper {
	if svc != nil {
		return svc.KeptStagedBlocks
	}
	return func(ctx context.Context) (map[string]bool, error) {
		p := filepath.Join(dataPath, sqlstore.FileName)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		store, err := sqlstore.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		defer store.Close()
		return blobsvc.New(store, nil, nil).KeptStagedBlocks(ctx)
	}
}
