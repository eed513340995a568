package filerest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// env is a blobshare FileREST endpoint on 127.0.0.1 over a real fs: a
// SQLite lock table and a local blob store in a temp dir.
type env struct {
	t       testing.TB
	dataDir string
	fs      *fs.FileSystem
	table   *locks.Table
	srv     *httptest.Server
	account string
	svc     *service.Client
	cred    *service.SharedKeyCredential
}

func quietLogger() *slog.Logger {
	if os.Getenv("BLOBSHARE_REST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newEnv(t testing.TB, tweak ...func(*filerest.Config)) *env {
	t.Helper()
	return newEnvStore(t, nil, tweak...)
}

// newEnvStore is newEnv whose blob store is wrap(the local store) when
// wrap is not nil (fault injection).
func newEnvStore(t testing.TB, wrap func(blobstore.Store) blobstore.Store, tweak ...func(*filerest.Config)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		t.Fatalf("locks.Open: %v", err)
	}
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quietLogger()))
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	var st blobstore.Store = store
	if wrap != nil {
		st = wrap(store)
	}
	cfg := filerest.Config{Logger: quietLogger()}
	for _, f := range tweak {
		f(&cfg)
	}
	// A clock injected into the server is fs's too: share leases expire
	// by fs's clock.
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: st, Logger: quietLogger(), SpillDir: dir, Now: cfg.Now})
	if err != nil {
		t.Fatalf("fs.New: %v", err)
	}
	cfg.FS = fsys
	srv, err := filerest.New(cfg)
	if err != nil {
		t.Fatalf("filerest.New: %v", err)
	}
	e := &env{t: t, dataDir: dir, fs: fsys, table: table, srv: httptest.NewServer(srv), account: filerest.DevAccount}
	t.Cleanup(func() {
		e.srv.Close()
		if err := fsys.Close(ctx); err != nil {
			t.Logf("fs close: %v", err)
		}
		if err := table.Close(ctx); err != nil {
			t.Logf("table close: %v", err)
		}
	})
	e.cred, err = service.NewSharedKeyCredential(filerest.DevAccount, filerest.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	e.svc, err = service.NewClientWithSharedKeyCredential(e.serviceURL(), e.cred, e.serviceOptions())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// serviceURL is the path-style account URL (filerest.md §1).
func (e *env) serviceURL() string { return e.srv.URL + "/" + e.account + "/" }

// clientOptions: no retries (a failure must show at once) and short tries.
func (e *env) clientOptions() azcore.ClientOptions {
	return azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Minute}}
}

func (e *env) serviceOptions() *service.ClientOptions {
	return &service.ClientOptions{ClientOptions: e.clientOptions()}
}

func (e *env) share(name string) *share.Client { return e.svc.NewShareClient(name) }

func (e *env) dir(shareName, path string) *directory.Client {
	if path == "" {
		return e.share(shareName).NewRootDirectoryClient()
	}
	return e.share(shareName).NewDirectoryClient(path)
}

func (e *env) file(shareName, path string) *file.Client {
	return e.share(shareName).NewRootDirectoryClient().NewFileClient(path)
}

// mustShare creates a share through the SDK.
func (e *env) mustShare(name string) *share.Client {
	e.t.Helper()
	c := e.share(name)
	if _, err := c.Create(context.Background(), nil); err != nil {
		e.t.Fatalf("create share %s: %v", name, err)
	}
	return c
}

// mustFile creates a file with content through the SDK.
func (e *env) mustFile(shareName, path string, content []byte) *file.Client {
	e.t.Helper()
	ctx := context.Background()
	f := e.file(shareName, path)
	if _, err := f.Create(ctx, int64(len(content)), nil); err != nil {
		e.t.Fatalf("create %s: %v", path, err)
	}
	if len(content) > 0 {
		if err := f.UploadBuffer(ctx, content, nil); err != nil {
			e.t.Fatalf("upload %s: %v", path, err)
		}
	}
	return f
}

// open opens a handle through the fs core, as a session or FUSE open is.
func (e *env) open(path string, access locks.Access, shareMode locks.ShareMode) *fs.Handle {
	e.t.Helper()
	h, _, err := e.fs.OpenByPath(context.Background(), fs.OpenPathRequest{Path: path, Open: fs.OpenOptions{
		Access: access, Share: shareMode, SessionID: 42, ClientName: "testclient", ClientIP: "10.0.0.7",
	}})
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	e.t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func openReq(path string, access locks.Access) fs.OpenPathRequest {
	return fs.OpenPathRequest{Path: path, Open: fs.OpenOptions{Access: access, Share: locks.ShareAll}}
}
