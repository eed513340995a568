package smb

// CREATE replay and channel sequence numbers (MS-SMB2 3.3.5.9.10,
// 3.3.5.2.10): the replay cache of DH2Q CreateGuids by ClientGuid (kept in
// durableOpens, durable.go), what a replayed or concurrent CREATE is
// answered, and the check every request on an open makes. See "Durable
// handles and replay" in doc.go.

import (
	"context"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// replayed is the open a CREATE with CreateGuid made for this client, if
// any (MS-SMB2 3.3.5.9.10), or whether one is still in progress; when
// neither, it reserves the CreateGuid for this CREATE (settle ends the
// reservation).
func (d *durableOpens) replayed(client, create [16]byte) (o *open, pending bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := replayKey{client, create}
	if o := d.replay[k]; o != nil {
		return o, false
	}
	if d.pending[k] {
		return nil, true
	}
	d.pending[k] = true
	return nil, false
}

// settle ends a CREATE's reservation of its CreateGuid; one that failed
// leaves nothing to replay (a successful one is in the replay cache,
// grantDurable).
func (d *durableOpens) settle(a durableAsk, st ntstatus.Status) {
	if st == ntstatus.Pending {
		return // the pending request settles (settleReplay)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, replayKey{a.client, a.createGuid})
}

// settleReplay wraps the wait of a pending CREATE so that its end settles
// its reservation.
func (c *conn) settleReplay(args *createArgs, wait func(context.Context) (ntstatus.Status, []byte)) func(context.Context) (ntstatus.Status, []byte) {
	if !args.durable.reserved {
		return wait
	}
	return func(ctx context.Context) (ntstatus.Status, []byte) {
		st, body := wait(ctx)
		if st == ntstatus.Pending {
			st = ntstatus.Success // cannot happen: a goroutine's wait ends the request
		}
		c.srv.durables.settle(args.durable, st)
		return st, body
	}
}

// checkReplay serves the replay half of a DH2Q CREATE (MS-SMB2 3.3.5.9.10):
// a CreateGuid this client already opened with answers that open again
// when the request is a replay (SMB2_FLAGS_REPLAY_OPERATION), and
// STATUS_DUPLICATE_OBJECTID when it is not; a replay naming nothing
// opens anew. done says the CREATE is answered.
func (c *conn) checkReplay(req *request, a *durableAsk, lease *leaseRequest, oplock byte) (st ntstatus.Status, out []byte, done bool) {
	if !a.v2 || c.srv.cfg.Caching == nil {
		return 0, nil, false
	}
	a.client = c.clientGUID
	o, pending := c.srv.durables.replayed(a.client, a.createGuid)
	if pending {
		// The CREATE with this CreateGuid has not answered yet: neither
		// a replay nor a new open may run beside it (smbd: "-sane").
		return ntstatus.FileNotAvailable, nil, true
	}
	if o == nil {
		a.reserved = true
		return 0, nil, false
	}
	if req.hdr.Flags&flagReplayOperation == 0 {
		return statusDuplicateObjectID, nil, true
	}
	if o.sess != req.sess || o.h == nil {
		return statusDuplicateObjectID, nil, true
	}
	if lease != nil && (o.lease == nil || o.lease.Key != lease.id.Key) {
		// A replay with a lease must name the open's lease (smbd).
		return ntstatus.AccessDenied, nil, true
	}
	ctx := context.Background()
	attr, err := o.h.Attr(ctx)
	if err != nil {
		return ntstatus.FromError(err), nil, true
	}
	c.refreshCache(ctx, o)
	req.rel.file = o.id
	// The replayed response: the open's action, the level asked (smbd
	// answers the request's, not the open's), the durable context when
	// durable and asked with a batch oplock or a lease.
	saved := o.oplock
	if o.lease == nil {
		o.oplock = locks.OplockLevel(oplock)
	}
	o.dur.resp = 0
	if o.dur.granted && (oplock == byte(locks.OplockBatch) || oplock == oplockLease) {
		o.dur.resp = 2
	}
	body := createBody(o, o.dur.action, attr)
	o.oplock = saved
	o.dur.resp = 0
	return ntstatus.Success, body, true
}

// openUsed runs for every request naming open o (lookupOpen). Any such
// request ends o's replay eligibility (MS-SMB2 3.3.5.x: "If
// Open.IsPersistent is FALSE and Open.IsReplayEligible is TRUE, the
// server MUST set Open.IsReplayEligible to FALSE"): a later replay of its
// CREATE opens anew. On 3.x it verifies the request's channel sequence
// number against o's (3.3.5.2.10): a newer one becomes o's; an older one
// fails WRITE, SET_INFO and IOCTL with STATUS_FILE_NOT_AVAILABLE (a
// request from before a channel failure must not modify what the replay
// after it did) and is let through for the others. As smbd, a difference
// past 0x7FFF counts as the sequence number wrapping. Requests of a
// session are served one at a time here, so the outstanding request
// counts of the section are zero whenever a request arrives; with them
// the replay flag changes nothing.
func (c *conn) openUsed(req *request, o *open) ntstatus.Status {
	if o.dur != nil && o.dur.Version == 2 && req.hdr.Command != cmdCreate {
		c.srv.durables.endReplay(o)
	}
	if c.dialect < dialect300 {
		return ntstatus.Success
	}
	seq := uint16(req.hdr.Status)
	cmp := int(seq) - int(o.chanSeq)
	if cmp > 0x7FFF || cmp < -0x7FFF {
		cmp = -cmp
	}
	switch {
	case cmp > 0:
		o.chanSeq = seq
	case cmp < 0:
		switch req.hdr.Command {
		case cmdWrite, cmdSetInfo, cmdIoctl:
			return ntstatus.FileNotAvailable
		}
	}
	return ntstatus.Success
}

// endReplay removes o from the replay cache: its CREATE can no longer be
// replayed.
func (d *durableOpens) endReplay(o *open) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := replayKey{o.dur.ClientGuid, o.dur.CreateGuid}
	if d.replay[k] == o {
		delete(d.replay, k)
	}
}

// outlives reports whether pending request p goes on when its connection
// closes: a CREATE of a session that has other channels opens for the
// session, not the connection (its response is lost with the
// connection), so that a replay of it on another channel finds it in
// progress (STATUS_FILE_NOT_AVAILABLE) and then gets its open, as the
// client's CreateGuid asks (MS-SMB2 3.3.5.9.10; smbtorture
// replay.dhv2-pending2*).
func (c *conn) outlives(p *pendingOp) bool {
	if p.command != cmdCreate {
		return false
	}
	s := c.sessions[p.sessionID]
	return s != nil && s.valid.Load() && s.channelCount() > 1
}
