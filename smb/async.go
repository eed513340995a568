package smb

import (
	"context"
	"errors"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// pendingOp is a request answered STATUS_PENDING (an interim response)
// whose final response a goroutine of the connection sends later: a
// blocking LOCK waiting for its range.
type pendingOp struct {
	asyncID   uint64
	messageID uint64
	sessionID uint64
	command   uint16
	open      *open
	// closed is the final status when the open closes first.
	closed ntstatus.Status
	// cancel ends the wait; its cause is the status of the final
	// response (STATUS_CANCELLED for CANCEL, STATUS_RANGE_NOT_LOCKED when
	// the open closes).
	cancel context.CancelCauseFunc
	// stopped closes when the wait is over (nothing touches the open any
	// more); interimSent when the loop has sent the interim response,
	// which the final response must follow.
	stopped, interimSent chan struct{}
	// rest is the rest of the compound the request is part of (nil: none),
	// served after it completes (continue); treeID the tree its related
	// requests inherit. Set by the connection loop before interimSent.
	rest   []byte
	treeID uint32
	// inline is set when the request may not go async (settleInline):
	// its goroutine then leaves the final status and body in st and body
	// for the loop, sending nothing.
	inline bool
	st     ntstatus.Status
	body   []byte
}

// statusCause carries the final status of a cancelled pending request as a
// context cause.
type statusCause struct{ st ntstatus.Status }

func (s statusCause) Error() string { return "smb: pending request ended: " + s.st.String() }

// lockWaitBackoff bounds the interval between retries of a blocking lock:
// the lock table has no waiters, so a waiting lock retries as the FUSE
// mount's F_SETLKW does.
const lockWaitBackoff = 20 * time.Millisecond

// goPending registers a pending request and returns its async id; start
// (called by the connection loop once the interim response is sent) runs
// wait on a goroutine and sends its final response.
func (c *conn) goPending(req *request, o *open, closed ntstatus.Status, wait func(ctx context.Context) ntstatus.Status) uint64 {
	return c.goPendingBody(req, o, closed, func(ctx context.Context) (ntstatus.Status, []byte) { return wait(ctx), nil })
}

// goPendingBody is goPending for a request whose final response carries a
// body of its own (an async CREATE's): wait returns the final status and
// body (nil: the empty success body, or the error body).
func (c *conn) goPendingBody(req *request, o *open, closed ntstatus.Status, wait func(ctx context.Context) (ntstatus.Status, []byte)) uint64 {
	c.pmu.Lock()
	c.nextAsync++
	p := &pendingOp{asyncID: c.nextAsync, messageID: req.hdr.MessageID, sessionID: req.hdr.SessionID, command: req.hdr.Command,
		open: o, closed: closed, stopped: make(chan struct{}), interimSent: make(chan struct{}), treeID: req.hdr.TreeID}
	ctx, cancel := context.WithCancelCause(c.srv.ctx)
	p.cancel = cancel
	c.pending[p.asyncID] = p
	c.pmu.Unlock()
	c.lastPending = p
	sess := req.sess
	sign := req.enc == nil && (req.hdr.Flags&flagSigned != 0 || (sess != nil && sess.signingRequired))
	enc := req.enc
	hdr := header{Command: req.hdr.Command, Flags: flagResponse | flagAsync, MessageID: req.hdr.MessageID,
		AsyncID: p.asyncID, SessionID: req.hdr.SessionID, CreditCharge: req.hdr.CreditCharge}
	c.pwg.Add(1)
	c.afterSend = append(c.afterSend, func() { close(p.interimSent) })
	go func() {
		defer c.pwg.Done()
		st, body := wait(ctx)
		if st != ntstatus.Success && ctx.Err() != nil {
			st = ntstatus.Cancelled
			var sc statusCause
			if errors.As(context.Cause(ctx), &sc) {
				st = sc.st
			}
		}
		c.pmu.Lock()
		delete(c.pending, p.asyncID)
		c.pmu.Unlock()
		cancel(nil)
		p.st, p.body = st, body
		close(p.stopped)
		<-p.interimSent
		if p.inline {
			return
		}
		resp := &response{hdr: hdr}
		resp.hdr.Status = uint32(st)
		switch {
		case st == ntstatus.Success && body != nil:
			resp.body = body
		case st == ntstatus.Success:
			resp.body = []byte{4, 0, 0, 0}
		default:
			resp.body = []byte{9, 0, 0, 0, 0, 0, 0, 0, 0}
		}
		if sign && sess != nil {
			resp.sess, resp.sign = sess, true
		}
		if p.rest != nil {
			c.continueChain(p, resp, enc)
			return
		}
		if err := c.send(c.encodeResponses([]*response{resp}), enc); err != nil {
			c.log.Debug("smb: sending a pending request's final response", "err", err)
		}
	}()
	return p.asyncID
}

// continueChain serves the rest of the compound of an async CREATE now
// completed (final is its final response) and sends them in one frame,
// as the connection loop would have: under loopMu, related requests
// inheriting the created file id, or the CREATE's error (MS-SMB2
// 3.3.5.2.7.2).
func (c *conn) continueChain(p *pendingOp, final *response, enc *session) {
	c.loopMu.Lock()
	defer c.loopMu.Unlock()
	if c.closing {
		return
	}
	rel := related{any: true, sessionID: final.hdr.SessionID, treeID: p.treeID}
	if st := ntstatus.Status(final.hdr.Status); st.IsError() {
		rel.status = st
	} else if len(final.body) >= 80 {
		rel.file = getFileID(final.body[64:]) // SMB2 CREATE response FileId
	}
	c.single = false
	early, out, err := c.serveChain(c.srv.ctx, p.rest, &rel, false, enc, []*response{final})
	if err != nil {
		c.log.Debug("smb: dropping connection", "err", err)
		c.nc.Close()
		return
	}
	if !c.sendFrames(early, out, enc) {
		c.log.Debug("smb: sending the rest of a compound after an async CREATE failed")
	}
}

// settleInline answers at its place in the chain a request that went
// async (resp, its interim response) but may not: it is not the last of
// its compound, nor a CREATE (serveChain). Its wait ends with
// STATUS_INTERNAL_ERROR unless it completed first; resp becomes the
// final response.
func (c *conn) settleInline(p *pendingOp, resp *response) {
	p.inline = true // read by p's goroutine after interimSent (afterSend)
	p.cancel(statusCause{statusInternalError})
	<-p.stopped
	resp.hdr.Flags &^= flagAsync
	resp.hdr.AsyncID = 0
	resp.hdr.Status = uint32(p.st)
	switch {
	case p.st == ntstatus.Success && p.body != nil:
		resp.body = p.body
	case p.st == ntstatus.Success:
		resp.body = []byte{4, 0, 0, 0}
	default:
		c.fail(resp, p.st)
	}
}

// statusInternalError is STATUS_INTERNAL_ERROR (MS-ERREF 2.3.1).
const statusInternalError ntstatus.Status = 0xC00000E5

// cancelRequest serves CANCEL (MS-SMB2 3.3.5.16): the pending request it
// names (by async id, or by message id for a request not yet gone async)
// ends with STATUS_CANCELLED. CANCEL itself is never answered.
func (c *conn) cancelRequest(h header) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for _, p := range c.pending {
		if h.Flags&flagAsync != 0 && p.asyncID == h.AsyncID ||
			h.Flags&flagAsync == 0 && p.messageID == h.MessageID && p.sessionID == h.SessionID {
			p.cancel(statusCause{ntstatus.Cancelled})
		}
	}
}

// endPending ends the pending requests match selects with the status
// their open's closing gives (or st, when not zero) and waits until they
// stop waiting (so that an open is closed only once nothing waits on it);
// their final responses follow.
func (c *conn) endPending(match func(p *pendingOp) bool, st ntstatus.Status) {
	c.pmu.Lock()
	var ended []*pendingOp
	for _, p := range c.pending {
		if match(p) {
			end := st
			if end == 0 {
				end = p.closed
			}
			p.cancel(statusCause{end})
			ended = append(ended, p)
		}
	}
	c.pmu.Unlock()
	for _, p := range ended {
		<-p.stopped
	}
}

// waitCancel is the wait of a CHANGE_NOTIFY on a FileSystem that records
// no changes (no Notifier): it pends until cancelled or its open closes.
func waitCancel(ctx context.Context) ntstatus.Status {
	<-ctx.Done()
	return ntstatus.Cancelled
}

// waitLock retries a blocking lock until it is granted, fails for another
// reason than a conflict, or ctx ends.
func waitLock(o *open, r locks.Range, kind locks.LockKind, lockCtx context.Context) func(ctx context.Context) ntstatus.Status {
	return func(ctx context.Context) ntstatus.Status {
		backoff := time.Millisecond
		for {
			err := o.h.Lock(lockCtx, r, kind)
			switch {
			case err == nil:
				return ntstatus.Success
			case !errors.Is(err, locks.ErrLockNotGranted):
				return ntstatus.FromError(err)
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ntstatus.Cancelled
			case <-t.C:
			}
			backoff = min(2*backoff, lockWaitBackoff)
		}
	}
}
