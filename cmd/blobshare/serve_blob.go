package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/pgstore"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
	"github.com/blobshare/blobshare/internal/pgdb"
	"github.com/blobshare/blobshare/locks"
)

// blobMeta is where the Blob service's metadata lives: dataPath/blob.db,
// its claims and intents owned by owner (this process's lock-table
// session), or, with a postgres --meta, the database's blob tables, owned
// by node (this process in the node registry).
type blobMeta struct {
	dataPath string
	owner    *locks.Table
	m        meta
	node     *pgdb.Node // with a postgres --meta only
	log      *slog.Logger
}

// blobStore is a Blob metadata store with its Close.
type blobStore interface {
	blobsvc.Store
	io.Closer
}

// open opens the metadata store, with the clock the service decides by:
// on PostgreSQL the database's (pgstore.Store.Now), so nodes with skewed
// clocks agree on lease expiry and break periods; else the local one.
func (b blobMeta) open(ctx context.Context) (blobStore, func() time.Time, error) {
	if b.m.postgres != "" {
		st, err := pgstore.Open(ctx, b.m.postgres, pgstore.Options{Owners: b.node, Logger: b.log})
		if err != nil {
			return nil, nil, fmt.Errorf("--meta %s: %w", redactURL(b.m.postgres), err)
		}
		return st, st.Now, nil
	}
	st, err := sqlstore.Open(ctx, filepath.Join(b.dataPath, sqlstore.FileName))
	if err != nil {
		return nil, nil, err
	}
	st.UseOwners(sqlstore.TableOwners(b.owner))
	return st, time.Now, nil
}

// blobAddrFlag is serve's --blob-addr (cli-contract.md).
func blobAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "blob-addr", Value: "127.0.0.1:10000",
		Usage: "Blob service listen address, path-style http://ADDR/ACCOUNT/CONTAINER/BLOB (off disables it)"}
}

// serveBlobBackend is the content store serve opens: --blob-backend, or,
// with a postgres --meta and the Blob endpoint on, the one the database's
// Blob metadata was set up with (pgstore.ContentStore: recorded by the
// first node, its default file://DATA/blobs if it named none; a node
// naming another is refused with one line).
func serveBlobBackend(ctx context.Context, c *cli.Context, m meta) (string, error) {
	backend := c.String("blob-backend")
	if m.postgres == "" || c.String("blob-addr") == "off" {
		return backend, nil
	}
	data, err := filepath.Abs(dataFlag(c))
	if err != nil {
		return "", fmt.Errorf("--data %s: %w", dataFlag(c), err)
	}
	fallback := (&url.URL{Scheme: "file", Path: filepath.Join(data, "blobs")}).String()
	resolved, err := pgstore.ContentStore(ctx, m.postgres, backend, fallback)
	if errors.Is(err, pgstore.ErrContentMismatch) {
		return "", fmt.Errorf("--blob-backend %w of --meta %s", err, redactURL(m.postgres))
	}
	if err != nil {
		return "", fmt.Errorf("--meta %s: %w", redactURL(m.postgres), err)
	}
	return resolved, nil
}

// startBlob listens on --blob-addr and serves the Blob service over bm
// (metadata: dataPath/blob.db, or the PostgreSQL database of --meta) and
// content (the data directory's blob store, --blob-backend: nodes on one
// --meta share it), and returns the service too; addr "off" gives an
// endpoint that serves nothing and no service. The metadata store's
// per-blob claims and commit intents belong to this process's owner
// session, so other serve processes on the same --data, or nodes on the
// same --meta, serve Blob beside this one (blobsvc/doc.go, "Several
// processes on one metadata database").
func startBlob(ctx context.Context, c *cli.Context, bm blobMeta, content blobstore.Store, link *blobSourceLink, logger *slog.Logger) (*httpEndpoint, *blobsvc.Service, error) {
	addr := c.String("blob-addr")
	if addr == "off" {
		return offEndpoint("blob"), nil, nil
	}
	store, now, err := bm.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	ln, err := listenHTTP(c, "blob-addr")
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	// The endpoint closes the store once the last request is done.
	svc := blobsvc.New(store, content, now)
	if h := commitPauseHook(os.Getenv(commitPauseEnv), logger); h != nil {
		svc.SetCommitHook(h)
	}
	// Container soft delete: Azure sets it on the account, not over the
	// Blob API (blob soft delete is Set Blob Service Properties').
	svc.SetContainerRetention(c.Int("container-retention-days"))
	svc.SetRehydrateTime(c.Duration("rehydrate-time"))
	// Commits a crash interrupted between content and metadata are
	// finished (or dropped) before the first request: those of dead
	// owners only, each under its blob's claim (blobsvc/doc.go).
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

// commitPauseEnv names the environment variable of crash tests that
// holds one blob's content commits at a stage: "STAGE CONTAINER/NAME"
// (STAGE intent or content, blobsvc.CommitStage). A commit of that blob
// reaching the stage logs "blob commit paused" and waits for its
// request's end (or the process's kill): the state a crash at that point
// leaves, with its claim and intent held by a live process meanwhile.
const commitPauseEnv = "BLOBSHARE_TEST_PAUSE_BLOB_COMMIT"

// commitPauseHook is the hook commitPauseEnv's value v asks for (nil for
// none or a value it cannot read: a test's typo must not pause a server,
// so it is logged).
func commitPauseHook(v string, logger *slog.Logger) blobsvc.CommitHook {
	if v == "" {
		return nil
	}
	stage, blob, ok := strings.Cut(v, " ")
	container, name, ok2 := strings.Cut(blob, "/")
	if !ok || !ok2 || (stage != string(blobsvc.StageIntent) && stage != string(blobsvc.StageContent)) {
		logger.Warn("ignored: want STAGE CONTAINER/NAME", "env", commitPauseEnv, "value", v)
		return nil
	}
	return func(ctx context.Context, st blobsvc.CommitStage, b blobsvc.Blob) {
		if string(st) != stage || b.Container != container || b.Name != name {
			return
		}
		logger.Warn("blob commit paused", "stage", stage, "container", container, "blob", name, "etag", b.ETag)
		<-ctx.Done()
	}
}

// blobStagedBlocks is what the blob store's garbage collection keeps for
// the Blob service: its uncommitted blocks, which Put Block List may
// commit after any restart. They come from the running service, or, with
// the endpoint off, from bm's store (the directory's blob.db if it has
// one; the database of a postgres --meta, whose other nodes stage blocks
// in the content store this one collects), through a store of this
// process's owner session: it takes blobs' claims, and must neither take
// a live serve's nor count its own claims as another's.
func blobStagedBlocks(bm blobMeta, svc *blobsvc.Service) stagedKeeper {
	if svc != nil {
		return svc.KeptStagedBlocks
	}
	return func(ctx context.Context) (map[string]bool, error) {
		if bm.m.postgres == "" {
			p := filepath.Join(bm.dataPath, sqlstore.FileName)
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
		}
		store, now, err := bm.open(ctx)
		if err != nil {
			return nil, err
		}
		defer store.Close()
		return blobsvc.New(store, nil, now).KeptStagedBlocks(ctx)
	}
}
