package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/integration/servetest"
)

// fakeEndpoint records its shutdown in a shared log.
type fakeEndpoint struct {
	name string
	fail chan error
	mu   *sync.Mutex
	log  *[]string
}

func (f fakeEndpoint) endpointName() string { return f.name }
func (f fakeEndpoint) failed() <-chan error { return f.fail }
func (f fakeEndpoint) shutdown(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, f.name)
	return nil
}

// TestSuperviseStopsAllOnFirstFailure: one endpoint's failure stops every
// endpoint, the last started first, and is what supervise returns; a
// cancelled context (a signal) stops them all with no error.
func TestSuperviseStopsAllOnFirstFailure(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name    string
		failing int // index of the endpoint that fails; -1: none, the context ends
	}{
		{"the queue fails", 1},
		{"smb fails", 3},
		{"a signal", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var stopped []string
			names := []string{"rest", "queue", "mount", "smb"}
			var eps []endpoint
			for i, n := range names {
				f := fakeEndpoint{name: n, mu: &mu, log: &stopped}
				if n != "mount" { // the mount never fails on its own
					f.fail = make(chan error, 1)
				}
				if i == tc.failing {
					f.fail <- errors.New("listener closed")
				}
				eps = append(eps, f)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.failing < 0 {
				cancel()
			}
			err := supervise(ctx, eps, quiet)
			if tc.failing < 0 {
				if err != nil {
					t.Fatalf("a signal: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), names[tc.failing]+" server: listener closed") {
				t.Fatalf("got %v, want the %s failure", err, names[tc.failing])
			}
			if got := strings.Join(stopped, ","); got != "smb,mount,queue,rest" {
				t.Fatalf("stopped %s, want every endpoint, the last started first", got)
			}
		})
	}
}

// TestServeAddrOff: --addr off turns FileREST off like every other
// endpoint flag (cli-contract.md); the other services serve.
func TestServeAddrOff(t *testing.T) {
	srv, err := servetest.Start(blobshareBinary(t), t.TempDir(), "--addr", "off", "--smb", "off")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if srv.RESTURL != "off" {
		t.Fatalf("rest=%s in the serving line, want off", srv.RESTURL)
	}
	resp, err := http.Get(srv.BlobURL + "?comp=list")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Blob without credentials answered %d, want it serving (401/403)", resp.StatusCode)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
}
