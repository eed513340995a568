package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/storeurl"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// dataDir is an opened --data directory: the lock table and namespace in
// <data>/blobshare.db, file content in the blob store, and the file service
// over both. serve, mount and session each open one; several processes may
// open the same directory at once.
type dataDir struct {
	Path  string
	Table *locks.Table
	Store blobstore.Store
	FS    *fs.FileSystem
	// Now is the clock of the directory's time-dependent work (the
	// garbage collection's age cutoff); time.Now.
	Now func() time.Time
	// SharedContent: other processes that are no owners of this
	// directory's lock table write the blob store (nodes on a shared
	// --meta), so the garbage collection keeps what is younger than
	// gcSafeAge even when no other owner of the directory is alive.
	SharedContent bool
}

// dataDirOptions says how to open a data directory.
type dataDirOptions struct {
	Path        string       // --data
	BlobBackend string       // --blob-backend; "" means file://<data>/blobs
	Logger      *slog.Logger // nil means slog.Default()
	// Create makes a missing directory (serve). Without it a missing
	// directory, or one holding no database, is an error: a mount or a
	// session over a mistyped --data would otherwise work on a new, empty
	// data directory and see none of the files or locks it was meant for.
	Create bool
}

// dbName is the database file inside a data directory.
const dbName = "blobshare.db"

// openDataDir opens (with Create, creating if missing) the directory, the
// blob store and the database (reaping dead owners' handles and finishing
// the deletes they held up), then the file service (resolving interrupted
// commits).
func openDataDir(ctx context.Context, o dataDirOptions) (*dataDir, error) {
	dir, err := dataDirPath(o.Path, o.Create)
	if err != nil {
		return nil, err
	}
	store, err := openBlobStore(ctx, o.BlobBackend, dir)
	if err != nil {
		return nil, err
	}
	table, err := locks.Open(ctx, filepath.Join(dir, dbName), locks.Options{Remove: fs.RemoveFile, Logger: o.Logger})
	if err != nil {
		return nil, dataDirError(dir, err)
	}
	fsys, err := fs.New(ctx, fs.Config{
		Table:    table,
		Store:    store,
		Logger:   o.Logger,
		SpillDir: filepath.Join(dir, "spill"),
	})
	if err != nil {
		table.Close(ctx)
		return nil, dataDirError(dir, err)
	}
	return &dataDir{Path: dir, Table: table, Store: store, FS: fsys, Now: time.Now}, nil
}

// dataDirPath checks --data and returns it as an absolute path. With
// create a missing directory is made; without, the directory and its
// database must exist.
func dataDirPath(path string, create bool) (string, error) {
	if path == "" {
		return "", errors.New("--data must name a directory")
	}
	dir, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", path, err)
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("data directory: %w", err)
		}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("data directory %s does not exist (blobshare serve --data %s creates it)", dir, path)
	case err != nil:
		return "", fmt.Errorf("data directory: %w", err)
	case !fi.IsDir():
		return "", fmt.Errorf("data directory %s is not a directory", dir)
	}
	if !create {
		if _, err := os.Stat(filepath.Join(dir, dbName)); errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("data directory %s holds no blobshare database (%s): not a data directory", dir, dbName)
		} else if err != nil {
			return "", fmt.Errorf("data directory: %w", err)
		}
	}
	return dir, nil
}

// dataDirError names the data directory unless err already does (a
// schema mismatch names it itself).
func dataDirError(dir string, err error) error {
	var schema *locks.SchemaError
	if errors.As(err, &schema) {
		return err
	}
	return fmt.Errorf("data directory %s: %w", dir, err)
}

// Close closes the file service (flushing and closing its handles) and then
// the lock table (deregistering this process as an owner).
func (d *dataDir) Close(ctx context.Context) error {
	return errors.Join(d.FS.Close(ctx), d.Table.Close(ctx))
}

// openBlobStore opens the --blob-backend URL (storeurl syntax); "" is the
// local directory <data>/blobs.
func openBlobStore(ctx context.Context, backend, dataDir string) (blobstore.Store, error) {
	s, err := storeurl.Open(ctx, backend, dataDir)
	if err != nil {
		return nil, fmt.Errorf("--blob-backend: %w", err)
	}
	return s, nil
}

// Blob garbage collection removes staged blocks no commit took (a process
// died between staging and committing) and blocks no version references.
// A live writer's staged blocks look the same as a dead one's, so the age
// cutoff must exceed how long any live process may keep blocks staged:
// when no other blobshare process is alive, everything staged before this
// process started is an orphan; otherwise only blocks older than
// gcSafeAge go.
const (
	gcSafeAge  = 24 * time.Hour
	gcInterval = time.Hour
)

// collectGarbage runs the blob store's garbage collection once, choosing
// the cutoff as above and keeping what keep names (the Blob service's
// uncommitted blocks, which outlive processes). started is when this
// process opened the directory.
func (d *dataDir) collectGarbage(ctx context.Context, started time.Time, keep stagedKeeper, logger *slog.Logger) error {
	others, err := d.Table.OtherLiveOwners(ctx)
	if err != nil {
		return err
	}
	o := blobstore.GCOptions{OlderThan: gcSafeAge}
	if len(others) == 0 && !d.SharedContent {
		o.OlderThan = d.Now().Sub(started)
	}
	if keep != nil {
		// Read after the cutoff is chosen: a block staged later is
		// younger than the cutoff, so it is kept either way.
		ids, err := keep(ctx)
		if err != nil {
			return fmt.Errorf("blob garbage collection: %w", err)
		}
		o.KeepStaged = func(id string) bool { return ids[id] }
	}
	report, err := blobstore.CollectGarbage(ctx, d.Store, o)
	if err != nil {
		return fmt.Errorf("blob garbage collection: %w", err)
	}
	if report.StagedBlocks+report.OrphanBlocks+report.TempFiles > 0 {
		logger.Info("collected orphaned blob data", "staged_blocks", report.StagedBlocks,
			"orphan_blocks", report.OrphanBlocks, "temp_files", report.TempFiles, "bytes", report.BytesFreed)
	}
	return nil
}

// stagedKeeper returns the ids of staged blocks that a later commit may
// still name, whatever their age.
type stagedKeeper func(ctx context.Context) (map[string]bool, error)

// collectGarbageEvery runs collectGarbage now and then every interval until
// ctx ends, logging failures (a failed collection loses nothing).
func (d *dataDir) collectGarbageEvery(ctx context.Context, interval time.Duration, started time.Time, keep stagedKeeper, logger *slog.Logger) {
	for {
		if err := d.collectGarbage(ctx, started, keep, logger); err != nil && ctx.Err() == nil {
			logger.Warn("blob garbage collection failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
