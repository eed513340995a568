package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs/fusefs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/rest"
)

// shutdownGrace bounds how long serve waits for in-flight REST requests
// after SIGINT/SIGTERM.
const shutdownGrace = 30 * time.Second

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve every endpoint (FileREST, SMB, Blob, Queue) and, with --mount, a FUSE mount",
		ArgsUsage: " ",
		Flags: slices.Concat([]cli.Flag{
			&cli.StringFlag{Name: "data", Value: "./blobshare-data", Usage: "directory of the SQLite database and the local blob store (created if missing)"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:10003", Usage: "FileREST listen address (path-style URLs: http://ADDR/ACCOUNT/SHARE/PATH)"},
			&cli.StringFlag{Name: "account", Value: rest.DevAccount, Usage: "storage account name"},
			&cli.StringFlag{Name: "key", Value: rest.DevKey, Usage: "storage account key (base64); SharedKey and SAS are checked against it"},
			&cli.BoolFlag{Name: "no-auth", Usage: "accept requests without SharedKey or SAS (development only)"},
			&cli.StringFlag{Name: "mount", Usage: "also mount the account over FUSE at this directory (each share is a top-level directory)"},
			&cli.StringFlag{Name: "share-mode", Value: "read,write,delete", Usage: "share mode given to FUSE opens (read,write,delete or none)"},
			&cli.StringFlag{Name: "blob-backend", Usage: "where file content lives: file://DIR (default file://DATA/blobs) or azure://ACCOUNT/CONTAINER?endpoint=URL"},
			queueAddrFlag(),
			blobAddrFlag(),
			&cli.BoolFlag{Name: "debug", Usage: "log at debug level, including every failed request with its status and error code"},
			smbFlag(),
			&cli.IntFlag{Name: "share-retention-days", Usage: "keep deleted shares this many days for Undelete Share (0: delete at once)"},
			smbEncryptFlag(),
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

	ln, err := listenHTTP(c, "addr")
	if err != nil {
		return err
	}
	defer ln.Close()

	started := time.Now() // before the directory opens: everything staged earlier is an orphan
	dd, err := openDataDir(ctx, dataDirOptions{Path: dataFlag(c), BlobBackend: c.String("blob-backend"), Logger: logger, Create: true})
	if err != nil {
		return err
	}
	// A fresh context: the signal context is already done when we close.
	defer func() {
		if err := dd.Close(context.Background()); err != nil {
			logger.Error("closing data directory", "err", err)
		}
	}()

	handler, err := rest.New(rest.Config{
		FS:          dd.FS,
		Account:     c.String("account"),
		Key:         c.String("key"),
		DisableAuth: c.Bool("no-auth"),
		OAuth:       c.String("oauth") == "basic",
		Logger:      logger,
		// Share soft delete: Azure sets it on the account, not over FileREST.
		ShareDeleteRetention: time.Duration(c.Int("share-retention-days")) * 24 * time.Hour,
		// Request bodies that do not fit the memory budget wait on the
		// data disk, so a full disk answers ShareSizeLimitReached there too.
		SpillDir: filepath.Join(dd.Path, "spill"),
	})
	if err != nil {
		return err
	}
	queueEP, err := startQueue(ctx, c, dd.Path, logger)
	if err != nil {
		return err
	}
	blobEP, blobSvc, err := startBlob(ctx, c, dd.Path, dd.Store, logger)
	if err != nil {
		return errors.Join(err, queueEP.shutdown(context.Background()))
	}
	defer blobEP.stop(logger) // before the data directory closes: in-flight requests use its store
	srv := &http.Server{
		Handler:           logFailedRequests(productStyle(c, handler), logger, slog.LevelDebug),
		ReadHeaderTimeout: 30 * time.Second,
		// A request body (at most 4 MiB: a Put Range) must arrive within
		// ReadTimeout, so a stalled client cannot pin server memory; idle
		// keep-alive connections go after IdleTimeout.
		ReadTimeout:    5 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 1 << 20,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	// Recovery of blob data a crash left behind, then periodic collection.
	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		dd.collectGarbageEvery(gcCtx, gcInterval, started, blobStagedBlocks(dd.Path, blobSvc), logger)
	}()
	defer func() { stopGC(); <-gcDone }()

	var mounted *fusefs.Mounted
	if mountDir != "" {
		mounted, err = fusefs.Mount(ctx, mountDir, dd.FS, fusefs.Options{ShareMode: shareMode, Logger: logger})
		if err != nil {
			srv.Close()
			return errors.Join(err, queueEP.shutdown(context.Background()))
		}
	}

	smbEP, err := startSMB(c.String("smb"), c.Bool("smb-encrypt"), dd.FS, c.String("account"), c.String("key"), logger)
	if err != nil {
		srv.Close()
		if mounted != nil {
			mounted.Unmount()
		}
		return errors.Join(err, queueEP.shutdown(context.Background()))
	}
	defer smbEP.stop()

	restURL := endpointURL(ln, c.String("account"))
	if mounted != nil {
		logger.Info("blobshare serving", "rest", restURL, "mount", mounted.Dir(), "smb", smbEP.addr(), "queue", queueEP.url, "blob", blobEP.url, "data", dd.Path)
	} else {
		logger.Info("blobshare serving", "rest", restURL, "mount", "none", "smb", smbEP.addr(), "queue", queueEP.url, "blob", blobEP.url, "data", dd.Path)
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		// Serve only returns on a listener failure: shut down and report it.
		if mounted != nil {
			mounted.Unmount()
		}
		return errors.Join(fmt.Errorf("REST server: %w", err), queueEP.shutdown(context.Background()))
	case err := <-queueEP.failed():
		if mounted != nil {
			mounted.Unmount()
		}
		srv.Close()
		return fmt.Errorf("queue server: %w", err)
	case err := <-blobEP.failed():
		if mounted != nil {
			mounted.Unmount()
		}
		srv.Close()
		return fmt.Errorf("blob server: %w", err)
	}

	logger.Info("blobshare stopping")
	shutCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	if err := srv.Shutdown(shutCtx); err != nil {
		errs = append(errs, fmt.Errorf("REST shutdown: %w", err))
	}
	if err := smbEP.stop(); err != nil {
		errs = append(errs, err)
	}
	if err := queueEP.shutdown(shutCtx); err != nil {
		errs = append(errs, err)
	}
	if mounted != nil {
		if err := mounted.Unmount(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
