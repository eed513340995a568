package main

import (
	"context"
	"log/slog"

	"github.com/blobshare/blobshare/internal/endpoint"
)

// supervise runs serve's endpoints under one supervisor (package
// internal/endpoint) until ctx ends (SIGINT/SIGTERM) or the first of them
// fails, then stops every endpoint, the last started first, within
// shutdownGrace. It returns the failure that stopped serve, naming the
// endpoint (nil for a signal), joined with any shutdown error: one
// endpoint's failure stops all, so a serve whose SMB or Queue endpoint
// died exits non-zero with one line instead of going on looking healthy.
func supervise(ctx context.Context, eps []endpoint.Bound, logger *slog.Logger) error {
	return endpoint.Run(ctx, shutdownGrace, func(cause error) {
		if cause != nil {
			logger.Error("an endpoint failed: stopping every endpoint", "err", cause)
		}
		logger.Info("blobshare stopping")
	}, eps...)
}
