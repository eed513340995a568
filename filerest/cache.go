package filerest

// FileREST against SMB caching (Azure's "Interaction between FileREST and
// SMB opportunistic locks", ../shared/spec/smb-leases.md §1): before an
// operation on a file, the lock table decides which oplocks and leases of
// SMB clients it breaks (locks.DecideCaching, restLoss). Non-blocking
// breaks are recorded and the operation goes on; a blocking break (Write
// or Handle caching lost) is waited for, outside any write transaction,
// at most the request's timeout (timeout=, capped at 30 s), and then the
// operation runs from the start: Get File reads what the client flushed
// before it acknowledged; Delete File meets a handle that survived the
// Handle break as a sharing violation (409). A break that is not
// acknowledged in time answers ClientCacheFlushDelay (status: doc.go).

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/storagehttp"
)

// CodeClientCacheFlushDelay is Azure's code for a blocking oplock break
// not acknowledged within the request's timeout.
const CodeClientCacheFlushDelay = "ClientCacheFlushDelay"

// maxCacheWait is FileREST's longest wait for a break: "within the
// specified request timeout, or within 30 seconds, whichever completes
// first".
const maxCacheWait = 30 * time.Second

// errClientCacheFlushDelay answers a break that timed out (doc.go: 500,
// as the error code table says).
func errClientCacheFlushDelay() error {
	return storagehttp.NewError(http.StatusInternalServerError, CodeClientCacheFlushDelay,
		"The specified resource state could not be flushed from an SMB client in the specified time.")
}

// cacheWait is how long c may wait for a break: its timeout= (seconds),
// at most 30 s.
func cacheWait(c *call) time.Duration {
	if v := c.q.Get("timeout"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return min(time.Duration(n)*time.Second, maxCacheWait)
		}
	}
	return maxCacheWait
}

// breakCaches runs the break check for op on c's file and waits for the
// blocking breaks (see the file comment). It does nothing without a lock
// table (Config.Caching), when nothing anywhere is cached, or when the
// path names no file (the operation answers that itself).
func (s *Server) breakCaches(c *call, op locks.Op) error {
	t := s.caching
	if t == nil {
		return nil
	}
	ctx := c.r.Context()
	if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
		return nil
	}
	a, _, err := s.fs.Stat(ctx, c.fsPath(), "")
	if err != nil || a.Kind.IsDir() {
		return nil
	}
	return s.waitBreaks(c, a.ID, op)
}

// waitBreaks decides op's breaks on file and waits for the blocking ones
// (breakCaches, breakDirCaches).
func (s *Server) waitBreaks(c *call, file locks.FileID, op locks.Op) error {
	t, ctx := s.caching, c.r.Context()
	cc := locks.CacheCall{File: file, Req: locks.CacheRequest{Who: locks.RequesterREST, Kind: locks.CacheOpREST, REST: op}}
	wctx, cancel := context.WithTimeout(ctx, s.cacheWait(c))
	defer cancel()
	_, err := t.WaitCache(wctx, cc, 0)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return errClientCacheFlushDelay()
	}
	return err
}

// cacheWait is the wait for one request: Config.CacheWait when set (tests),
// else cacheWait(c).
func (s *Server) cacheWait(c *call) time.Duration {
	if s.cacheWaitMax > 0 {
		return min(s.cacheWaitMax, cacheWait(c))
	}
	return cacheWait(c)
}
