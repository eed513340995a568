package smb

import (
	"context"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// renameBreak is the caching decision before a SET_INFO rename through
// o (MS-FSA 2.1.4.12: renaming a file breaks the Handle caching of every
// other open's cache on it, and the rename waits for the
// acknowledgment, as smbd's does; o's own lease is not broken). It
// returns the call to wait with, and whether the rename must wait.
func (c *conn) renameBreak(ctx context.Context, o *open) (locks.CacheCall, bool) {
	t := c.srv.cfg.Caching
	if t == nil || o.h == nil {
		return locks.CacheCall{}, false
	}
	if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
		return locks.CacheCall{}, false
	}
	req := locks.CacheRequest{Who: locks.RequesterSMB, Kind: locks.CacheOpRename, Handle: o.h.ID()}
	if o.lease != nil {
		id := o.lease.LeaseIdentity
		req.Lease = &id
	}
	cc := locks.CacheCall{File: o.h.File(), Req: req, BreakTimeout: c.srv.cfg.BreakTimeout}
	r, err := t.DecideCacheUpdate(ctx, cc)
	if err != nil {
		c.log.Debug("smb: caching decision before a rename", "path", o.path, "err", err)
		return cc, false
	}
	if len(r.Breaks) > 0 {
		// The breaks go out now, before this connection answers
		// anything else, as smbd sends them (smbtorture
		// smb2.lease.rename_wait expects the break before the response
		// to its next CREATE); the deliverer would send them a moment
		// later.
		c.srv.sendBreaksNow(ctx)
	}
	return cc, r.Wait
}

// sendBreaksNow takes this process's outbox and sends its breaks, as one
// round of deliverBreaks does.
func (s *Server) sendBreaksNow(ctx context.Context) {
	var notes []locks.BreakNote
	err := s.cfg.Caching.Update(ctx, func(tx *locks.Tx) error {
		var err error
		notes, err = tx.TakeBreaks()
		return err
	})
	if err != nil {
		s.log.Debug("smb: reading the break outbox", "err", err)
		return
	}
	for _, n := range notes {
		s.sendBreak(n)
	}
}

// renameAsync answers a rename that waits for a break: STATUS_PENDING,
// then, once the holders acknowledged, closed their opens or the break
// timed out, the rename (do) under the session's lock, as the connection
// would have run it.
func (c *conn) renameAsync(req *request, o *open, cc locks.CacheCall, do func(ctx context.Context) ntstatus.Status) {
	sess := req.sess
	req.asyncID = c.goPendingBody(req, o, ntstatus.FileClosed, func(ctx context.Context) (ntstatus.Status, []byte) {
		if _, err := c.srv.cfg.Caching.WaitCache(ctx, cc, 0); err != nil {
			return ntstatus.Cancelled, nil
		}
		if !lockSession(ctx, sess) {
			return ntstatus.Cancelled, nil
		}
		defer sess.mu.Unlock()
		if st := do(ctx); st != ntstatus.Success {
			return st, nil
		}
		return ntstatus.Success, []byte{2, 0} // SET_INFO's response (MS-SMB2 2.2.40)
	})
}

// cachedHere reports whether an open of file on this connection other
// than o holds caching. A rename in the middle of a compound waits in
// place, with the connection's loop: a break such an open must
// acknowledge could not be read until the wait timed out (the Linux
// client's create-rename-close of a file it keeps open under its own
// lease), so the rename then goes on once the breaks are sent.
func (c *conn) cachedHere(file fs.FileID, o *open) bool {
	h := &c.srv.caches
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.opens {
		if r.c == c && r.o != o && r.o.h != nil && r.o.h.File() == file {
			return true
		}
	}
	return false
}
