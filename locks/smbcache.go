package locks

// SMB caching state in the lock table (schema 4): the oplock of each SMB
// open that has one (lk_opcache), the state of each lease key
// (lk_smbleases), and the break outbox (lk_breaks), written in the
// transaction whose decision breaks a holder and read by the holder's
// process, which sends the break notification. DecideCache runs the pure
// rule DecideCaching (caching.go) over that state under the file's key
// lock; see "SMB caching" in doc.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultBreakTimeout is how long a break that needs an acknowledgment
// waits for it before it completes to none (MS-SMB2 3.3.2.1: the oplock
// break acknowledgment timer, 35 seconds in Windows; 3.3.2.5 for leases).
const DefaultBreakTimeout = 35 * time.Second

// OplockLease is the oplock level of an open whose caching is a lease
// (MS-SMB2 2.2.13 SMB2_OPLOCK_LEVEL_LEASE).
const OplockLease OplockLevel = 0xFF

// Caching errors, mapped once by package smb.
var (
	// ErrNoBreak: an acknowledgment for a break that is not outstanding
	// (STATUS_INVALID_OPLOCK_PROTOCOL for an oplock, STATUS_UNSUCCESSFUL
	// for a lease, MS-SMB2 3.3.5.22).
	ErrNoBreak = errors.New("no break in progress")
	// ErrBadAck: a lease acknowledgment asking more than the break left
	// (STATUS_REQUEST_NOT_ACCEPTED, MS-SMB2 3.3.5.22.2).
	ErrBadAck = errors.New("acknowledgment not accepted")
	// ErrLeaseKeyInUse: a lease key already in use on another file by the
	// same client (STATUS_INVALID_PARAMETER, MS-SMB2 3.3.5.9.8).
	ErrLeaseKeyInUse = errors.New("lease key in use on another file")
)

// CacheCall is one caching decision for DecideCache.
type CacheCall struct {
	File FileID
	Req  CacheRequest
	// LeaseVersion, LeaseEpoch and Parent are a lease request's (v2:
	// version 2, the client's epoch and parent key).
	LeaseVersion uint8
	LeaseEpoch   uint16
	Parent       *LeaseKey
	// BreakTimeout is the deadline of a break that needs an
	// acknowledgment; 0 means DefaultBreakTimeout.
	BreakTimeout time.Duration
}

// CacheResult is DecideCache's answer: the decision, and after a grant the
// lease as it now is (nil without a lease).
type CacheResult struct {
	CacheDecision
	Lease *LeaseInfoSMB
	// LeaseBreaking: the requester's lease has a break outstanding
	// (SMB2_LEASE_FLAG_BREAK_IN_PROGRESS in the response).
	LeaseBreaking bool
	// NextDeadline is the earliest outstanding break deadline on the
	// file (zero when none): a waiter decides again by then at the latest.
	NextDeadline time.Time
}

// BreakNote is one break of the outbox, for its holder's process to send.
type BreakNote struct {
	File        FileID
	Handle      HandleID       // the oplock's open (0 for a lease)
	Lease       *LeaseIdentity // the lease (nil for an oplock)
	From, To    CacheState
	ToOplock    OplockLevel
	NewEpoch    uint16
	AckRequired bool
}

// cacheRow is one open's row of lk_opcache.
type cacheRow struct {
	handle   HandleID
	oplock   OplockLevel
	lease    *LeaseIdentity
	breaking bool
	breakTo  OplockLevel
	deadline int64
}

// leaseRow is one row of lk_smbleases.
type leaseRow struct {
	info     LeaseInfoSMB
	owner    OwnerID
	breaking bool
	breakTo  CacheState
	deadline int64
}

func identityArgs(id LeaseIdentity) (any, any) { return id.Client[:], id.Key[:] }

func scanIdentity(client, key []byte) *LeaseIdentity {
	if len(client) != 16 || len(key) != 16 {
		return nil
	}
	var id LeaseIdentity
	copy(id.Client[:], client)
	copy(id.Key[:], key)
	return &id
}

// expireBreaks completes the breaks on file whose deadline passed to none
// (MS-SMB2 3.3.6.4, 3.3.6.5: the timer sets the oplock, or the lease, to
// none), and forgets caching rows of opens that closed or leases whose
// opens all closed.
func (tx *Tx) expireBreaks(file FileID, now int64) error {
	if err := tx.holds(file, "caching"); err != nil {
		return err
	}
	changed := false
	for _, q := range []string{
		`DELETE FROM lk_opcache WHERE file = ? AND NOT EXISTS (SELECT 1 FROM lk_handles h WHERE h.file = lk_opcache.file AND h.id = lk_opcache.handle)`,
		`UPDATE lk_opcache SET oplock = 0, breaking = 0, break_to = 0, deadline = 0 WHERE file = ? AND breaking = 1 AND deadline <= ?`,
		`DELETE FROM lk_smbleases WHERE file = ? AND NOT EXISTS (SELECT 1 FROM lk_opcache o WHERE o.file = lk_smbleases.file AND o.client = lk_smbleases.client AND o.lkey = lk_smbleases.lkey)`,
		`UPDATE lk_smbleases SET state = 0, breaking = 0, break_to = 0, deadline = 0 WHERE file = ? AND breaking = 1 AND deadline <= ?`,
	} {
		args := []any{int64(file)}
		if len(q) > 0 && q[0] == 'U' {
			args = append(args, now)
		}
		r, err := tx.exec(q, args...)
		if err != nil {
			return fmt.Errorf("locks: caching of file %d: %w", file, err)
		}
		if n, _ := r.RowsAffected(); n > 0 {
			changed = true
		}
	}
	if changed {
		tx.OnCommit(tx.t.cacheChanged)
	}
	return nil
}

// loadCaching reads file's caching rows.
func (tx *Tx) loadCaching(file FileID) (map[HandleID]cacheRow, []leaseRow, error) {
	if err := tx.holds(file, "caching"); err != nil {
		return nil, nil, err
	}
	rows, err := tx.query(`SELECT handle, oplock, client, lkey, breaking, break_to, deadline FROM lk_opcache WHERE file = ?`, int64(file))
	if err != nil {
		return nil, nil, fmt.Errorf("locks: caching of file %d: %w", file, err)
	}
	ops := map[HandleID]cacheRow{}
	for rows.Next() {
		var r cacheRow
		var h, op, to int64
		var client, key []byte
		if err := rows.Scan(&h, &op, &client, &key, &r.breaking, &to, &r.deadline); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("locks: caching of file %d: %w", file, err)
		}
		r.handle, r.oplock, r.breakTo, r.lease = HandleID(h), OplockLevel(op), OplockLevel(to), scanIdentity(client, key)
		ops[r.handle] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = tx.query(`SELECT client, lkey, owner, state, breaking, break_to, deadline, epoch, version, parent FROM lk_smbleases WHERE file = ? ORDER BY client, lkey`, int64(file))
	if err != nil {
		return nil, nil, fmt.Errorf("locks: leases of file %d: %w", file, err)
	}
	defer rows.Close()
	var ls []leaseRow
	for rows.Next() {
		var l leaseRow
		var client, key, parent []byte
		var owner string
		var state, to, epoch, version int64
		if err := rows.Scan(&client, &key, &owner, &state, &l.breaking, &to, &l.deadline, &epoch, &version, &parent); err != nil {
			return nil, nil, fmt.Errorf("locks: leases of file %d: %w", file, err)
		}
		id := scanIdentity(client, key)
		if id == nil {
			continue
		}
		l.info = LeaseInfoSMB{LeaseIdentity: *id, State: CacheState(state), Epoch: uint16(epoch), Version: uint8(version)}
		if len(parent) == 16 {
			copy(l.info.Parent[:], parent)
			l.info.HasParent = true
		}
		l.owner, l.breakTo = OwnerID(owner), CacheState(to)
		ls = append(ls, l)
	}
	return ops, ls, rows.Err()
}

// holders groups file's open handles into cache holders: one per lease
// (its opens), one per other open (its oplock or none).
func holdersOf(hs []Handle, ops map[HandleID]cacheRow, ls []leaseRow) []CacheHolder {
	var out []CacheHolder
	byLease := map[LeaseIdentity]int{}
	for i := range ls {
		l := &ls[i]
		byLease[l.info.LeaseIdentity] = len(out)
		info := l.info
		out = append(out, CacheHolder{Owner: l.owner, Lease: &info, Breaking: l.breaking, BreakTo: l.breakTo})
	}
	for _, h := range hs {
		r, ok := ops[h.ID]
		if ok && r.lease != nil {
			if i, ok := byLease[*r.lease]; ok {
				out[i].Handles = append(out[i].Handles, h)
				continue
			}
		}
		ch := CacheHolder{Owner: h.Owner, Handles: []Handle{h}}
		if ok && r.lease == nil {
			ch.Oplock, ch.Breaking, ch.BreakTo = r.oplock, r.breaking, r.breakTo.State()
		}
		out = append(out, ch)
	}
	return out
}

// DecideCache decides caching for c under c.File's key lock: breaks whose
// deadline passed complete to none, DecideCaching runs over the file's
// holders, each break is applied (at once when it needs no
// acknowledgment, else the holder is marked breaking with a deadline) and
// written to the outbox of the holder's process in this transaction, and
// an opening SMB requester (Req.Handle: its new open, already in the
// table) is granted what the rule allows, unless it must wait.
func (tx *Tx) DecideCache(c CacheCall) (CacheResult, error) {
	if err := tx.mustWrite("DecideCache"); err != nil {
		return CacheResult{}, err
	}
	tx.lockKeys("DecideCache", c.File)
	now := tx.t.opts.Now()
	if err := tx.expireBreaks(c.File, now.UnixNano()); err != nil {
		return CacheResult{}, err
	}
	req := c.Req
	if pending, err := tx.openMeetsDeletePending(c); err != nil || pending {
		return CacheResult{}, err
	}
	if req.Lease != nil && req.Kind == CacheOpOpen {
		var other int64
		cl, k := identityArgs(*req.Lease)
		err := tx.queryRow(`SELECT file FROM lk_smbleases WHERE client = ? AND lkey = ?`, []any{cl, k}, &other)
		if err == nil && FileID(other) != c.File {
			return CacheResult{}, fmt.Errorf("locks: lease key %x on file %d, asked for file %d: %w", req.Lease.Key, other, c.File, ErrLeaseKeyInUse)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return CacheResult{}, fmt.Errorf("locks: lease key %x: %w", req.Lease.Key, err)
		}
	}
	gone, err := tx.disconnectedDurable(c.File)
	if err != nil {
		return CacheResult{}, err
	}
	var ops map[HandleID]cacheRow
	var ls []leaseRow
	var holders []CacheHolder
	var d CacheDecision
	for {
		hs, err := tx.loadHandles(c.File)
		if err != nil {
			return CacheResult{}, err
		}
		if ops, ls, err = tx.loadCaching(c.File); err != nil {
			return CacheResult{}, err
		}
		holders = holdersOf(hs, ops, ls)
		d = DecideCaching(holders, req)
		if len(gone) == 0 {
			break
		}
		// A disconnected durable open cannot acknowledge: it is
		// closed, and the decision taken again without it.
		closed, err := tx.closeUnreachable(c.File, holders, d, gone)
		if err != nil {
			return CacheResult{}, err
		}
		if !closed {
			break
		}
		if err := tx.expireBreaks(c.File, now.UnixNano()); err != nil {
			return CacheResult{}, err
		}
	}
	res := CacheResult{CacheDecision: d}
	timeout := c.BreakTimeout
	if timeout <= 0 {
		timeout = DefaultBreakTimeout
	}
	deadline := now.Add(timeout).UnixNano()
	wrote := false
	for _, br := range d.Breaks {
		h := holders[br.Holder]
		if err := tx.applyBreak(c.File, h, br, deadline); err != nil {
			return CacheResult{}, err
		}
		wrote = true
	}
	for _, h := range holders {
		if h.Breaking {
			dl := time.Unix(0, holderDeadline(h, ops, ls))
			if res.NextDeadline.IsZero() || dl.Before(res.NextDeadline) {
				res.NextDeadline = dl
			}
		}
	}
	if d.Wait && (res.NextDeadline.IsZero() || time.Unix(0, deadline).Before(res.NextDeadline)) && len(d.Breaks) > 0 {
		res.NextDeadline = time.Unix(0, deadline)
	}
	if req.Kind == CacheOpOpen && req.Who == RequesterSMB && !d.Wait && req.Handle != 0 {
		g, err := tx.grant(c, holders, d, ls)
		if err != nil {
			return CacheResult{}, err
		}
		res.Lease, res.LeaseBreaking = g.lease, g.breaking
		res.Grant, res.GrantOplock = g.state, g.oplock
		wrote = wrote || g.wrote
	}
	if wrote {
		tx.OnCommit(tx.t.cacheChanged)
	}
	return res, nil
}

func holderDeadline(h CacheHolder, ops map[HandleID]cacheRow, ls []leaseRow) int64 {
	if h.Lease != nil {
		for _, l := range ls {
			if l.info.LeaseIdentity == h.Lease.LeaseIdentity {
				return l.deadline
			}
		}
		return 0
	}
	if len(h.Handles) == 1 {
		return ops[h.Handles[0].ID].deadline
	}
	return 0
}

// applyBreak stores one break: the holder's new state (or its breaking
// state and deadline) and the outbox row for its process.
func (tx *Tx) applyBreak(file FileID, h CacheHolder, br CacheBreak, deadline int64) error {
	var handle int64
	var client, key any
	if h.Lease != nil {
		client, key = identityArgs(h.Lease.LeaseIdentity)
		epoch := int64(h.Lease.Epoch)
		if h.Lease.Version == 2 {
			epoch = int64(br.NewEpoch)
		}
		var err error
		if br.AckRequired {
			_, err = tx.exec(`UPDATE lk_smbleases SET breaking = 1, break_to = ?, deadline = ?, epoch = ? WHERE client = ? AND lkey = ?`,
				int64(br.To), deadline, epoch, client, key)
		} else {
			_, err = tx.exec(`UPDATE lk_smbleases SET state = ?, epoch = ? WHERE client = ? AND lkey = ?`, int64(br.To), epoch, client, key)
		}
		if err != nil {
			return fmt.Errorf("locks: break lease on file %d: %w", file, err)
		}
	} else {
		handle = int64(h.Handles[0].ID)
		var err error
		if br.AckRequired {
			_, err = tx.exec(`UPDATE lk_opcache SET breaking = 1, break_to = ?, deadline = ? WHERE file = ? AND handle = ?`,
				int64(br.ToOplock), deadline, int64(file), handle)
		} else {
			_, err = tx.exec(`UPDATE lk_opcache SET oplock = ? WHERE file = ? AND handle = ?`, int64(br.ToOplock), int64(file), handle)
		}
		if err != nil {
			return fmt.Errorf("locks: break oplock of handle %d: %w", handle, err)
		}
	}
	if _, err := tx.exec(`INSERT INTO lk_breaks(owner, file, handle, client, lkey, from_state, to_state, epoch, ack) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(h.Owner), int64(file), handle, client, key, int64(br.From), int64(br.To), int64(br.NewEpoch), br.AckRequired); err != nil {
		return fmt.Errorf("locks: record break on file %d: %w", file, err)
	}
	return nil
}

type granted struct {
	state    CacheState
	oplock   OplockLevel
	lease    *LeaseInfoSMB
	breaking bool
	wrote    bool
}

// grant records what the requester's open got: its oplock, or its lease
// (created, or upgraded with a new epoch when its state grows).
func (tx *Tx) grant(c CacheCall, holders []CacheHolder, d CacheDecision, ls []leaseRow) (granted, error) {
	req := c.Req
	file := int64(c.File)
	if req.Lease == nil {
		if d.GrantOplock == OplockNone {
			return granted{}, nil
		}
		if _, err := tx.exec(`INSERT OR REPLACE INTO lk_opcache(file, handle, owner, oplock) VALUES(?, ?, ?, ?)`,
			file, int64(req.Handle), string(tx.sess.owner), int64(d.GrantOplock)); err != nil {
			return granted{}, fmt.Errorf("locks: grant oplock to handle %d: %w", req.Handle, err)
		}
		return granted{state: d.Grant, oplock: d.GrantOplock, wrote: true}, nil
	}
	cl, k := identityArgs(*req.Lease)
	var cur *leaseRow
	for i := range ls {
		if ls[i].info.LeaseIdentity == *req.Lease {
			cur = &ls[i]
		}
	}
	g := granted{oplock: OplockLease, wrote: true}
	info := LeaseInfoSMB{LeaseIdentity: *req.Lease, State: d.Grant, Version: max(c.LeaseVersion, 1)}
	if cur == nil {
		info.Epoch = c.LeaseEpoch
		if c.Parent != nil {
			info.Parent, info.HasParent = *c.Parent, true
		}
		if info.State != CacheNone && info.Version == 2 {
			info.Epoch++
		}
		var parent any
		if info.HasParent {
			parent = info.Parent[:]
		}
		if _, err := tx.exec(`INSERT INTO lk_smbleases(client, lkey, file, owner, state, epoch, version, parent) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
			cl, k, file, string(tx.sess.owner), int64(info.State), int64(info.Epoch), int64(info.Version), parent); err != nil {
			return granted{}, fmt.Errorf("locks: grant lease on file %d: %w", file, err)
		}
	} else {
		info.Epoch, info.Version, info.Parent, info.HasParent = cur.info.Epoch, cur.info.Version, cur.info.Parent, cur.info.HasParent
		if cur.breaking {
			// A lease being broken keeps its state until acknowledged
			// (MS-SMB2 3.3.5.9.8: no upgrade while Breaking).
			info.State = cur.info.State
			g.breaking = true
		} else if info.State != cur.info.State {
			if info.Version == 2 {
				info.Epoch++
			}
			if _, err := tx.exec(`UPDATE lk_smbleases SET state = ?, epoch = ?, owner = ? WHERE client = ? AND lkey = ?`,
				int64(info.State), int64(info.Epoch), string(tx.sess.owner), cl, k); err != nil {
				return granted{}, fmt.Errorf("locks: upgrade lease on file %d: %w", file, err)
			}
		}
	}
	if _, err := tx.exec(`INSERT OR REPLACE INTO lk_opcache(file, handle, owner, oplock, client, lkey) VALUES(?, ?, ?, ?, ?, ?)`,
		file, int64(req.Handle), string(tx.sess.owner), int64(OplockLease), cl, k); err != nil {
		return granted{}, fmt.Errorf("locks: lease open %d: %w", req.Handle, err)
	}
	g.state, g.lease = info.State, &info
	return g, nil
}

// AckOplockBreak acknowledges the oplock break of handle on file with
// level (MS-SMB2 3.3.5.22.1): level must not exceed what the break left;
// the open then holds level. An acknowledgment without a break in
// progress, or asking too much, ends the oplock (ErrNoBreak).
func (tx *Tx) AckOplockBreak(file FileID, handle HandleID, level OplockLevel) (OplockLevel, error) {
	if err := tx.mustWrite("AckOplockBreak"); err != nil {
		return 0, err
	}
	tx.lockKeys("AckOplockBreak", file)
	if err := tx.expireBreaks(file, tx.t.opts.Now().UnixNano()); err != nil {
		return 0, err
	}
	ops, _, err := tx.loadCaching(file)
	if err != nil {
		return 0, err
	}
	r, ok := ops[handle]
	if !ok || r.lease != nil || !r.breaking || level > r.breakTo || (level != OplockNone && level != OplockLevelII) {
		if ok && r.lease == nil {
			if _, err := tx.exec(`UPDATE lk_opcache SET oplock = 0, breaking = 0, break_to = 0, deadline = 0 WHERE file = ? AND handle = ?`, int64(file), int64(handle)); err != nil {
				return 0, fmt.Errorf("locks: oplock of handle %d: %w", handle, err)
			}
			tx.OnCommit(tx.t.cacheChanged)
		}
		return OplockNone, fmt.Errorf("locks: oplock break acknowledgment for handle %d: %w", handle, ErrNoBreak)
	}
	if _, err := tx.exec(`UPDATE lk_opcache SET oplock = ?, breaking = 0, break_to = 0, deadline = 0 WHERE file = ? AND handle = ?`,
		int64(level), int64(file), int64(handle)); err != nil {
		return 0, fmt.Errorf("locks: oplock of handle %d: %w", handle, err)
	}
	tx.OnCommit(tx.t.cacheChanged)
	return level, nil
}

// AckLeaseBreak acknowledges the break of lease id with state (MS-SMB2
// 3.3.5.22.2): ErrNoBreak when none is outstanding, ErrBadAck when state
// is not within what the break left; the lease then holds state.
func (tx *Tx) AckLeaseBreak(id LeaseIdentity, state CacheState) (LeaseInfoSMB, error) {
	if err := tx.mustWrite("AckLeaseBreak"); err != nil {
		return LeaseInfoSMB{}, err
	}
	cl, k := identityArgs(id)
	var file int64
	if err := tx.queryRow(`SELECT file FROM lk_smbleases WHERE client = ? AND lkey = ?`, []any{cl, k}, &file); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return LeaseInfoSMB{}, fmt.Errorf("locks: lease %x: %w", id.Key, ErrNoBreak)
		}
		return LeaseInfoSMB{}, fmt.Errorf("locks: lease %x: %w", id.Key, err)
	}
	tx.lockKeys("AckLeaseBreak", FileID(file))
	if err := tx.expireBreaks(FileID(file), tx.t.opts.Now().UnixNano()); err != nil {
		return LeaseInfoSMB{}, err
	}
	_, ls, err := tx.loadCaching(FileID(file))
	if err != nil {
		return LeaseInfoSMB{}, err
	}
	for _, l := range ls {
		if l.info.LeaseIdentity != id {
			continue
		}
		if !l.breaking {
			return l.info, fmt.Errorf("locks: lease %x: %w", id.Key, ErrNoBreak)
		}
		if state&^l.breakTo != 0 {
			return l.info, fmt.Errorf("locks: lease %x acknowledged %v, break to %v: %w", id.Key, state, l.breakTo, ErrBadAck)
		}
		if _, err := tx.exec(`UPDATE lk_smbleases SET state = ?, breaking = 0, break_to = 0, deadline = 0 WHERE client = ? AND lkey = ?`,
			int64(state), cl, k); err != nil {
			return LeaseInfoSMB{}, fmt.Errorf("locks: lease %x: %w", id.Key, err)
		}
		tx.OnCommit(tx.t.cacheChanged)
		l.info.State = state
		return l.info, nil
	}
	return LeaseInfoSMB{}, fmt.Errorf("locks: lease %x: %w", id.Key, ErrNoBreak)
}

// CacheOf reports the caching an open holds now: its oplock level, or
// OplockLease and its lease's state (for a response or a test).
func (tx *Tx) CacheOf(file FileID, handle HandleID) (OplockLevel, *LeaseInfoSMB, error) {
	var op int64
	var client, key []byte
	err := tx.queryRow(`SELECT oplock, client, lkey FROM lk_opcache WHERE file = ? AND handle = ?`, []any{int64(file), int64(handle)}, &op, &client, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return OplockNone, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("locks: caching of handle %d: %w", handle, err)
	}
	id := scanIdentity(client, key)
	if id == nil {
		return OplockLevel(op), nil, nil
	}
	var state, epoch, version int64
	cl, k := identityArgs(*id)
	if err := tx.queryRow(`SELECT state, epoch, version FROM lk_smbleases WHERE client = ? AND lkey = ?`, []any{cl, k}, &state, &epoch, &version); err != nil {
		return OplockLease, nil, fmt.Errorf("locks: lease of handle %d: %w", handle, err)
	}
	return OplockLease, &LeaseInfoSMB{LeaseIdentity: *id, State: CacheState(state), Epoch: uint16(epoch), Version: uint8(version)}, nil
}

// DropCache forgets the caching of a closed open of this owner (its
// lk_opcache row, and its lease when no other open shares it), so waiters
// decide again at once instead of at their next poll.
func (tx *Tx) DropCache(file FileID, handle HandleID) error {
	if err := tx.mustWrite("DropCache"); err != nil {
		return err
	}
	tx.lockKeys("DropCache", file)
	if _, err := tx.exec(`DELETE FROM lk_opcache WHERE file = ? AND handle = ?`, int64(file), int64(handle)); err != nil {
		return fmt.Errorf("locks: caching of handle %d: %w", handle, err)
	}
	if err := tx.expireBreaks(file, tx.t.opts.Now().UnixNano()); err != nil {
		return err
	}
	tx.OnCommit(tx.t.cacheChanged)
	return nil
}

// TakeBreaks removes and returns the outbox rows for this owner: the
// breaks its process must send.
func (tx *Tx) TakeBreaks() ([]BreakNote, error) {
	if err := tx.mustWrite("TakeBreaks"); err != nil {
		return nil, err
	}
	rows, err := tx.query(`SELECT id, file, handle, client, lkey, from_state, to_state, epoch, ack FROM lk_breaks WHERE owner = ? ORDER BY id`, string(tx.sess.owner))
	if err != nil {
		return nil, fmt.Errorf("locks: break outbox: %w", err)
	}
	var out []BreakNote
	var ids []int64
	for rows.Next() {
		var n BreakNote
		var id, file, handle, from, to, epoch int64
		var client, key []byte
		if err := rows.Scan(&id, &file, &handle, &client, &key, &from, &to, &epoch, &n.AckRequired); err != nil {
			rows.Close()
			return nil, fmt.Errorf("locks: break outbox: %w", err)
		}
		n.File, n.Handle, n.Lease = FileID(file), HandleID(handle), scanIdentity(client, key)
		n.From, n.To, n.NewEpoch = CacheState(from), CacheState(to), uint16(epoch)
		n.ToOplock = oplockFor(n.To)
		out = append(out, n)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := tx.exec(`DELETE FROM lk_breaks WHERE id = ?`, id); err != nil {
			return nil, fmt.Errorf("locks: break outbox: %w", err)
		}
	}
	return out, nil
}

// AnyCaching reports whether any open anywhere holds caching or a break
// is undelivered: when not, no decision can break anything, and callers
// skip DecideCache (a read of two small tables' first rows).
func (tx *Tx) AnyCaching() (bool, error) {
	var n int64
	if err := tx.queryRow(`SELECT EXISTS(SELECT 1 FROM lk_opcache) OR EXISTS(SELECT 1 FROM lk_breaks)`, nil, &n); err != nil {
		return false, fmt.Errorf("locks: caching: %w", err)
	}
	return n != 0, nil
}

// cacheSignal is a broadcast of caching changes in this process.
type cacheSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// CacheChanges returns a channel closed at the next committed caching
// change of this process: a break recorded, acknowledged or expired, a
// grant, an open's caching dropped. Take it before deciding, then wait on
// it (with a poll for changes of other processes).
func (t *Table) CacheChanges() <-chan struct{} {
	t.cache.mu.Lock()
	defer t.cache.mu.Unlock()
	if t.cache.ch == nil {
		t.cache.ch = make(chan struct{})
	}
	return t.cache.ch
}

func (t *Table) cacheChanged() {
	t.cache.mu.Lock()
	if t.cache.ch != nil {
		close(t.cache.ch)
		t.cache.ch = nil
	}
	t.cache.mu.Unlock()
}

// DefaultCachePoll is how often a waiter decides again without a signal
// of this process: for breaks acknowledged in another process.
const DefaultCachePoll = 100 * time.Millisecond

// DecideCacheUpdate runs DecideCache in a write transaction of its own.
func (t *Table) DecideCacheUpdate(ctx context.Context, c CacheCall) (CacheResult, error) {
	var r CacheResult
	err := t.Update(ctx, func(tx *Tx) error {
		var err error
		r, err = tx.DecideCache(c)
		return err
	})
	return r, err
}

// WaitCache decides c again and again, outside any write transaction
// between decisions, until it no longer waits (the breaks were
// acknowledged, their opens closed, or their deadline passed) or ctx
// ends (ctx's error, with the last decision). It wakes at every caching
// change of this process, at the earliest deadline, and every poll
// (DefaultCachePoll when 0).
func (t *Table) WaitCache(ctx context.Context, c CacheCall, poll time.Duration) (CacheResult, error) {
	if poll <= 0 {
		poll = DefaultCachePoll
	}
	for {
		changed := t.CacheChanges()
		r, err := t.DecideCacheUpdate(ctx, c)
		if err != nil || !r.Wait {
			return r, err
		}
		d := poll
		if !r.NextDeadline.IsZero() {
			d = min(d, max(time.Until(r.NextDeadline), time.Millisecond))
		}
		tm := time.NewTimer(d)
		select {
		case <-changed:
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return r, ctx.Err()
		}
		tm.Stop()
	}
}

// AnyCachingPeek is AnyCaching in a lone read statement.
func (t *Table) AnyCachingPeek(ctx context.Context) (bool, error) {
	var any bool
	err := t.PeekStatement(ctx, func(tx *Tx) error {
		var err error
		any, err = tx.AnyCaching()
		return err
	})
	return any, err
}

// HasBreaks reports, in a lone read statement, whether the outbox holds
// breaks for this owner: the idle poll of a holder's process costs a read,
// not a write transaction.
func (t *Table) HasBreaks(ctx context.Context) (bool, error) {
	var n int64
	err := t.PeekStatement(ctx, func(tx *Tx) error {
		return tx.queryRow(`SELECT EXISTS(SELECT 1 FROM lk_breaks WHERE owner = ?)`, []any{string(tx.sess.owner)}, &n)
	})
	return n != 0, err
}
