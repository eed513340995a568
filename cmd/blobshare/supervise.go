package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/blobshare/blobshare/fs/fusefs"
)

// endpoint is one way in that serve runs: FileREST, SMB, Blob, Queue,
// Table, the mount. failed delivers the error that stopped it serving on
// its own (a listener failure; nil channel: it never fails so); shutdown
// stops it, waiting for work in flight until ctx ends, and releases what
// it owns. Shutting down an endpoint that failed is allowed.
type endpoint interface {
	endpointName() string
	failed() <-chan error
	shutdown(ctx context.Context) error
}

// supervise runs until ctx ends or the first endpoint fails, then shuts
// every endpoint down, the last started first, within shutdownGrace. It
// returns the failure that stopped serve (nil for a signal) joined with
// any shutdown error. One endpoint's failure stops all: a serve whose SMB
// or Queue endpoint died must not go on looking healthy.
func supervise(ctx context.Context, eps []endpoint, logger *slog.Logger) error {
	first := make(chan error, len(eps))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, e := range eps {
		ch := e.failed()
		if ch == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case err := <-ch:
				first <- fmt.Errorf("%s server: %w", e.endpointName(), err)
			case <-done:
			}
		}()
	}
	var cause error
	select {
	case <-ctx.Done():
	case cause = <-first:
		logger.Error("an endpoint failed: stopping every endpoint", "err", cause)
	}
	close(done)
	wg.Wait()
	logger.Info("blobshare stopping")
	return errors.Join(cause, stopAll(eps))
}

// stopAll shuts eps down, the last first, within shutdownGrace.
func stopAll(eps []endpoint) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	for i := len(eps) - 1; i >= 0; i-- {
		if err := eps[i].shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mountEndpoint is serve's FUSE mount as an endpoint: it stops by
// unmounting.
type mountEndpoint struct{ m *fusefs.Mounted }

func (mountEndpoint) endpointName() string                { return "mount" }
func (mountEndpoint) failed() <-chan error                { return nil }
func (e mountEndpoint) shutdown(context.Context) error    { return e.m.Unmount() }
func (e *httpEndpoint) endpointName() string              { return e.name }
func (e *smbEndpoint) endpointName() string               { return "smb" }
func (e *smbEndpoint) shutdown(ctx context.Context) error { return e.stop() }
