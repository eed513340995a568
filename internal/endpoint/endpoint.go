package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Endpoint is one way into serve. Serve serves ln (nil for an endpoint
// with no listener) until Shutdown and then returns nil; any return before
// Shutdown is a failure. Shutdown stops it, waiting for work in flight
// until ctx ends, and releases what it owns; it may be called whether or
// not Serve ever ran, and Stop and Run call it once.
type Endpoint interface {
	Name() string
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
}

// Bound is an endpoint with the listener it serves (nil: none).
type Bound struct {
	Endpoint
	Listener net.Listener
}

// FailedError is Run's error when an endpoint stopped serving on its own.
type FailedError struct {
	Endpoint string // its Name
	Err      error  // what its Serve returned; ErrStopped when nil
}

// ErrStopped is a FailedError's Err when Serve returned nil before
// Shutdown: it stopped serving without saying why.
var ErrStopped = errors.New("stopped serving")

func (e *FailedError) Error() string {
	return fmt.Sprintf("the %s endpoint failed, every endpoint stopped: %v", e.Endpoint, e.Err)
}

func (e *FailedError) Unwrap() error { return e.Err }

// served is one Serve's return.
type served struct {
	i   int
	err error
}

// Run serves eps until ctx ends or one of them stops serving on its own,
// then stops them all (Stop, within grace) and waits for every Serve to
// return. It returns the *FailedError of the endpoint that stopped first
// (nil when ctx ended), joined with the errors of the shutdowns and of
// Serves that failed while shutting down. onStop, if not nil, is called
// once before the shutdowns with that cause (nil for ctx): serve logs
// there.
func Run(ctx context.Context, grace time.Duration, onStop func(cause error), eps ...Bound) error {
	done := make(chan served, len(eps))
	var wg sync.WaitGroup
	for i, e := range eps {
		wg.Go(func() { done <- served{i, e.Serve(e.Listener)} })
	}
	var cause error
	returned := make([]bool, len(eps))
	select {
	case <-ctx.Done():
	case s := <-done:
		returned[s.i] = true
		err := s.err
		if err == nil {
			err = ErrStopped
		}
		cause = &FailedError{Endpoint: eps[s.i].Name(), Err: err}
	}
	if onStop != nil {
		onStop(cause)
	}
	errs := []error{cause, Stop(grace, eps...)}
	wg.Wait()
	close(done)
	for s := range done {
		if s.err != nil && !returned[s.i] {
			errs = append(errs, fmt.Errorf("%s: %w", eps[s.i].Name(), s.err))
		}
	}
	return errors.Join(errs...)
}

// Stop shuts eps down, the last first, within grace, and closes their
// listeners: the one cleanup of serve's endpoints, whether Run was
// serving them or a start failed before it. Each error names its
// endpoint.
func Stop(grace time.Duration, eps ...Bound) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var errs []error
	for i := len(eps) - 1; i >= 0; i-- {
		e := eps[i]
		if err := e.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping the %s endpoint: %w", e.Name(), err))
		}
		if e.Listener != nil {
			// Closed already when its server served it; one that never
			// served is released here.
			e.Listener.Close()
		}
	}
	return errors.Join(errs...)
}
