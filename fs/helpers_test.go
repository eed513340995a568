package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/locks"
)

// skipKeyLockEnv names the namespace decision whose key locks the
// FileSystems of this test process leave out (Config.skipKeyLock): set
// only by TestLockAudit for the child processes it runs tests in.
const skipKeyLockEnv = "BLOBSHARE_FS_TEST_SKIP_KEY_LOCK"

// env is one "process": a lock table and a FileSystem over a data dir.
type env struct {
	t     testing.TB
	dir   string
	table *locks.Table
	fs    *FileSystem
	store *local.Store
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// openEnv opens a FileSystem over dir (a second call on the same dir is a
// second "process" sharing the database and the blob store).
func openEnv(t testing.TB, dir string) *env {
	t.Helper()
	ctx := context.Background()
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: RemoveFile})
	if err != nil {
		t.Fatalf("locks.Open: %v", err)
	}
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	fsys, err := New(ctx, Config{Table: table, Store: store, Logger: quietLogger(), SpillDir: dir,
		skipKeyLock: os.Getenv(skipKeyLockEnv)})
	if err != nil {
		t.Fatalf("fs.New: %v", err)
	}
	e := &env{t: t, dir: dir, table: table, fs: fsys, store: store}
	t.Cleanup(func() { e.close() })
	return e
}

func (e *env) close() {
	if e.fs == nil {
		return
	}
	ctx := context.Background()
	if err := e.fs.Close(ctx); err != nil {
		e.t.Logf("fs close: %v", err)
	}
	if err := e.table.Close(ctx); err != nil {
		e.t.Logf("table close: %v", err)
	}
	e.fs = nil
}

func newEnv(t testing.TB) *env { return openEnv(t, t.TempDir()) }

var ctxBG = context.Background()

// share creates a share and returns its id.
func (e *env) share(name string) FileID {
	e.t.Helper()
	a, err := e.fs.CreateShare(ctxBG, ShareRequest{Name: name})
	if err != nil {
		e.t.Fatalf("create share %s: %v", name, err)
	}
	return a.ID
}

var allShare = locks.ShareRead | locks.ShareWrite | locks.ShareDelete
var rw = locks.AccessRead | locks.AccessWrite

// open opens a file by path (SMB view).
func (e *env) open(path string, access locks.Access, share locks.ShareMode, disp Disposition) (*Handle, error) {
	h, _, err := e.fs.OpenByPath(ctxBG, OpenPathRequest{Path: path, Disposition: disp, Open: OpenOptions{Access: access, Share: share}})
	return h, err
}

func (e *env) mustOpen(path string, access locks.Access, share locks.ShareMode, disp Disposition) *Handle {
	e.t.Helper()
	h, err := e.open(path, access, share, disp)
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	return h
}

// putFile creates path with content through REST.
func (e *env) putFile(path string, data []byte) {
	e.t.Helper()
	if _, err := e.fs.CreateFile(ctxBG, CreateFileRequest{Path: path, Size: int64(len(data))}); err != nil {
		e.t.Fatalf("create %s: %v", path, err)
	}
	for off := 0; off < len(data); off += maxPutRange {
		end := min(off+maxPutRange, len(data))
		if _, err := e.fs.PutRange(ctxBG, PutRangeRequest{Path: path, Offset: int64(off), Length: int64(end - off), Body: bytes.NewReader(data[off:end])}); err != nil {
			e.t.Fatalf("put range %s: %v", path, err)
		}
	}
}

// content reads a whole file through REST.
func (e *env) content(path string) []byte {
	e.t.Helper()
	b, err := e.get(path)
	if err != nil {
		e.t.Fatalf("get %s: %v", path, err)
	}
	return b
}

func (e *env) get(path string) ([]byte, error) {
	fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: path, Length: -1})
	if err != nil {
		return nil, err
	}
	defer fr.Close()
	return io.ReadAll(fr)
}

func mustNil(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantErr(t testing.TB, err, want error, what string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: unexpected error %v", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func wantLease(t testing.TB, err error, code locks.LeaseCode, what string) {
	t.Helper()
	var le *locks.LeaseError
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("%s: got %v, want lease error %s", what, err, code)
	}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

var _ = time.Second
