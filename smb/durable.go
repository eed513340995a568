package smb

// Durable handles v1 and v2 and CREATE replay (MS-SMB2 3.3.5.9.6,
// 3.3.5.9.7, 3.3.5.9.10, 3.3.5.9.12, 3.3.7.1): a durable open outlives its
// connection (and its session's logoff) for its timeout, disconnected,
// with its lock-table handle, byte-range locks, share mode and caching, so
// it keeps blocking every other protocol; a reconnect (DHnC, DH2C) of the
// same user on a new connection and session gets it back. The lock table
// records durability and disconnection (locks/durable.go): any process
// sees it, a break that needs an acknowledgment closes a disconnected
// open there instead of waiting for a client that is gone, and the open
// dies with this process's owner session (durable, not persistent). This
// file keeps the server's side: the table of durable opens by persistent
// file id (and the replay cache by ClientGuid and CreateGuid, whose
// rules are replay.go's), the scavenger that closes disconnected opens at
// their timeout, the session teardown of PreviousSessionId (3.3.5.5.3) and
// app instance ids (3.3.5.9.13). See "Durable handles and replay" in
// doc.go.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// Durable timeouts (as smbd, the oracle, gives them: smb2_create.c): a v1
// handle lasts 16 minutes; a v2 handle its requested timeout capped at
// 300 s, 60 s when it asks 0.
const (
	durableV1Timeout      = 16 * time.Minute
	durableV2MaxTimeout   = 300 * time.Second
	durableV2DefTimeout   = 60 * time.Second
	flagReplayOperation   = 0x20000000 // SMB2_FLAGS_REPLAY_OPERATION
	dhandleFlagPersistent = 0x00000002 // SMB2_DHANDLE_FLAG_PERSISTENT

	statusDuplicateObjectID ntstatus.Status = 0xC000022A
)

// appInstanceContext is the name of SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2
// 2.2.13.2.13), a GUID in its wire form.
const appInstanceContext = "\x45\xBC\xA6\x6A\xEF\xA7\xF7\x4A\x90\x08\xFA\x46\x2E\x14\x4D\x74"

// durableAsk is what a CREATE's durable contexts ask.
type durableAsk struct {
	v1, v2      bool // DHnQ, DH2Q
	timeout     uint32
	createGuid  [16]byte
	client      [16]byte // the ClientGuid of the CREATE's connection (replay)
	reserved    bool     // the CreateGuid is reserved in the replay cache (pending)
	reconnect   bool     // DHnC or DH2C
	reconnectV2 bool
	persistent  uint64 // the reconnect's FileId.Persistent
	appInstance *[16]byte
}

// parseDurable checks a CREATE's durable-handle contexts (MS-SMB2
// 2.2.13.2.3/.4/.11/.12) before anything else of the request, as MS-SMB2
// 3.3.5.9.7 and 3.3.5.9.12 skip path name validation for a reconnect: a
// request and a reconnect of different versions, or a v2 request and a
// v2 reconnect, together are STATUS_INVALID_PARAMETER (3.3.5.9.7,
// 3.3.5.9.10), as is a context whose data is not its structure's size; a
// v1 and a v2 request together too (3.3.5.9.10). A reconnect with a v1
// request ignores the request. smbd (the oracle) answers each case so.
func parseDurable(ctxs map[string][]byte) (durableAsk, ntstatus.Status) {
	dhnqData, dhnq := ctxs["DHnQ"]
	dhncData, dhnc := ctxs["DHnC"]
	dh2qData, dh2q := ctxs["DH2Q"]
	dh2cData, dh2c := ctxs["DH2C"]
	var a durableAsk
	switch {
	case dhnc && (dh2c || dh2q), dh2c && (dhnq || dh2q), dhnq && dh2q:
		return a, ntstatus.InvalidParameter
	case dhnc && len(dhncData) != 16: // SMB2_FILEID
		return a, ntstatus.InvalidParameter
	case dh2c && len(dh2cData) != 36: // FileId, CreateGuid, Flags
		return a, ntstatus.InvalidParameter
	case dhnc:
		a.reconnect, a.persistent = true, le.Uint64(dhncData)
		if extraContexts(ctxs, "DHnC", "DHnQ", "RqLs") {
			// 3.3.5.9.7: other contexts with a reconnect fail it
			// (smbd: a DHnQ and a lease are let through).
			return a, ntstatus.ObjectNameNotFound
		}
		return a, ntstatus.Success
	case dh2c:
		if extraContexts(ctxs, "DH2C", "RqLs") {
			return a, ntstatus.ObjectNameNotFound // 3.3.5.9.12, as smbd
		}
		a.reconnect, a.reconnectV2, a.persistent = true, true, le.Uint64(dh2cData)
		copy(a.createGuid[:], dh2cData[16:32])
		return a, ntstatus.Success
	case dhnq && len(dhnqData) != 16, dh2q && len(dh2qData) != 32:
		return a, ntstatus.InvalidParameter
	case dhnq:
		a.v1 = true
	case dh2q:
		a.v2 = true
		a.timeout = le.Uint32(dh2qData)
		copy(a.createGuid[:], dh2qData[16:32])
	}
	if data, ok := ctxs[appInstanceContext]; ok && a.v2 {
		if len(data) != 20 || le.Uint16(data) != 20 {
			return a, ntstatus.InvalidParameter
		}
		var id [16]byte
		copy(id[:], data[4:20])
		a.appInstance = &id
	}
	return a, ntstatus.Success
}

// extraContexts reports whether ctxs holds a context not named in allowed.
func extraContexts(ctxs map[string][]byte, allowed ...string) bool {
	n := 0
	for _, name := range allowed {
		if _, ok := ctxs[name]; ok {
			n++
		}
	}
	return len(ctxs) > n
}

// durableState is an open's durability and replay record.
type durableState struct {
	locks.Durable
	granted bool   // the open is durable (else only replay-eligible)
	resp    uint8  // the durable response context to answer: 0 none, 1 DHnQ, 2 DH2Q
	user    string // the session user who may reconnect it
	share   string
	action  uint32 // the CREATE's action, answered again to a replay
	// Under durableOpens.mu: disconnected and until when.
	disconnected bool
	expires      time.Time
}

type replayKey struct{ client, create [16]byte }

// durableOpens is the server's table of durable opens (connected or not)
// by persistent file id, and the replay cache.
type durableOpens struct {
	mu     sync.Mutex
	byID   map[uint64]*open
	replay map[replayKey]*open
	// pending holds the CreateGuids of CREATEs still in progress.
	pending map[replayKey]bool
	wake    chan struct{} // the scavenger's doorbell
	// disc is closed (and replaced) whenever an open is disconnected.
	disc chan struct{}
}

func (d *durableOpens) init() {
	d.byID, d.replay, d.wake = map[uint64]*open{}, map[replayKey]*open{}, make(chan struct{}, 1)
	d.disc = make(chan struct{})
	d.pending = map[replayKey]bool{}
}

// reconnectWait bounds how long a reconnect waits for the connection of
// the open it names to be seen dropping: a client reconnects as soon as
// its own connection failed, and this server may read the old
// connection's end a moment after the new one's CREATE.
const reconnectWait = 2 * time.Second

func (d *durableOpens) ring() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// forget removes o from the tables.
func (d *durableOpens) forget(o *open) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byID[o.id.Persistent] == o {
		delete(d.byID, o.id.Persistent)
	}
	if o.dur != nil && o.dur.Version == 2 {
		k := replayKey{o.dur.ClientGuid, o.dur.CreateGuid}
		if d.replay[k] == o {
			delete(d.replay, k)
		}
	}
}

// durableTimeout is the timeout granted to a request (see the constants).
func durableTimeout(a durableAsk) time.Duration {
	if a.v1 {
		return durableV1Timeout
	}
	t := min(time.Duration(a.timeout)*time.Millisecond, durableV2MaxTimeout)
	if t == 0 {
		t = durableV2DefTimeout
	}
	return t
}

// grantDurable makes o durable when the CREATE asked for it and its grant
// allows it (MS-SMB2 3.3.5.9.6, 3.3.5.9.10: a batch oplock, or a lease
// with Handle caching; never a directory), and records a v2 CreateGuid for
// replay whether or not durability was granted, as smbd does.
func (c *conn) grantDurable(ctx context.Context, o *open, a durableAsk, act uint32) {
	if !a.v1 && !a.v2 || o.h == nil || c.srv.cfg.Caching == nil {
		return
	}
	d := &durableState{user: o.sess.user, share: o.tree.share, action: act}
	d.Version, d.ClientGuid, d.CreateGuid, d.AppInstance = 1, c.clientGUID, a.createGuid, a.appInstance
	if a.v2 {
		d.Version = 2
	}
	d.Timeout = durableTimeout(a)
	handle := o.oplock == locks.OplockBatch || o.lease != nil && o.lease.State&locks.CacheHandle != 0
	if handle && !o.isDir {
		err := c.srv.cfg.Caching.Update(ctx, func(tx *locks.Tx) error {
			return tx.MakeDurable(o.h.File(), o.h.ID(), d.Durable)
		})
		if err != nil {
			c.log.Debug("smb: durable handle not granted", "path", o.path, "err", err)
		} else {
			d.granted = true
			d.resp = 1
			if a.v2 {
				d.resp = 2
			}
		}
	}
	if !d.granted && !a.v2 {
		return
	}
	o.dur = d
	c.srv.durables.mu.Lock()
	if d.granted {
		c.srv.durables.byID[o.id.Persistent] = o
	}
	if a.v2 {
		c.srv.durables.replay[replayKey{d.ClientGuid, d.CreateGuid}] = o
	}
	c.srv.durables.mu.Unlock()
}

// durableContext is the durable response context a CREATE answers o with
// (MS-SMB2 2.2.14.2.3, 2.2.14.2.12), nil for none.
func durableContext(o *open) []byte {
	if o.dur == nil || o.dur.resp == 0 {
		return nil
	}
	out := make([]byte, 32)
	le.PutUint16(out[4:], 16) // NameOffset
	le.PutUint16(out[6:], 4)  // NameLength
	le.PutUint16(out[10:], 24)
	le.PutUint32(out[12:], 8)
	copy(out[16:], "DHnQ")
	if o.dur.resp == 2 {
		copy(out[16:], "DH2Q")
		le.PutUint32(out[24:], uint32(o.dur.Timeout.Milliseconds()))
		// Flags stay 0: no persistent handle (no continuously available
		// share), whatever was asked.
	}
	return out
}

// chainContexts joins create contexts into one buffer: each but the last
// padded to 8 bytes and pointing at the next.
func chainContexts(ctxs ...[]byte) []byte {
	var out []byte
	last := -1
	for _, c := range ctxs {
		if c == nil {
			continue
		}
		if last >= 0 {
			for len(out)%8 != 0 {
				out = append(out, 0)
			}
			le.PutUint32(out[last:], uint32(len(out)-last))
		}
		last = len(out)
		out = append(out, c...)
	}
	return out
}

// reconnectDurable serves a CREATE with DHnC or DH2C (MS-SMB2 3.3.5.9.7,
// 3.3.5.9.12): the disconnected durable open with that persistent file
// id, of this user (and for a v2 reconnect this CreateGuid; for an open
// of a lease this client and lease key), comes back on this session with
// its state and locks. Anything else names nothing:
// STATUS_OBJECT_NAME_NOT_FOUND, never an open of the request's name.
func (c *conn) reconnectDurable(ctx context.Context, req *request, a durableAsk, lease *leaseRequest, name string) (ntstatus.Status, []byte) {
	d := &c.srv.durables
	d.mu.Lock()
	o := d.byID[a.persistent]
	if o != nil && !o.dur.disconnected && o.sess != req.sess {
		// Still on another connection: wait (bounded) for it to drop.
		deadline := time.NewTimer(reconnectWait)
		defer deadline.Stop()
		for waiting := true; waiting && o == d.byID[a.persistent] && !o.dur.disconnected; {
			disc := d.disc
			d.mu.Unlock()
			select {
			case <-disc:
			case <-deadline.C:
				waiting = false
			case <-ctx.Done():
				waiting = false
			}
			d.mu.Lock()
		}
		o = d.byID[a.persistent]
	}
	ok := o != nil && o.dur.disconnected && strings.EqualFold(o.dur.user, req.sess.user) &&
		o.dur.share == req.tree.share && (!a.reconnectV2 || o.dur.CreateGuid == a.createGuid)
	if ok && o.lease != nil {
		ok = lease != nil && lease.id.Key == o.lease.Key && o.dur.ClientGuid == c.clientGUID
	} else if ok && lease != nil {
		ok = false // a lease asked, the open has none (smbd)
	}
	if ok && o.lease != nil {
		if rel, st := sharePath(name); st != ntstatus.Success || !strings.EqualFold(rel, o.path) {
			d.mu.Unlock()
			return ntstatus.InvalidParameter, nil
		}
	}
	if !ok {
		d.mu.Unlock()
		return ntstatus.ObjectNameNotFound, nil
	}
	o.dur.disconnected = false // the scavenger leaves it now
	d.mu.Unlock()
	t := c.srv.cfg.Caching
	err := t.Update(ctx, func(tx *locks.Tx) error {
		_, err := tx.ReconnectDurable(o.h.File(), o.h.ID())
		return err
	})
	if err != nil {
		// Closed meanwhile: a break it could not answer, Force Close
		// Handles, or its owner session was lost.
		c.log.Debug("smb: durable reconnect of a closed open", "path", o.path, "err", err)
		d.forget(o)
		_ = c.srv.closeOpen(ctx, o)
		return ntstatus.ObjectNameNotFound, nil
	}
	c.refreshCache(ctx, o)
	s := req.sess
	s.nextFile++
	o.id.Volatile = s.nextFile ^ uint64(s.id)<<20
	o.sess, o.tree = s, req.tree
	s.opens[o.id.Volatile] = o
	req.rel.file = o.id
	if o.oplock != locks.OplockNone || o.lease != nil {
		c.srv.caches.add(o, c, s)
	}
	attr, err := o.h.Attr(ctx)
	if err != nil {
		return ntstatus.FromError(err), nil
	}
	o.dur.resp = 0
	return ntstatus.Success, createBody(o, actionOpened, attr)
}

// disconnectAll ends s's opens when its last connection dropped, it
// logged off, or a new session named it as PreviousSessionId (MS-SMB2
// 3.3.7.1, 3.3.5.6, 3.3.5.5.3): a durable open stays, disconnected, for
// its timeout; every other open closes.
func (s *session) disconnectAll(ctx context.Context, srv *Server) {
	for id, o := range s.opens {
		delete(s.opens, id)
		if o.dur != nil && o.dur.granted && srv.disconnectDurable(ctx, o) {
			continue
		}
		if err := srv.closeOpen(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
			srv.log.Debug("smb: closing open at session end", "path", o.path, "err", err)
		}
	}
}

// disconnectDurable keeps durable open o, disconnected, until its timeout.
func (srv *Server) disconnectDurable(ctx context.Context, o *open) bool {
	var expires time.Time
	err := srv.cfg.Caching.Update(ctx, func(tx *locks.Tx) error {
		var err error
		expires, err = tx.DisconnectDurable(o.h.File(), o.h.ID(), srv.now())
		return err
	})
	if err != nil {
		srv.log.Debug("smb: durable open not kept", "path", o.path, "err", err)
		srv.durables.forget(o)
		return false
	}
	srv.caches.remove(o)
	d := &srv.durables
	d.mu.Lock()
	o.sess = nil
	o.dur.disconnected, o.dur.expires = true, expires
	close(d.disc)
	d.disc = make(chan struct{})
	d.mu.Unlock()
	d.ring()
	return true
}

// scavenge runs until the server closes: it closes each disconnected
// durable open when its timeout passes (MS-SMB2 3.3.2.2, the durable open
// scavenger timer), waking at the earliest expiry or when an open is
// disconnected.
func (srv *Server) scavenge(ctx context.Context) {
	d := &srv.durables
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	for {
		now := srv.now()
		next := now.Add(time.Hour)
		var expired []*open
		d.mu.Lock()
		for _, o := range d.byID {
			if !o.dur.disconnected {
				continue
			}
			if !o.dur.expires.After(now) {
				o.dur.disconnected = false
				expired = append(expired, o)
				continue
			}
			if o.dur.expires.Before(next) {
				next = o.dur.expires
			}
		}
		d.mu.Unlock()
		for _, o := range expired {
			d.forget(o)
			if err := srv.closeOpen(ctx, o); err != nil && !errors.Is(err, locks.ErrHandleClosed) && ctx.Err() == nil {
				srv.log.Debug("smb: closing an expired durable open", "path", o.path, "err", err)
			}
		}
		tm.Reset(max(next.Sub(srv.now()), time.Millisecond))
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-tm.C:
		}
	}
}

// closeDurables closes every durable open left at Server.Close.
func (srv *Server) closeDurables(ctx context.Context) {
	d := &srv.durables
	d.mu.Lock()
	var left []*open
	for _, o := range d.byID {
		if o.dur.disconnected {
			left = append(left, o)
		}
	}
	d.mu.Unlock()
	for _, o := range left {
		d.forget(o)
		_ = srv.closeOpen(ctx, o)
	}
}

// forgetDurable drops a closing open's durable and replay records.
func (srv *Server) forgetDurable(ctx context.Context, o *open) {
	if o.dur == nil {
		return
	}
	srv.durables.forget(o)
	if !o.dur.granted || o.h == nil {
		return
	}
	if err := srv.cfg.Caching.Update(ctx, func(tx *locks.Tx) error { return tx.ForgetDurable(o.h.File(), o.h.ID()) }); err != nil {
		srv.log.Debug("smb: forgetting a durable open", "path", o.path, "err", err)
	}
}

// closePrevious ends the session a new session of the same user names as
// PreviousSessionId (MS-SMB2 3.3.5.5.3), wherever it runs: its pending
// requests end, its durable opens are kept disconnected for a reconnect,
// its other opens close, and its connections answer it
// STATUS_USER_SESSION_DELETED from now on.
func (c *conn) closePrevious(ctx context.Context, prev uint64, s *session) {
	if prev == 0 || prev == s.id {
		return
	}
	old := c.srv.lookupSession(prev)
	if old == nil || old == s || !old.valid.Load() || !strings.EqualFold(old.user, s.user) {
		return
	}
	if !lockSession(ctx, old) {
		return
	}
	defer old.mu.Unlock()
	if !old.valid.Load() {
		return
	}
	old.endPending(func(p *pendingOp) bool { return p.sessionID == old.id })
	old.disconnectAll(ctx, c.srv)
	old.valid.Store(false)
	c.srv.forgetSession(old)
}

// refreshCache reads what o caches now from the lock table (breaks may
// have changed it since its CREATE answered), for a response that
// reports it again: a reconnect's or a replay's.
func (c *conn) refreshCache(ctx context.Context, o *open) {
	var lvl locks.OplockLevel
	var li *locks.LeaseInfoSMB
	if err := c.srv.cfg.Caching.View(ctx, func(tx *locks.Tx) error {
		var err error
		lvl, li, err = tx.CacheOf(o.h.File(), o.h.ID())
		return err
	}); err != nil {
		c.log.Debug("smb: reading an open's caching", "path", o.path, "err", err)
		return
	}
	o.oplock, o.leaseBreaking = lvl, false
	if li != nil && o.lease != nil {
		l := *li
		l.Parent, l.HasParent = o.lease.Parent, o.lease.HasParent
		o.lease = &l
	}
}

// closeAppInstance closes the opens of another client that a CREATE with
// an SMB2_CREATE_APP_INSTANCE_ID names (MS-SMB2 3.3.5.9.13): the same
// application instance, share and path, opened through a connection of
// another ClientGuid — the application failed over to this client, and
// its old open must not keep the file from it. Only durable opens carry
// an application instance here (the context counts with DH2Q only).
func (c *conn) closeAppInstance(ctx context.Context, req *request, a durableAsk, rel string) {
	if a.appInstance == nil {
		return
	}
	type victim struct {
		o    *open
		sess *session
	}
	d := &c.srv.durables
	var vs []victim
	d.mu.Lock()
	for _, o := range d.byID {
		if o.dur.AppInstance != nil && *o.dur.AppInstance == *a.appInstance && o.dur.share == req.tree.share &&
			strings.EqualFold(o.path, rel) && o.dur.ClientGuid != c.clientGUID {
			vs = append(vs, victim{o, o.sess})
		}
	}
	d.mu.Unlock()
	for _, v := range vs {
		o := v.o
		if v.sess == nil {
			d.mu.Lock()
			mine := d.byID[o.id.Persistent] == o && o.dur.disconnected
			if mine {
				o.dur.disconnected = false // the scavenger and reconnects leave it
			}
			d.mu.Unlock()
			if !mine {
				continue
			}
		} else {
			if v.sess != req.sess {
				if !lockSession(ctx, v.sess) {
					continue
				}
			}
			_, live := v.sess.opens[o.id.Volatile]
			if live {
				delete(v.sess.opens, o.id.Volatile)
				v.sess.endPending(func(p *pendingOp) bool { return p.open == o })
			}
			if v.sess != req.sess {
				v.sess.mu.Unlock()
			}
			if !live {
				continue
			}
		}
		d.forget(o)
		if err := c.srv.closeOpen(ctx, o); err != nil {
			c.log.Debug("smb: closing an open of another application instance", "path", o.path, "err", err)
		}
	}
}
