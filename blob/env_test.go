package blob_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/blobsvc/sqlstore"
)

// env is a Blob service over SQLite and a local content store in a temp
// dir, served over real HTTP by httptest on 127.0.0.1:0.
type env struct {
	URL     string // http://127.0.0.1:PORT/devstoreaccount1
	ConnStr string // the devstore connection string for this port
	Svc     *blobsvc.Service
}

// fakeClock is a settable clock for leases and Last-Modified times.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newEnv starts a server; now nil means the real clock.
func newEnv(t testing.TB, now func() time.Time) *env {
	t.Helper()
	dir := t.TempDir()
	meta, err := sqlstore.Open(context.Background(), filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	content, err := local.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc := blobsvc.New(meta, content, now)
	if err := svc.EnsureSystemContainers(context.Background()); err != nil { // as serve does
		t.Fatal(err)
	}
	h, err := blob.New(blob.Config{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		meta.Close()
	})
	u := srv.URL + "/" + blob.DevAccount
	return &env{URL: u, Svc: svc,
		ConnStr: "DefaultEndpointsProtocol=http;AccountName=" + blob.DevAccount + ";AccountKey=" + blob.DevKey + ";BlobEndpoint=" + u + ";"}
}

// client is an azblob client from the connection string, no retries (a
// failure must show, not be retried away).
func (e *env) client(t testing.TB) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString(e.ConnStr, &azblob.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
