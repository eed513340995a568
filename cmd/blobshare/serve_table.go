package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/table"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/sqlstore"
)

// tableAddrFlag is serve's --table-addr (cli-contract.md).
func tableAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "table-addr", Value: "127.0.0.1:10002",
		Usage: "Table service listen address, path-style http://ADDR/ACCOUNT/TABLE (off disables it)"}
}

// startTable listens on --table-addr and serves the Table service over
// dataPath/table.db; addr "off" gives an endpoint that serves nothing.
func startTable(ctx context.Context, c *cli.Context, dataPath string, logger *slog.Logger) (*httpEndpoint, error) {
	addr := c.String("table-addr")
	if addr == "off" {
		return offEndpoint("table"), nil
	}
	ln, err := listenHTTP(c, "table-addr")
	if err != nil {
		return nil, err
	}
	store, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		ln.Close()
		return nil, err
	}
	handler, err := table.New(table.Config{
		Service:     tablesvc.New(store, nil),
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
	// Table bodies are at most 4 MiB (a batch): a minute bounds a request.
	return serveEndpoint("table", ln, c.String("account"), productStyle(c, handler), store, time.Minute, logger), nil
}
