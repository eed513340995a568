package endpoint

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake serves until shut down or until the test makes it fail, and
// records its shutdowns in a shared log.
type fake struct {
	name     string
	fail     chan error // a value: Serve returns it now
	stopped  chan struct{}
	mu       *sync.Mutex
	log      *[]string
	shutErr  error
	serving  chan struct{} // closed when Serve has started
	returned chan struct{} // closed when Serve has returned
}

func newFake(name string, mu *sync.Mutex, log *[]string) *fake {
	return &fake{name: name, fail: make(chan error, 1), stopped: make(chan struct{}), mu: mu, log: log,
		serving: make(chan struct{}), returned: make(chan struct{})}
}

func (f *fake) Name() string { return f.name }

func (f *fake) Serve(net.Listener) error {
	close(f.serving)
	defer close(f.returned)
	select {
	case err := <-f.fail:
		return err
	case <-f.stopped:
		return nil
	}
}

func (f *fake) Shutdown(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, f.name)
	if slices.Index(*f.log, f.name) == len(*f.log)-1 { // the first shutdown of f
		close(f.stopped)
	}
	return f.shutErr
}

// TestRunStopsAllOnFirstFailure: the first endpoint to stop serving on its
// own stops every endpoint, the last given first, each shut down exactly
// once; Run returns only when every Serve has returned, with a
// *FailedError naming the endpoint. A cancelled context (a signal) stops
// them all with no error.
func TestRunStopsAllOnFirstFailure(t *testing.T) {
	listenerDied := errors.New("accept tcp 127.0.0.1:445: invalid argument")
	for _, tc := range []struct {
		name    string
		failing int   // index of the endpoint that fails; -1: the context ends
		err     error // what its Serve returns
		want    string
	}{
		{"the queue's listener fails", 1, listenerDied, "the queue endpoint failed, every endpoint stopped: " + listenerDied.Error()},
		{"smb returns nil before shutdown", 3, nil, "the smb endpoint failed, every endpoint stopped: stopped serving"},
		{"a signal", -1, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var stopped []string
			names := []string{"rest", "queue", "mount", "smb"}
			var fakes []*fake
			var eps []Bound
			for _, n := range names {
				f := newFake(n, &mu, &stopped)
				fakes = append(fakes, f)
				eps = append(eps, Bound{Endpoint: f})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var causes []error
			result := make(chan error, 1)
			go func() {
				result <- Run(ctx, time.Second, func(c error) { causes = append(causes, c) }, eps...)
			}()
			for _, f := range fakes {
				<-f.serving
			}
			if tc.failing < 0 {
				cancel()
			} else {
				fakes[tc.failing].fail <- tc.err
			}
			err := <-result
			for _, f := range fakes {
				select {
				case <-f.returned:
				default:
					t.Fatalf("Run returned before %s's Serve did", f.name)
				}
			}
			if tc.failing < 0 {
				if err != nil {
					t.Fatalf("a signal: %v", err)
				}
			} else {
				var fe *FailedError
				if !errors.As(err, &fe) || fe.Endpoint != names[tc.failing] {
					t.Fatalf("got %v, want a FailedError of %s", err, names[tc.failing])
				}
				if err.Error() != tc.want {
					t.Fatalf("got %q, want %q", err, tc.want)
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("%v does not wrap the listener's error", err)
				}
			}
			if got := strings.Join(stopped, ","); got != "smb,mount,queue,rest" {
				t.Fatalf("shut down %s, want every endpoint once, the last given first", got)
			}
			if len(causes) != 1 || (causes[0] == nil) != (tc.failing < 0) {
				t.Fatalf("onStop called with %v, want once with the cause", causes)
			}
		})
	}
}

// TestRunShutdownErrors: a shutdown error is returned with its endpoint's
// name, joined to the failure, and does not keep the others from stopping.
func TestRunShutdownErrors(t *testing.T) {
	var mu sync.Mutex
	var stopped []string
	a, b := newFake("blob", &mu, &stopped), newFake("table", &mu, &stopped)
	b.shutErr = errors.New("database is locked")
	a.fail <- errors.New("listener gone")
	err := Run(context.Background(), time.Second, nil, Bound{Endpoint: a}, Bound{Endpoint: b})
	var fe *FailedError
	if !errors.As(err, &fe) || fe.Endpoint != "blob" {
		t.Fatalf("got %v, want the blob failure", err)
	}
	if !strings.Contains(err.Error(), "stopping the table endpoint: database is locked") {
		t.Fatalf("got %v, want the table's shutdown error too", err)
	}
	if got := strings.Join(stopped, ","); got != "table,blob" {
		t.Fatalf("shut down %s", got)
	}
}

// TestStopBeforeServe: Stop releases endpoints that never served (a start
// that failed halfway): the HTTP server's listener is closed and its store
// closed once.
func TestStopBeforeServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := &countCloser{}
	h := &HTTP{Label: "queue", Server: &http.Server{}, Store: store}
	if err := Stop(time.Second, Bound{Endpoint: h, Listener: ln}); err != nil {
		t.Fatal(err)
	}
	if store.n != 1 {
		t.Fatalf("store closed %d times, want 1", store.n)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listener after Stop: Accept = %v, want closed", err)
	}
}

type countCloser struct{ n int }

func (c *countCloser) Close() error { c.n++; return nil }

var _ io.Closer = (*countCloser)(nil)

// TestHTTPListenerFailure: a real HTTP endpoint whose listener fails while
// serving stops Run with its name; a Func endpoint (the mount) beside it
// is stopped once and its Serve returns.
func TestHTTPListenerFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln, fail: make(chan struct{})}
	store := &countCloser{}
	h := &HTTP{Label: "rest", Server: &http.Server{Handler: http.NotFoundHandler()}, Store: store}
	unmounts := 0
	m := NewFunc("mount", func() error { unmounts++; return nil })
	result := make(chan error, 1)
	go func() {
		result <- Run(context.Background(), time.Second, nil, Bound{Endpoint: m}, Bound{Endpoint: h, Listener: fl})
	}()
	// One request is served: the endpoint is up.
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	close(fl.fail)
	err = <-result
	var fe *FailedError
	if !errors.As(err, &fe) || fe.Endpoint != "rest" || !errors.Is(err, errListenerBroken) {
		t.Fatalf("got %v, want the rest endpoint's listener failure", err)
	}
	if unmounts != 1 || store.n != 1 {
		t.Fatalf("unmounted %d times, store closed %d times; want 1 and 1", unmounts, store.n)
	}
}

var errListenerBroken = errors.New("listener broken")

// failingListener's Accept fails for good once fail is closed, as a
// listening socket shut down under its server does.
type failingListener struct {
	net.Listener
	fail chan struct{}
}

func (l *failingListener) Accept() (net.Conn, error) {
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := l.Listener.Accept()
		ch <- accepted{c, err}
	}()
	select {
	case a := <-ch:
		return a.c, a.err
	case <-l.fail:
		l.Listener.Close()
		if a := <-ch; a.c != nil {
			a.c.Close()
		}
		return nil, errListenerBroken
	}
}
