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
}

// dataDirOptions says how to open a data directory.
type dataDirOptions struct {
	Path        string       // --data
	BlobBackend string       // --blob-backend; "" means file://<data>/blobs
	Logger      *slog.Logger // nil means slog.Default()
}

// openDataDir creates the directory if missing, opens the blob store and the
// database (reaping dead owners' handles and finishing the deletes they held
// up), then the file service (resolving interrupted commits).
func openDataDir(ctx context.Context, o dataDirOptions) (*dataDir, error) {
	if o.Path == "" {
		return nil, errors.New("--data must name a directory")
	}
	dir, err := filepath.Abs(o.Path)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", o.Path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	store, err := openBlobStore(ctx, o.BlobBackend, dir)
	if err != nil {
		return nil, err
	}
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
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
	return &dataDir{Path: dir, Table: table, Store: store, FS: fsys}, nil
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
// the cutoff as above. started is when this process opened the directory.
func (d *dataDir) collectGarbage(ctx context.Context, started time.Time, logger *slog.Logger) error {
	others, err := d.Table.OtherLiveOwners(ctx)
	if err != nil {
		return err
	}
	olderThan := gcSafeAge
	if len(others) == 0 {
		olderThan = time.Since(started)
	}
	report, err := blobstore.CollectGarbage(ctx, d.Store, olderThan)
	if err != nil {
		return fmt.Errorf("blob garbage collection: %w", err)
	}
	if report.StagedBlocks+report.OrphanBlocks+report.TempFiles > 0 {
		logger.Info("collected orphaned blob data", "staged_blocks", report.StagedBlocks,
			"orphan_blocks", report.OrphanBlocks, "temp_files", report.TempFiles, "bytes", report.BytesFreed)
	}
	return nil
}

// collectGarbageEvery runs collectGarbage now and then every interval until
// ctx ends, logging failures (a failed collection loses nothing).
func (d *dataDir) collectGarbageEvery(ctx context.Context, interval time.Duration, started time.Time, logger *slog.Logger) {
	for {
		if err := d.collectGarbage(ctx, started, logger); err != nil && ctx.Err() == nil {
			logger.Warn("blob garbage collection failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
