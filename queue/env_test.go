package queue_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/msgqueue/sqlstore"
	"github.com/blobshare/blobshare/queue"
)

// env is a Queue service over SQLite in a temp dir, served by httptest.
type env struct {
	URL     string // http://127.0.0.1:PORT/devstoreaccount1
	ConnStr string // the devstore connection string for this port
	Svc     *msgqueue.Service
}

// fakeClock is a settable clock for the service's message times; time
// moves only when a test advances it.
type fakeClock struct {
	mu      sync.Mutex
	t       time.Time
	changed chan struct{} // closed (and replaced) by every Advance
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// waitUntil returns true once the clock reads at or after t, false if
// stop closes or ctx ends first. It waits on Advance events, not on real
// time.
func (c *fakeClock) waitUntil(ctx context.Context, t time.Time, stop <-chan struct{}) bool {
	for {
		c.mu.Lock()
		now, changed := c.t, c.changed
		c.mu.Unlock()
		if !now.Before(t) {
			return true
		}
		select {
		case <-changed:
		case <-stop:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// newEnv starts a server; now nil means the real clock.
func newEnv(t testing.TB, now func() time.Time) *env {
	t.Helper()
	store, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	svc := msgqueue.New(store, now)
	h, err := queue.New(queue.Config{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		store.Close()
	})
	u := srv.URL + "/" + queue.DevAccount
	return &env{URL: u, Svc: svc,
		ConnStr: "DefaultEndpointsProtocol=http;AccountName=" + queue.DevAccount + ";AccountKey=" + queue.DevKey + ";QueueEndpoint=" + u + ";"}
}

// service is an azqueue client from the connection string, no retries
// (a failure must show, not be retried away).
func (e *env) service(t testing.TB) *azqueue.ServiceClient {
	t.Helper()
	c, err := azqueue.NewServiceClientFromConnectionString(e.ConnStr, &azqueue.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
