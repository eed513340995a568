package fusefs

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// requireAll reports whether a missing FUSE must fail the test instead of
// skipping it (CI sets BLOBSHARE_REQUIRE_ALL=1).
func requireAll() bool { return os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" }

// skipOrFail skips the test, or fails it under BLOBSHARE_REQUIRE_ALL=1.
func skipOrFail(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if requireAll() {
		tb.Fatalf("BLOBSHARE_REQUIRE_ALL=1: "+format, args...)
	}
	tb.Skipf(format, args...)
}

// needFUSE checks that this process can mount: /dev/fuse opens and we are
// root (DirectMount calls mount(2) itself).
func needFUSE(tb testing.TB) {
	tb.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		skipOrFail(tb, "FUSE unavailable: %v", err)
		return
	}
	f.Close()
	if os.Geteuid() != 0 {
		skipOrFail(tb, "FUSE DirectMount needs root (euid %d)", os.Geteuid())
	}
}

// testLogger logs through t.Log at debug level when -v and
// BLOBSHARE_FUSE_DEBUG=1, else discards.
func testLogger(tb testing.TB) *slog.Logger {
	if os.Getenv("BLOBSHARE_FUSE_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) { w.tb.Log(string(p)); return len(p), nil }

// mountTestNode mounts root under a fresh temporary directory and unmounts
// it in Cleanup. A mount failure skips (or fails under REQUIRE_ALL).
func mountTestNode(tb testing.TB, root gofs.InodeEmbedder) *Mounted {
	tb.Helper()
	needFUSE(tb)
	dir := filepath.Join(tb.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	m, err := mountNode(context.Background(), dir, root, mountConfig{Logger: testLogger(tb), Debug: os.Getenv("BLOBSHARE_FUSE_DEBUG") == "2"})
	if err != nil {
		if errors.Is(err, ErrMount) {
			skipOrFail(tb, "mount: %v", err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			tb.Errorf("unmount: %v", err)
		}
	})
	return m
}

// mountLoopback mounts go-fuse's loopback over a fresh directory on the same
// disk as t.TempDir(), with blobshare's mount options.
func mountLoopback(tb testing.TB) *Mounted {
	tb.Helper()
	return mountTestNode(tb, loopbackRoot(tb))
}

// loopbackRoot is the root of go-fuse's loopback over a fresh directory
// on the same disk as t.TempDir().
func loopbackRoot(tb testing.TB) gofs.InodeEmbedder {
	tb.Helper()
	orig := filepath.Join(tb.TempDir(), "orig")
	if err := os.Mkdir(orig, 0o755); err != nil {
		tb.Fatal(err)
	}
	root, err := gofs.NewLoopbackRoot(orig)
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

func newLoopbackForTest(orig string) (gofs.InodeEmbedder, error) { return gofs.NewLoopbackRoot(orig) }

// testFS is a real blobshare file system over a SQLite file and a local
// blob store under t.TempDir().
type testFS struct {
	data  string
	table *locks.Table
	fsys  *fs.FileSystem
}

// newTestFS opens (creating) the file system in data.
func openTestFS(tb testing.TB, data string) *testFS {
	tb.Helper()
	ctx := context.Background()
	table, err := locks.Open(ctx, filepath.Join(data, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		tb.Fatalf("locks.Open: %v", err)
	}
	store, err := local.New(filepath.Join(data, "blobs"))
	if err != nil {
		tb.Fatalf("local.New: %v", err)
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: testLogger(tb), SpillDir: filepath.Join(data, "spill")})
	if err != nil {
		tb.Fatalf("fs.New: %v", err)
	}
	tb.Cleanup(func() {
		if err := fsys.Close(ctx); err != nil {
			tb.Errorf("fs.Close: %v", err)
		}
		if err := table.Close(ctx); err != nil {
			tb.Errorf("locks.Close: %v", err)
		}
	})
	return &testFS{data: data, table: table, fsys: fsys}
}

// mountShare creates share "share" (if missing) in a fresh file system and
// mounts the whole account; it returns the file system and the share's
// directory on the mount.
func mountShare(tb testing.TB) (*testFS, string) {
	tb.Helper()
	needFUSE(tb)
	tfs := openTestFS(tb, tb.TempDir())
	m := mountTestFS(tb, tfs, Options{ShareMode: DefaultShareMode})
	share := filepath.Join(m.Dir(), "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		tb.Fatalf("mkdir share: %v", err)
	}
	return tfs, share
}

// mountTestFS mounts tfs under a temporary directory until Cleanup.
func mountTestFS(tb testing.TB, tfs *testFS, opts Options) *Mounted {
	tb.Helper()
	needFUSE(tb)
	dir := filepath.Join(tb.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(tb)
	}
	opts.Debug = os.Getenv("BLOBSHARE_FUSE_DEBUG") == "2"
	m, err := Mount(context.Background(), dir, tfs.fsys, opts)
	if err != nil {
		if errors.Is(err, ErrMount) {
			skipOrFail(tb, "mount: %v", err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			tb.Errorf("unmount: %v", err)
		}
	})
	return m
}
