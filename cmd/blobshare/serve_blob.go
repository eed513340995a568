package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/locks"
)

// blobAddrFlag is serve's --blob-addr (cli-contract.md).
func blobAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "blob-addr", Value: "127.0.0.1:10000",
		Usage: "Blob service listen address, path-style http://ADDR/ACCOUNT/CONTAINER/BLOB (off disables it)"}
}

// startBlob listens on --blob-addr and serves the Blob service over
// dataPath/blob.db (metadata) and content (the data directory's blob
// store, --blob-backend), and returns the service too; addr "off" gives an
// endpoint that serves nothing and no service. The metadata store's
// writer claim is taken for owner, this process's lock-table session
// (claimBlob), before recovery and before the port opens.
func startBlob(ctx context.Context, c *cli.Context, dataPath string, owner *locks.Table, content blobstore.Store, link *blobSourceLink, logger *slog.Logger) (*httpEndpoint, *blobsvc.Service, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return offEndpoint("blob"), nil, nil
	}
	store, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		return nil, nil, err
	}
	if err := claimBlob(ctx, store, dataPath, owner); err != nil {
		store.Close()
		return nil, nil, err
	}
	ln, err := listenHTTP(c, "blob-addr")
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	// The endpoint closes the store, which gives the claim up, once the
	// last request is done.
	svc := blobsvc.New(store, content, nil)
	// Container soft delete: Azure sets it on the account, not over the
	// Blob API (blob soft delete is Set Blob Service Properties').
	svc.SetContainerRetention(c.Int("container-retention-days"))
	svc.SetRehydrateTime(c.Duration("rehydrate-time"))
	// Commits a crash interrupted between content and metadata are
	// finished (or dropped) before the first request: those of dead
	// owners only, under the claim (blobsvc/doc.go).
	if n, err := svc.Recover(ctx); err != nil {
		ln.Close()
		store.Close()
		return nil, nil, fmt.Errorf("blob service recovery: %w", err)
	} else if n > 0 {
		logger.Info("blob service finished interrupted commits", "count", n)
	}
	if err := svc.EnsureSystemContainers(ctx); err != nil {
		ln.Close()
		store.Close()
		return nil, nil, fmt.Errorf("blob service: %w", err)
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
	link.set(handler, ln.Addr()) // FileREST's Put Range From URL reads blob sources here
	return serveEndpoint("blob", ln, c.String("account"), productStyle(c, handler), store, 0, logger), svc, nil
}

// BlobClaimedError is claimBlob's error when another process serves Blob
// on the data directory.
type BlobClaimedError struct {
	Dir    string // the data directory
	Holder int    // the claim holder's pid, 0 when unknown
}

func (e *BlobClaimedError) Error() string {
	holder := "another process"
	if e.Holder > 0 {
		holder = "process " + strconv.Itoa(e.Holder)
	}
	return fmt.Sprintf("--blob-addr: %s already serves Blob on data directory %s (two would lose Blob updates); stop it, or start this one with --blob-addr off to serve the rest",
		holder, e.Dir)
}

// claimBlob takes blob.db's writer claim (blobsvc/doc.go, "One writer per
// metadata database") for owner's session: an owner session of the lock
// table, so the claim is free the moment its holder dies (SIGKILL
// included: the kernel drops the session's flock) and no stale claim is
// ever left behind.
//
// Why the claim: the Blob service keeps per-blob state in process memory
// between its reads and its writes to blob.db (a conditional write checks
// the ETag it read, then commits), so two processes serving Blob on one
// blob.db each check against a state the other is about to change: two
// If-Match writers on one ETag, one through each process, both won in 98
// of 100 rounds, and one update was silently lost; and the second's
// recovery would resolve the first's commits in flight.
//
// Why a refusal rather than serving the rest with a warning: a warning is
// one line among many in a log nobody reads, and a client pointed at the
// second process's Blob port would get connection refused with no
// explanation where it asks. Failing at start with one line is seen by
// whoever starts it, names the fix (--blob-addr off serves the rest), and
// loses nothing; silently dropping an endpoint the command line asked for
// would break the contract that serve serves what its flags say.
func claimBlob(ctx context.Context, store *sqlstore.Store, dataPath string, owner *locks.Table) error {
	err := store.Claim(ctx, sqlstore.TableOwners(owner))
	var claimed *sqlstore.ClaimedError
	if errors.As(err, &claimed) {
		return &BlobClaimedError{Dir: dataPath, Holder: claimed.Pid}
	}
	if err != nil {
		return fmt.Errorf("--blob-addr: %w", err)
	}
	return nil
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
