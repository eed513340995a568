package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

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
func startBlob(ctx context.Context, c *cli.Context, dataPath string, content blobstore.Store, link *blobSourceLink, logger *slog.Logger) (*httpEndpoint, *blobsvc.Service, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return offEndpoint("blob"), nil, nil
	}
	claim, err := claimBlob(dataPath)
	if err != nil {
		return nil, nil, err
	}
	ln, err := listenHTTP(c, "blob-addr")
	if err != nil {
		claim.Close()
		return nil, nil, err
	}
	dbStore, err := sqlstore.Open(ctx, filepath.Join(dataPath, sqlstore.FileName))
	if err != nil {
		ln.Close()
		claim.Close()
		return nil, nil, err
	}
	// The endpoint closes the store, then releases the claim, once the
	// last request is done.
	store := claimedStore{Store: dbStore, claim: claim}
	svc := blobsvc.New(dbStore, content, nil)
	// Container soft delete: Azure sets it on the account, not over the
	// Blob API (blob soft delete is Set Blob Service Properties').
	svc.SetContainerRetention(c.Int("container-retention-days"))
	svc.SetRehydrateTime(c.Duration("rehydrate-time"))
	// Commits a crash interrupted between content and metadata are
	// finished (or dropped) before the first request.
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

// blobClaimName is the file beside blob.db whose flock the Blob endpoint
// holds for its lifetime.
const blobClaimName = "blob.lock"

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

// claimBlob takes the data directory's Blob claim: an exclusive flock on
// blob.lock, held until Close and dropped by the kernel when the process
// dies (SIGKILL included), so a crash never leaves a stale claim.
//
// Why the claim: the Blob service keeps per-blob state in process memory
// between its reads and its writes to blob.db (a conditional write checks
// the ETag it read, then commits), so two processes serving Blob on one
// blob.db each check against a state the other is about to change: two
// If-Match writers on one ETag, one through each process, both won in 98
// of 100 rounds, and one update was silently lost. Until the metadata
// engine arbitrates that in the database, one process serves Blob per
// data directory.
//
// Why a refusal rather than serving the rest with a warning: a warning is
// one line among many in a log nobody reads, and a client pointed at the
// second process's Blob port would get connection refused with no
// explanation where it asks. Failing at start with one line is seen by
// whoever starts it, names the fix (--blob-addr off serves the rest), and
// loses nothing; silently dropping an endpoint the command line asked for
// would break the contract that serve serves what its flags say.
func claimBlob(dataPath string) (*os.File, error) {
	path := filepath.Join(dataPath, blobClaimName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--blob-addr: claim %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			e := &BlobClaimedError{Dir: dataPath}
			if b, rerr := os.ReadFile(path); rerr == nil {
				e.Holder, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, e
		}
		return nil, fmt.Errorf("--blob-addr: claim %s: %w", path, err)
	}
	// The holder's pid, for the refusal's line; only informative (the
	// flock is the claim), so a failure to write it is not fatal.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// claimedStore closes the Blob metadata store, then releases the claim.
type claimedStore struct {
	*sqlstore.Store
	claim *os.File
}

func (s claimedStore) Close() error {
	return errors.Join(s.Store.Close(), s.claim.Close())
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
