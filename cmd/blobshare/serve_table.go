package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/table"
	"github.com/blobshare/blobshare/tablesvc"
	"github.com/blobshare/blobshare/tablesvc/pgstore"
	"github.com/blobshare/blobshare/tablesvc/sqlstore"
)

// tableAddrFlag is serve's --table-addr (cli-contract.md).
func tableAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "table-addr", Value: "127.0.0.1:10002",
		Usage: "Table service listen address, path-style http://ADDR/ACCOUNT/TABLE (off disables it)"}
}

// startTable listens on --table-addr and serves the Table service over
// dataPath/table.db, or the PostgreSQL database of --meta; addr "off"
// gives an endpoint that serves nothing.
func startTable(ctx context.Context, c *cli.Context, m meta, dataPath string, logger *slog.Logger) (*httpEndpoint, error) {
	// Table bodies are at most 4 MiB (a batch): a minute bounds a request.
	return startStoreEndpoint(c, "table", "table-addr", time.Minute, logger, func() (io.Closer, http.Handler, error) {
		type store interface {
			tablesvc.Store
			io.Closer
		}
		st, err := openStore(m,
			func(url string) (store, error) { return pgstore.Open(ctx, url, pgstore.Options{}) },
			func() (store, error) { return sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName)) })
		if err != nil {
			return nil, nil, err
		}
		handler, err := table.New(table.Config{
			Service:     tablesvc.New(st, nil),
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
