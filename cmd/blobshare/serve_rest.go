package main

import (
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/filerest"
)

// listenREST opens FileREST's listener on --addr; nil when it is off.
func listenREST(c *cli.Context) (net.Listener, error) {
	if c.String("addr") == "off" {
		return nil, nil
	}
	return listenHTTP(c, "addr")
}

// startREST serves FileREST over dd on ln (nil: --addr off, an endpoint
// that serves nothing). It closes ln if it cannot serve.
func startREST(c *cli.Context, ln net.Listener, dd *dataDir, blobs filerest.BlobSource, logger *slog.Logger) (*httpEndpoint, error) {
	if ln == nil {
		return offEndpoint("rest"), nil
	}
	handler, err := filerest.New(filerest.Config{
		FS:          dd.FS,
		Account:     c.String("account"),
		Key:         c.String("key"),
		DisableAuth: c.Bool("no-auth"),
		OAuth:       c.String("oauth") == "basic",
		Blobs:       blobs,
		Logger:      logger,
		// Share soft delete: Azure sets it on the account, not over FileREST.
		ShareDeleteRetention: time.Duration(c.Int("share-retention-days")) * 24 * time.Hour,
		// Request bodies that do not fit the memory budget wait on the
		// data disk, so a full disk answers ShareSizeLimitReached there too.
		SpillDir: filepath.Join(dd.Path, "spill"),
		// Operations break the SMB clients' oplocks and leases, granted
		// in the same lock table (startSMB), as Azure Files does.
		Caching: dd.Table,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	// A request body (at most 4 MiB: a Put Range) must arrive within
	// five minutes, so a stalled client cannot pin server memory.
	return serveEndpoint("rest", ln, c.String("account"), productStyle(c, handler), nil, 5*time.Minute, logger), nil
}
