package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs/fusefs"
	"github.com/blobshare/blobshare/internal/endpoint"
	"github.com/blobshare/blobshare/locks"
)

// shutdownGrace bounds how long serve waits for in-flight REST requests
// after SIGINT/SIGTERM.
const shutdownGrace = 30 * time.Second

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve every endpoint (FileREST, SMB, Blob, Queue, Table) and, with --mount, a FUSE mount",
		ArgsUsage: " ",
		Flags: slices.Concat([]cli.Flag{
			&cli.StringFlag{Name: "data", Value: "./blobshare-data", Usage: "directory of the SQLite database and the local blob store (created if missing)"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:10003", Usage: "FileREST listen address (path-style URLs: http://ADDR/ACCOUNT/SHARE/PATH), or off"},
			&cli.StringFlag{Name: "account", Value: filerest.DevAccount, Usage: "storage account name"},
			&cli.StringFlag{Name: "key", Value: filerest.DevKey, Usage: "storage account key (base64); SharedKey and SAS are checked against it"},
			&cli.BoolFlag{Name: "no-auth", Usage: "accept requests without SharedKey or SAS (development only)"},
			&cli.StringFlag{Name: "mount", Usage: "also mount the account over FUSE at this directory (each share is a top-level directory)"},
			&cli.StringFlag{Name: "share-mode", Value: "read,write,delete", Usage: "share mode given to FUSE opens (read,write,delete or none)"},
			&cli.StringFlag{Name: "blob-backend", Usage: "where file content lives: file://DIR (default file://DATA/blobs) or azure://ACCOUNT/CONTAINER?endpoint=URL"},
			queueAddrFlag(),
			tableAddrFlag(),
			blobAddrFlag(),
			&cli.BoolFlag{Name: "debug", Usage: "log at debug level, including every failed request with its status and error code"},
			smbFlag(),
			&cli.IntFlag{Name: "share-retention-days", Usage: "keep deleted shares this many days for Restore Share (0: delete at once)"},
			&cli.IntFlag{Name: "container-retention-days", Usage: "keep deleted Blob containers this many days for Restore Container (0: delete at once; Azure allows 1-365)"},
			&cli.DurationFlag{Name: "rehydrate-time", Value: blobsvc.DefaultRehydrateTime, Usage: "how long a Blob rehydration from the Archive tier takes, at either priority (Azure takes hours)"},
			smbEncryptFlag(),
			metaFlag(),
		}, tlsFlags(), azuriteFlags()),
		Action: runServe,

		// What serve makes of Azurite's flags (azurite.go).
		Description: azuriteDescription,
	}
}

func runServe(c *cli.Context) error {
	if c.Args().Present() {
		return fmt.Errorf("serve takes no arguments (got %q)", c.Args().First())
	}
	if err := checkAzuriteFlags(c); err != nil {
		return err
	}
	if _, err := serveTLS(c); err != nil {
		return err
	}
	if err := checkOAuth(c); err != nil {
		return err
	}
	m, err := parseMeta(c)
	if err != nil {
		return err
	}
	if err := checkServeMeta(c, m); err != nil {
		return err
	}
	logger, closeLog, err := serveLogger(c)
	if err != nil {
		return err
	}
	defer closeLog()
	if c.Bool("skipApiVersionCheck") {
		logger.Debug("--skipApiVersionCheck: blobshare accepts every well-formed x-ms-version already")
	}
	shareMode, err := locks.ParseShareMode(c.String("share-mode"))
	if err != nil {
		return fmt.Errorf("--share-mode: %w", err)
	}
	mountDir := c.String("mount")
	if mountDir != "" {
		if err := fusefs.ClearDeadMount(mountDir); err != nil {
			return fmt.Errorf("--mount %s: %w", mountDir, err)
		}
		if fi, err := os.Stat(mountDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--mount %s: mount point must be an existing directory", mountDir)
		}
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// FileREST listens before the data directory opens, so a busy port
	// is refused before anything is created.
	restLn, err := listenREST(c)
	if err != nil {
		return err
	}
	started := time.Now() // before the directory opens: everything staged earlier is an orphan
	backend, err := serveBlobBackend(ctx, c, m)
	if err != nil {
		if restLn != nil {
			restLn.Close()
		}
		return err
	}
	dd, err := openDataDir(ctx, dataDirOptions{Path: dataFlag(c), BlobBackend: backend, Logger: logger, Create: true})
	if err != nil {
		if restLn != nil {
			restLn.Close()
		}
		return err
	}
	// A fresh context: the signal context is already done when we close.
	// Deferred first, so it runs after every endpoint has stopped: they
	// all use the directory's database and store.
	defer func() {
		if err := dd.Close(context.Background()); err != nil {
			logger.Error("closing data directory", "err", err)
		}
	}()

	// On a shared --meta the process is a node of the registry before
	// its endpoints start: its id owns the Blob service's claims and
	// commit intents (Recover runs at the endpoint's start). Unregistered
	// after the endpoints have stopped (deferred before them).
	bm := blobMeta{dataPath: dd.Path, owner: dd.Table, m: m, log: logger}
	if m.postgres != "" {
		node, unregister, err := registerNode(ctx, m, logger)
		if err != nil {
			if restLn != nil {
				restLn.Close()
			}
			return err
		}
		defer unregister()
		bm.node = node
		// Other nodes write the content store too: the garbage
		// collection never takes this process's start as a safe age.
		dd.SharedContent = true
	}

	// Endpoints start one by one; if one cannot, those started already
	// stop again, the last first.
	var eps []endpoint.Bound
	fail := func(err error) error { return errors.Join(err, endpoint.Stop(shutdownGrace, eps...)) }
	// Put Range From URL reads blob sources from the Blob endpoint,
	// which starts after FileREST.
	blobs := &blobSourceLink{}
	restEP, err := startREST(c, restLn, dd, blobs, logger)
	if err != nil {
		return err
	}
	eps = append(eps, restEP.bound()...)
	queueEP, err := startQueue(ctx, c, m, dd.Path, logger)
	if err != nil {
		return fail(err)
	}
	eps = append(eps, queueEP.bound()...)
	blobEP, blobSvc, err := startBlob(ctx, c, bm, dd.Store, blobs, logger)
	if err != nil {
		return fail(err)
	}
	eps = append(eps, blobEP.bound()...)
	tableEP, err := startTable(ctx, c, m, dd.Path, logger)
	if err != nil {
		return fail(err)
	}
	eps = append(eps, tableEP.bound()...)
	if bm.node != nil {
		eps := nodeEndpoints(map[string]string{"queue": queueEP.url, "table": tableEP.url, "blob": blobEP.url})
		if err := bm.node.SetEndpoints(ctx, eps); err != nil {
			return fail(err)
		}
	}

	// Recovery of blob data a crash left behind, then periodic
	// collection; stopped after the endpoints (deferred after them).
	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		dd.collectGarbageEvery(gcCtx, gcInterval, started, blobStagedBlocks(bm, blobSvc), logger)
	}()
	defer func() { stopGC(); <-gcDone }()

	mountLine := "none"
	if mountDir != "" {
		mounted, err := fusefs.Mount(ctx, mountDir, dd.FS, fusefs.Options{ShareMode: shareMode, Logger: logger})
		if err != nil {
			return fail(err)
		}
		// It stops by unmounting; it never fails on its own (an
		// external umount leaves the other endpoints serving, as before).
		eps = append(eps, endpoint.Bound{Endpoint: endpoint.NewFunc("mount", mounted.Unmount)})
		mountLine = mounted.Dir()
	}
	smbEP, err := startSMB(c.String("smb"), c.Bool("smb-encrypt"), dd.FS, dd.Table, c.String("account"), c.String("key"), logger)
	if err != nil {
		return fail(err)
	}
	eps = append(eps, smbEP.bound()...)

	logger.Info("blobshare serving", "rest", restEP.url, "mount", mountLine, "smb", smbEP.addr(), "queue", queueEP.url, "blob", blobEP.url, "table", tableEP.url, "data", dd.Path)
	return supervise(ctx, eps, logger)
}
