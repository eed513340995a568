package smb

// Oplocks and leases (MS-SMB2 3.3.5.9.8, 3.3.4.6, 3.3.4.7, 3.3.5.22): the
// state and every decision are package locks' (Tx.DecideCache); this file
// turns CREATE requests into caching requests, sends the breaks the lock
// table's outbox holds for this process to the connections that hold the
// caches, and serves the acknowledgments. See "Oplocks and leases" in
// doc.go.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// Statuses of break acknowledgments (MS-ERREF 2.3.1).
const (
	statusInvalidOplockProtocol ntstatus.Status = 0xC00000E3
	statusRequestNotAccepted    ntstatus.Status = 0xC00000D0
)

// Oplock levels on the wire (MS-SMB2 2.2.13).
const (
	oplockLease = 0xFF
	capLeasing  = 0x02 // SMB2_GLOBAL_CAP_LEASING
)

// Lease flags (MS-SMB2 2.2.13.2.10, 2.2.14.2.11, 2.2.23.2).
const (
	leaseFlagBreakInProgress = 0x02
	leaseFlagParentKeySet    = 0x04
	leaseBreakAckRequired    = 0x01
)

// cacheBreakPoll is how often the server looks at its outbox without a
// signal of this process (breaks decided by another process).
const cacheBreakPoll = 250 * time.Millisecond

// leaseRequest is a CREATE's lease context (SMB2_CREATE_REQUEST_LEASE or
// _V2).
type leaseRequest struct {
	id      locks.LeaseIdentity
	state   locks.CacheState
	version uint8
	epoch   uint16
	parent  *locks.LeaseKey
}

// parseLease reads the RqLs context: version 2 (52 bytes) on SMB 3.x,
// version 1 (32 bytes) otherwise (MS-SMB2 3.3.5.9.8, 3.3.5.9.11). A
// context of another size is STATUS_INVALID_PARAMETER; on SMB 2.0.2, or
// without a lease oplock level, it is ignored.
func (c *conn) parseLease(ctxs map[string][]byte, level byte) (*leaseRequest, ntstatus.Status) {
	data, ok := ctxs["RqLs"]
	if !ok || level != oplockLease || c.dialect == dialect202 || c.srv.cfg.Caching == nil {
		return nil, ntstatus.Success
	}
	l := &leaseRequest{version: 1}
	switch {
	case len(data) >= 52 && c.dialect >= dialect300:
		l.version = 2
		l.epoch = le.Uint16(data[48:])
		if le.Uint32(data[20:])&leaseFlagParentKeySet != 0 {
			var p locks.LeaseKey
			copy(p[:], data[32:48])
			l.parent = &p
		}
	case len(data) >= 32:
	default:
		return nil, ntstatus.InvalidParameter
	}
	copy(l.id.Key[:], data[:16])
	l.id.Client = c.clientGUID
	l.state = locks.CacheState(le.Uint32(data[16:])) & locks.CacheRWH
	return l, ntstatus.Success
}

// cacheAsk is what one CREATE asks of caching.
type cacheAsk struct {
	oplock locks.OplockLevel // requested oplock (not a lease)
	lease  *leaseRequest
	// mask: the open's access mask (locks.CacheRequest.Mask).
	mask locks.Mask
}

func (a cacheAsk) any() bool { return a.oplock != locks.OplockNone || a.lease != nil }

// cacheCall is the lock table's request for an open (access, share) of
// file by this CREATE: handle is the new open (0 before it exists).
func (c *conn) cacheCall(file fs.FileID, ask cacheAsk, access locks.Access, share locks.ShareMode, overwrite, dir bool, handle locks.HandleID) locks.CacheCall {
	cc := locks.CacheCall{File: file, BreakTimeout: c.srv.cfg.BreakTimeout,
		Req: locks.CacheRequest{Who: locks.RequesterSMB, Kind: locks.CacheOpOpen, Access: access, Share: share,
			Overwrite: overwrite, Directory: dir, Handle: handle, RequestOplock: ask.oplock, Mask: ask.mask}}
	if ask.lease != nil {
		id := ask.lease.id
		cc.Req.Lease, cc.Req.RequestLease = &id, ask.lease.state
		cc.Req.RequestOplock = locks.OplockNone
		cc.LeaseVersion, cc.LeaseEpoch, cc.Parent = ask.lease.version, ask.lease.epoch, ask.lease.parent
	}
	return cc
}

// resolve finds the entry a share-relative path names, if it exists.
func (c *conn) resolve(ctx context.Context, share, rel string) (fs.Attr, bool) {
	a, err := c.srv.cfg.FS.GetShare(ctx, share)
	if err != nil {
		return fs.Attr{}, false
	}
	if rel == "" {
		return a, true
	}
	for _, name := range strings.Split(rel, "/") {
		if a, err = c.srv.cfg.FS.Lookup(ctx, a.ID, name); err != nil {
			return fs.Attr{}, false
		}
	}
	return a, true
}

// preBreak is the caching decision before a CREATE opens an existing
// file (MS-FSA 2.1.4.12 runs before the sharing check, MS-SMB2 3.3.1.4):
// the breaks it needs are recorded, and wait says the CREATE must wait
// for their acknowledgments. It returns the call to decide again with.
func (c *conn) preBreak(ctx context.Context, share, rel string, ask cacheAsk, access locks.Access, shareMode locks.ShareMode, overwrite bool) (locks.CacheCall, bool) {
	t := c.srv.cfg.Caching
	if t == nil {
		return locks.CacheCall{}, false
	}
	if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
		return locks.CacheCall{}, false
	}
	a, ok := c.resolve(ctx, share, rel)
	if !ok {
		return locks.CacheCall{}, false
	}
	cc := c.cacheCall(a.ID, ask, access, shareMode, overwrite, a.Kind.IsDir(), 0)
	r, err := t.DecideCacheUpdate(ctx, cc)
	if err != nil {
		c.log.Debug("smb: caching decision before open", "path", rel, "err", err)
		return cc, false
	}
	return cc, r.Wait
}

// grantCache records what a new open gets (its oplock or lease) and
// answers it: OplockLevel for the response and its lease context. wait
// says an open that raced in before this grant holds caching that must
// be broken first: the CREATE waits, then grants again.
func (c *conn) grantCache(ctx context.Context, o *open, ask cacheAsk, overwrite, created bool) (wait bool, st ntstatus.Status) {
	t := c.srv.cfg.Caching
	if t == nil || o.h == nil {
		return false, ntstatus.Success
	}
	if o.isDir && !c.dirLeasing(ask.lease) {
		ask.lease = nil // no directory leases before SMB 3 and v2 (dirlease.go)
	}
	if o.isDir && ask.lease != nil {
		c.srv.holdDirLease(o) // before the grant's transaction (dirlease.go)
	}
	if !ask.any() {
		if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
			return false, ntstatus.Success
		}
	}
	cc := c.cacheCall(o.h.File(), ask, o.h.Access(), o.share, overwrite, o.isDir, o.h.ID())
	cc.Req.Created = created
	r, err := t.DecideCacheUpdate(ctx, cc)
	if errors.Is(err, locks.ErrLeaseKeyInUse) {
		return false, ntstatus.InvalidParameter
	}
	if err != nil {
		c.log.Debug("smb: caching grant", "path", o.path, "err", err)
		return false, ntstatus.Success
	}
	if r.Wait {
		return true, ntstatus.Success
	}
	o.setCache(r, ask)
	if o.oplock != locks.OplockNone || o.lease != nil {
		c.srv.caches.add(o, c, o.sess)
	}
	return false, ntstatus.Success
}

// setCache keeps what the grant gave o for its response.
func (o *open) setCache(r locks.CacheResult, ask cacheAsk) {
	o.oplock = r.GrantOplock
	if ask.lease != nil {
		o.oplock = locks.OplockLease
		l := locks.LeaseInfoSMB{LeaseIdentity: ask.lease.id, State: r.Grant, Version: ask.lease.version, Epoch: ask.lease.epoch}
		if r.Lease != nil {
			l = *r.Lease
		}
		if ask.lease.parent != nil {
			l.Parent, l.HasParent = *ask.lease.parent, true
		}
		o.lease, o.leaseBreaking = &l, r.LeaseBreaking
	}
}

// leaseContext is the SMB2_CREATE_RESPONSE_LEASE(_V2) create context for
// o (MS-SMB2 2.2.14.2.10, 2.2.14.2.11).
func leaseContext(o *open) []byte {
	l := o.lease
	n := 32
	if l.Version == 2 {
		n = 52
	}
	out := make([]byte, 24+n)
	le.PutUint16(out[4:], 16) // NameOffset
	le.PutUint16(out[6:], 4)  // NameLength
	le.PutUint16(out[10:], 24)
	le.PutUint32(out[12:], uint32(n))
	copy(out[16:], "RqLs")
	d := out[24:]
	copy(d, l.Key[:])
	le.PutUint32(d[16:], uint32(l.State))
	var flags uint32
	if o.leaseBreaking {
		flags |= leaseFlagBreakInProgress
	}
	if l.Version == 2 {
		if l.HasParent {
			flags |= leaseFlagParentKeySet
			copy(d[32:48], l.Parent[:])
		}
		le.PutUint16(d[48:], l.Epoch)
	}
	le.PutUint32(d[20:], flags)
	return out
}

// cacheHolders maps this process's cached opens to the connections that
// hold them, for the break notifications.
type cacheHolders struct {
	mu     sync.Mutex
	opens  map[locks.HandleID]holderRef
	leases map[locks.LeaseIdentity]holderRef
}

type holderRef struct {
	c    *conn
	o    *open
	sess *session
}

func (h *cacheHolders) add(o *open, c *conn, s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opens == nil {
		h.opens, h.leases = map[locks.HandleID]holderRef{}, map[locks.LeaseIdentity]holderRef{}
	}
	ref := holderRef{c: c, o: o, sess: s}
	h.opens[o.h.ID()] = ref
	if o.lease != nil {
		h.leases[o.lease.LeaseIdentity] = ref
	}
}

// remove forgets o; a lease stays reachable through another open of it.
func (h *cacheHolders) remove(o *open) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.opens, o.h.ID())
	if o.lease == nil {
		return
	}
	id := o.lease.LeaseIdentity
	if ref, ok := h.leases[id]; ok && ref.o == o {
		delete(h.leases, id)
		for _, r := range h.opens {
			if r.o.lease != nil && r.o.lease.LeaseIdentity == id {
				h.leases[id] = r
				break
			}
		}
	}
}

func (h *cacheHolders) lookup(n locks.BreakNote) (holderRef, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n.Lease != nil {
		r, ok := h.leases[*n.Lease]
		return r, ok
	}
	r, ok := h.opens[n.Handle]
	return r, ok
}

// deliverBreaks runs until the server closes: it takes this process's
// outbox rows whenever a caching change commits here (or every
// cacheBreakPoll, for breaks decided elsewhere) and sends each to the
// connection of the open or lease it breaks.
func (s *Server) deliverBreaks(ctx context.Context) {
	t := s.cfg.Caching
	tick := time.NewTicker(cacheBreakPoll)
	defer tick.Stop()
	for {
		changed := t.CacheChanges()
		var notes []locks.BreakNote
		has, err := t.HasBreaks(ctx)
		if has {
			err = t.Update(ctx, func(tx *locks.Tx) error {
				var err error
				notes, err = tx.TakeBreaks()
				return err
			})
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("smb: reading the break outbox", "err", err)
		}
		for _, n := range notes {
			s.sendBreak(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// sendBreak sends one break notification (MS-SMB2 2.2.23.1 for an
// oplock, 2.2.23.2 for a lease): MessageId all ones, no session or tree,
// unsigned; encrypted when the holder's session encrypts.
func (s *Server) sendBreak(n locks.BreakNote) {
	ref, ok := s.caches.lookup(n)
	if !ok {
		return // the open closed, or its connection is gone
	}
	hdr := header{Command: cmdOplockBreak, Flags: flagResponse, MessageID: ^uint64(0)}
	var b []byte
	if n.Lease != nil {
		b = make([]byte, 44)
		le.PutUint16(b, 44)
		le.PutUint16(b[2:], n.NewEpoch)
		if n.AckRequired {
			le.PutUint32(b[4:], leaseBreakAckRequired)
		}
		copy(b[8:24], n.Lease.Key[:])
		le.PutUint32(b[24:], uint32(n.From))
		le.PutUint32(b[28:], uint32(n.To))
	} else {
		b = make([]byte, 24)
		le.PutUint16(b, 24)
		b[2] = byte(n.ToOplock)
		ref.o.id.put(b[8:])
	}
	var enc *session
	if ref.sess != nil && ref.sess.encryptData && ref.sess.crypto != nil {
		enc = ref.sess
	}
	to := ref.c
	if n.Lease != nil && enc == nil {
		// A lease is the client's: its break goes to the client's
		// oldest connection (clientconns.go). One encrypted with the
		// open's session stays on that session's connection.
		if first := s.clients.first(n.Lease.Client); first != nil {
			to = first
		}
	}
	resp := &response{hdr: hdr, body: b}
	if err := to.send(to.encodeResponses([]*response{resp}), enc); err != nil {
		s.log.Debug("smb: sending a break", "err", err)
	}
}

// oplockBreak serves an OPLOCK_BREAK acknowledgment (MS-SMB2 3.3.5.22): an
// oplock's (24 bytes) or a lease's (36 bytes).
func (c *conn) oplockBreak(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	t := c.srv.cfg.Caching
	if len(req.msg) < headerSize+2 || t == nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	switch le.Uint16(req.msg[headerSize:]) {
	case 24:
		b, err := body(req.msg, 24)
		if err != nil || len(b) < 24 {
			return ntstatus.InvalidParameter, nil, nil
		}
		o, st := c.lookupOpen(req, b[8:])
		if o == nil {
			return st, nil, nil
		}
		if o.h == nil || o.lease != nil {
			return statusInvalidOplockProtocol, nil, nil
		}
		var lvl locks.OplockLevel
		err = t.Update(ctx, func(tx *locks.Tx) error {
			var err error
			lvl, err = tx.AckOplockBreak(o.h.File(), o.h.ID(), locks.OplockLevel(b[2]))
			return err
		})
		if errors.Is(err, locks.ErrNoBreak) {
			o.oplock = locks.OplockNone
			return statusInvalidOplockProtocol, nil, nil
		}
		if err != nil {
			return ntstatus.FromError(err), nil, nil
		}
		o.oplock = lvl
		out := make([]byte, 24)
		le.PutUint16(out, 24)
		out[2] = byte(lvl)
		o.id.put(out[8:])
		return ntstatus.Success, out, nil
	case 36:
		b, err := body(req.msg, 36)
		if err != nil || len(b) < 36 {
			return ntstatus.InvalidParameter, nil, nil
		}
		var id locks.LeaseIdentity
		id.Client = c.clientGUID
		copy(id.Key[:], b[8:24])
		state := locks.CacheState(le.Uint32(b[24:]))
		var l locks.LeaseInfoSMB
		err = t.Update(ctx, func(tx *locks.Tx) error {
			var err error
			l, err = tx.AckLeaseBreak(id, state)
			return err
		})
		switch {
		case errors.Is(err, locks.ErrNoBreak):
			return ntstatus.Unsuccessful, nil, nil
		case errors.Is(err, locks.ErrBadAck):
			return statusRequestNotAccepted, nil, nil
		case err != nil:
			return ntstatus.FromError(err), nil, nil
		}
		out := make([]byte, 36)
		le.PutUint16(out, 36)
		copy(out[8:24], id.Key[:])
		le.PutUint32(out[24:], uint32(l.State))
		return ntstatus.Success, out, nil
	}
	return ntstatus.InvalidParameter, nil, nil
}

// dropCache forgets a closing open's caching in the lock table, so that
// waiters decide again at once.
func (s *Server) dropCache(ctx context.Context, o *open) {
	defer s.releaseDirLease(o) // after the lease is gone (dirlease.go)
	if s.cfg.Caching == nil || o.h == nil || (o.oplock == locks.OplockNone && o.lease == nil) {
		return
	}
	s.caches.remove(o)
	if err := s.cfg.Caching.Update(ctx, func(tx *locks.Tx) error { return tx.DropCache(o.h.File(), o.h.ID()) }); err != nil {
		s.log.Debug("smb: dropping an open's caching", "path", o.path, "err", err)
	}
}

// breakCaches breaks the caches a WRITE, a size change or a byte-range
// lock (kind) through o breaks (MS-FSA 2.1.4.12: Read caching of every
// other cache goes at once, without an acknowledgment; o's own lease is
// not broken, its own level II oplock is by a write). The operation does
// not wait for acknowledgments: a holder with Write caching cannot exist
// beside another open with write access, and a lock's break of one is
// sent and completes (or times out) on its own — waiting there is not
// done yet.
func (c *conn) breakCaches(ctx context.Context, o *open, kind locks.CacheOpKind) {
	t := c.srv.cfg.Caching
	if t == nil || o.h == nil {
		return
	}
	if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
		return
	}
	req := locks.CacheRequest{Who: locks.RequesterSMB, Kind: kind, Handle: o.h.ID()}
	if o.lease != nil {
		id := o.lease.LeaseIdentity
		req.Lease = &id
	}
	if _, err := t.DecideCacheUpdate(ctx, locks.CacheCall{File: o.h.File(), Req: req, BreakTimeout: c.srv.cfg.BreakTimeout}); err != nil {
		c.log.Debug("smb: breaking caches on write", "path", o.path, "err", err)
	}
}
