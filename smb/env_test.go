package smb_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/smb"
)

// env is one data directory served at once over FileREST (httptest) and
// SMB (127.0.0.1:0), as `blobshare serve` serves it.
type env struct {
	t       testing.TB
	fs      *fs.FileSystem
	table   *locks.Table
	rest    *httptest.Server
	smbAddr string
	svc     *service.Client
}

func testLogger() *slog.Logger {
	if os.Getenv("BLOBSHARE_SMB_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newEnv serves a fresh data directory; opts adjust the SMB server's
// configuration.
func newEnv(t testing.TB, opts ...func(*smb.Config)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: fs.RemoveFile})
	if err != nil {
		t.Fatalf("locks.Open: %v", err)
	}
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: testLogger(), SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	h, err := filerest.New(filerest.Config{FS: fsys, Logger: testLogger(), Caching: table})
	if err != nil {
		t.Fatal(err)
	}
	cfg := smb.Config{FS: fsys, Account: filerest.DevAccount, Key: filerest.DevKey, Logger: testLogger(), Caching: table}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := smb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	e := &env{t: t, fs: fsys, table: table, rest: httptest.NewServer(h), smbAddr: ln.Addr().String()}
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != smb.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
		e.rest.Close()
		if err := fsys.Close(ctx); err != nil {
			t.Logf("fs close: %v", err)
		}
		if err := table.Close(ctx); err != nil {
			t.Logf("table close: %v", err)
		}
	})
	cred, err := service.NewSharedKeyCredential(filerest.DevAccount, filerest.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	e.svc, err = service.NewClientWithSharedKeyCredential(e.rest.URL+"/"+filerest.DevAccount+"/", cred,
		&service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// mustShare creates a share over REST.
func (e *env) mustShare(name string) *share.Client {
	e.t.Helper()
	c := e.svc.NewShareClient(name)
	if _, err := c.Create(context.Background(), nil); err != nil {
		e.t.Fatalf("create share %s: %v", name, err)
	}
	return c
}

func (e *env) file(shareName, path string) *file.Client {
	return e.svc.NewShareClient(shareName).NewRootDirectoryClient().NewFileClient(path)
}

// dial logs on with go-smb2, signing required, and mounts shareName.
func (e *env) dial(shareName string) *smb2.Share {
	e.t.Helper()
	return e.dialAs(shareName, filerest.DevAccount, filerest.DevKey)
}

func (e *env) dialAs(shareName, user, password string) *smb2.Share {
	e.t.Helper()
	s, err := e.session(user, password)
	if err != nil {
		e.t.Fatalf("session setup: %v", err)
	}
	sh, err := s.Mount(shareName)
	if err != nil {
		e.t.Fatalf("mount %s: %v", shareName, err)
	}
	e.t.Cleanup(func() { sh.Umount() })
	return sh
}

func (e *env) session(user, password string) (*smb2.Session, error) {
	return e.sessionDialect(user, password, 0)
}

// sessionDialect logs on with go-smb2 offering only dialect (0: all).
func (e *env) sessionDialect(user, password string, dialect uint16) (*smb2.Session, error) {
	nc, err := net.Dial("tcp", e.smbAddr)
	if err != nil {
		return nil, err
	}
	d := &smb2.Dialer{
		Negotiator: smb2.Negotiator{RequireMessageSigning: true, SpecifiedDialect: dialect},
		Initiator:  &smb2.NTLMInitiator{User: user, Password: password},
	}
	s, err := d.Dial(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	e.t.Cleanup(func() { s.Logoff() })
	return s, nil
}
