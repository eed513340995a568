package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/fs/fusefs"
	"github.com/blobshare/blobshare/locks"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "mount one share (or, without --share, every share) over FUSE",
		ArgsUsage: "MOUNTPOINT (flags come first: blobshare mount --data DIR MOUNTPOINT)",
		Description: "Mounts the shares kept in --data at MOUNTPOINT as a separate process; a running\n" +
			"`blobshare serve` on the same --data sees the same files and locks. Unmounts cleanly\n" +
			"on SIGINT or SIGTERM.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Value: "./blobshare-data", Usage: "directory of the SQLite database and the local blob store"},
			metaFlag(),
			&cli.StringFlag{Name: "share", Usage: "mount only this share (default: the whole account, one directory per share)"},
			&cli.StringFlag{Name: "share-mode", Value: "read,write,delete", Usage: "share mode of every open through the mount: read,write,delete or none"},
			&cli.BoolFlag{Name: "debug", Usage: "log every FUSE request"},
		},
		Action: runMount,
	}
}

// runMount mounts until the context ends or a signal arrives.
func runMount(c *cli.Context) error {
	if err := refuseSharedMeta(c, "mount"); err != nil {
		return err
	}
	if err := flagsAfterArgument(c); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	if c.NArg() != 1 {
		return fmt.Errorf("mount: expected one MOUNTPOINT, got %d arguments", c.NArg())
	}
	mountpoint := c.Args().First()
	if err := fusefs.ClearDeadMount(mountpoint); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	st, err := os.Stat(mountpoint)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mount: mount point %s does not exist", mountpoint)
	case err != nil:
		return fmt.Errorf("mount: mount point %s: %w", mountpoint, err)
	case !st.IsDir():
		return fmt.Errorf("mount: mount point %s is not a directory", mountpoint)
	}
	shareMode, err := locks.ParseShareMode(c.String("share-mode"))
	if err != nil {
		return fmt.Errorf("mount: --share-mode: %w", err)
	}
	logger := newLogger(c.App.ErrWriter, logLevel(c.Bool("debug")))

	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	data := c.String("data")
	d, err := openDataDir(ctx, dataDirOptions{Path: data, Logger: logger})
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	defer func() {
		// A fresh context: the signal has cancelled ctx.
		if err := d.Close(context.WithoutCancel(ctx)); err != nil {
			logger.Error("close data directory", "data", d.Path, "err", err)
		}
	}()
	fsys := d.FS
	share := c.String("share")
	m, err := fusefs.Mount(ctx, mountpoint, fsys, fusefs.Options{
		Share:     share,
		ShareMode: shareMode,
		Logger:    logger,
		Debug:     c.Bool("debug"),
	})
	if share != "" && (errors.Is(err, fs.ErrNotFound) || errors.Is(err, fs.ErrShareNotFound) || errors.Is(err, fs.ErrInvalidName)) {
		return fmt.Errorf("mount: --share %s: no such share in %s", share, d.Path)
	}
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	what := "every share"
	if s := c.String("share"); s != "" {
		what = "share " + s
	}
	logger.Info("blobshare mounted", "mountpoint", mountpoint, "what", what, "data", d.Path, "share_mode", c.String("share-mode"))

	// Until a signal (or the caller) ends ctx, or someone runs umount(8).
	select {
	case <-ctx.Done():
	case <-m.Done():
	}
	if err := m.Unmount(); errors.Is(err, fusefs.ErrDetached) {
		// Files inside are still open: the mount point is detached; they
		// lose the file system when this process exits.
		logger.Warn("mount point detached while files inside were still open", "mountpoint", mountpoint)
	} else if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	logger.Info("blobshare unmounted", "mountpoint", mountpoint)
	return nil
}
