package locks

// The methods of Tx: each loads what the rules need for one file, asks a
// pure rule (rules.go), and stores the outcome. When a refusal names
// handles of another owner, the owner is probed; a dead owner is reaped in
// the same transaction and the rule asked again, so a crashed holder never
// blocks anyone (in a View the reaping happens after fn, see Table.View).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// SQL returns the connection the transaction runs on, for the namespace's
// statements (they are part of the transaction).
func (tx *Tx) SQL() *Conn { return tx.conn }

// OnCommit registers f to run once this write transaction has committed,
// before the Table's next write transaction begins (under the same writer
// lock), and never if it rolls back: for state kept beside the database
// that must follow only what is durable — ids reserved in a table, say, to
// be handed out by later transactions without a write each. In a read
// transaction f never runs.
func (tx *Tx) OnCommit(f func()) {
	if tx.write {
		tx.onCommit = append(tx.onCommit, f)
	}
}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Owner is the owner id of the Table running the transaction.
func (tx *Tx) Owner() OwnerID { return tx.sess.owner }

func (tx *Tx) mustWrite(op string) error {
	if !tx.write {
		return fmt.Errorf("locks: %s in a read transaction (use Update): %w", op, ErrInvalidParameter)
	}
	return nil
}

func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	return tx.conn.ExecContext(tx.sctx, query, args...)
}

func (tx *Tx) query(query string, args ...any) (*sql.Rows, error) {
	return tx.conn.QueryContext(tx.sctx, query, args...)
}

const handleCols = `id, file, owner, access, share, open_share, delete_on_close, session, client_name, client_ip, open_time`

// handleByID finds handle id: by primary key when this owner knows its
// file, else by a scan of the handle table (other owners' ids: Force Close,
// List Handles). The second result is false when there is no such handle.
func (tx *Tx) handleByID(id HandleID) (Handle, bool, error) {
	var hs []Handle
	var err error
	if f, ok := tx.t.handleFile(id); ok {
		hs, err = scanHandles(tx.query(`SELECT `+handleCols+` FROM lk_handles WHERE file = ? AND id = ?`, int64(f), int64(id)))
	} else {
		hs, err = scanHandles(tx.query(`SELECT `+handleCols+` FROM lk_handles WHERE id = ?`, int64(id)))
	}
	if err != nil {
		return Handle{}, false, fmt.Errorf("locks: handle %d: %w", id, err)
	}
	if len(hs) == 0 {
		return Handle{}, false, nil
	}
	return hs[0], true, nil
}

func scanHandles(rows *sql.Rows, err error) ([]Handle, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hs []Handle
	for rows.Next() {
		var (
			h                  Handle
			id, file, sess, ot int64
			access, share, osh int64
			doc                bool
			owner              string
		)
		if err := rows.Scan(&id, &file, &owner, &access, &share, &osh, &doc, &sess, &h.ClientName, &h.ClientIP, &ot); err != nil {
			return nil, err
		}
		h.ID, h.File, h.Owner = HandleID(id), FileID(file), OwnerID(owner)
		h.Access, h.Share, h.OpenShare = Access(access), ShareMode(share), ShareMode(osh)
		h.DeleteOnClose, h.SessionID = doc, uint64(sess)
		h.OpenTime = unixNano(ot)
		hs = append(hs, h)
	}
	return hs, rows.Err()
}

func (tx *Tx) loadHandles(file FileID) ([]Handle, error) {
	hs, err := scanHandles(tx.query(`SELECT `+handleCols+` FROM lk_handles WHERE file = ? ORDER BY id`, int64(file)))
	if err != nil {
		return nil, fmt.Errorf("locks: handles of file %d: %w", file, err)
	}
	return hs, nil
}

func (tx *Tx) loadFile(file FileID) (pending bool, lease LeaseInfo, err error) {
	rows, err := tx.query(`SELECT delete_pending, lease_state, lease_id FROM lk_files WHERE file = ?`, int64(file))
	if err != nil {
		return false, LeaseInfo{}, fmt.Errorf("locks: state of file %d: %w", file, err)
	}
	defer rows.Close()
	if rows.Next() {
		var state int64
		if err := rows.Scan(&pending, &state, &lease.ID); err != nil {
			return false, LeaseInfo{}, fmt.Errorf("locks: state of file %d: %w", file, err)
		}
		lease.State = LeaseState(state)
	}
	if err := rows.Err(); err != nil {
		return false, LeaseInfo{}, fmt.Errorf("locks: state of file %d: %w", file, err)
	}
	return pending, lease, nil
}

func (tx *Tx) storeFile(file FileID, pending bool, lease LeaseInfo) error {
	if err := tx.holds(file, "lease and delete-pending mark"); err != nil {
		return err
	}
	var err error
	if !pending && lease.State == LeaseAvailable {
		_, err = tx.exec(`DELETE FROM lk_files WHERE file = ?`, int64(file))
	} else {
		_, err = tx.exec(`INSERT INTO lk_files(file, delete_pending, lease_state, lease_id) VALUES(?, ?, ?, ?)
			ON CONFLICT(file) DO UPDATE SET delete_pending = excluded.delete_pending,
			lease_state = excluded.lease_state, lease_id = excluded.lease_id`,
			int64(file), pending, int64(lease.State), lease.ID)
	}
	if err != nil {
		return fmt.Errorf("locks: store state of file %d: %w", file, err)
	}
	return nil
}

func (tx *Tx) loadLocks(file FileID) ([]lockRec, error) {
	rows, err := tx.query(`SELECT l.id, l.handle, l.lkey, l.off, l.len, l.kind, l.posix, h.owner
		FROM lk_locks l JOIN lk_handles h ON h.file = l.file AND h.id = l.handle WHERE l.file = ? ORDER BY l.id`, int64(file))
	if err != nil {
		return nil, fmt.Errorf("locks: byte-range locks of file %d: %w", file, err)
	}
	defer rows.Close()
	var ls []lockRec
	for rows.Next() {
		var (
			l                    lockRec
			handle, key, off, ln int64
			kind, style          int64
			owner                string
		)
		if err := rows.Scan(&l.row, &handle, &key, &off, &ln, &kind, &style, &owner); err != nil {
			return nil, fmt.Errorf("locks: byte-range locks of file %d: %w", file, err)
		}
		l.POSIX, l.Flock = style == stylePOSIX, style == styleFlock
		l.Handle, l.Key = HandleID(handle), uint64(key)
		l.Range = Range{Offset: uint64(off), Length: uint64(ln)}
		l.Kind, l.owner = LockKind(kind), OwnerID(owner)
		ls = append(ls, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("locks: byte-range locks of file %d: %w", file, err)
	}
	return ls, nil
}

// Lock styles, stored in lk_locks.posix (a boolean before schema 2).
const (
	styleSMB   = 0 // Lock/Unlock
	stylePOSIX = 1 // SetPOSIXLock
	styleFlock = 2 // Flock
)

func lockStyle(l ByteLock) int64 {
	switch {
	case l.Flock:
		return styleFlock
	case l.POSIX:
		return stylePOSIX
	}
	return styleSMB
}

func (tx *Tx) insertLock(file FileID, l ByteLock) error {
	if err := tx.holds(file, "byte-range locks"); err != nil {
		return err
	}
	tx.t.noteLocks(l.Handle)
	_, err := tx.exec(`INSERT INTO lk_locks(file, handle, lkey, off, len, kind, posix) VALUES(?, ?, ?, ?, ?, ?, ?)`,
		int64(file), int64(l.Handle), int64(l.Key), int64(l.Range.Offset), int64(l.Range.Length), int64(l.Kind), lockStyle(l))
	if err != nil {
		return fmt.Errorf("locks: store lock %v on handle %d: %w", l.Range, l.Handle, err)
	}
	return nil
}

// stateQuery reads a file's lk_files row (id 0, if any) and its handles in
// one statement, with only the handle columns the rules read (id, owner,
// access, share): each column costs the driver about a third of a
// microsecond, and this runs in every open, unlink and REST check.
const stateQuery = `SELECT 0, lease_id, delete_pending, lease_state FROM lk_files WHERE file = ?1
	UNION ALL SELECT * FROM (SELECT id, owner, access, share FROM lk_handles WHERE file = ?1 ORDER BY id)`

// loadState loads what the rules decide from. Its handles carry ID, File,
// Owner, Access and Share only.
func (tx *Tx) loadState(file FileID, withLocks bool) (*fileState, error) {
	if err := tx.holds(file, "state"); err != nil {
		return nil, err
	}
	st := &fileState{file: file}
	rows, err := tx.query(stateQuery, int64(file))
	if err != nil {
		return nil, fmt.Errorf("locks: state of file %d: %w", file, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, access, share int64
		var owner string
		if err := rows.Scan(&id, &owner, &access, &share); err != nil {
			return nil, fmt.Errorf("locks: state of file %d: %w", file, err)
		}
		if id == 0 { // the lk_files row, in handle clothing
			st.stored = true
			st.lease.ID = owner
			st.pending = access != 0
			st.lease.State = LeaseState(share)
			continue
		}
		st.handles = append(st.handles, Handle{ID: HandleID(id), File: file, Owner: OwnerID(owner), Access: Access(access), Share: ShareMode(share)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("locks: state of file %d: %w", file, err)
	}
	if withLocks {
		if st.locks, err = tx.loadLocks(file); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// decide loads file's state and applies rule; a refusal by handles of a
// dead owner reaps that owner and decides again.
func (tx *Tx) decide(file FileID, withLocks bool, rule func(st *fileState) error) (*fileState, error) {
	for {
		st, err := tx.loadState(file, withLocks)
		if err != nil {
			return nil, err
		}
		rerr := rule(st)
		if rerr == nil {
			return st, nil
		}
		var ce *ConflictError
		if !errors.As(rerr, &ce) || len(ce.Handles) == 0 {
			return st, rerr
		}
		reaped, err := tx.reapBlockers(st, ce.Handles)
		if err != nil {
			return nil, err
		}
		if !reaped {
			return st, rerr
		}
	}
}

// reapBlockers probes the owners of the blocking handles and reaps the
// dead ones (in a read transaction it only flags them for View).
func (tx *Tx) reapBlockers(st *fileState, blockers []HandleID) (bool, error) {
	var owners []OwnerID
	for _, h := range st.handles {
		if slices.Contains(blockers, h.ID) && h.Owner != tx.sess.owner && !slices.Contains(owners, h.Owner) {
			owners = append(owners, h.Owner)
		}
	}
	reaped := false
	for _, o := range owners {
		dead, err := tx.ownerDead(o)
		if err != nil {
			return false, err
		}
		if !dead {
			continue
		}
		if !tx.write {
			tx.needReap = true
			continue
		}
		if err := tx.reapOwner(o); err != nil {
			return false, err
		}
		tx.t.log.Info("reaped dead owner blocking a request", "dead_owner", string(o), "file", uint64(st.file))
		reaped = true
	}
	return reaped, nil
}

// ownerDead judges o (judgeOwner: no session row, heartbeat expired by the
// database's clock, or on this host its flock free); a failing probe
// counts as alive (and is logged).
func (tx *Tx) ownerDead(o OwnerID) (bool, error) {
	if o == tx.sess.owner {
		return false, nil
	}
	cause, err := tx.ownerCause(o)
	if err != nil {
		var probe *probeError
		if errors.As(err, &probe) {
			tx.t.log.Warn("owner probe failed; treating owner as alive", "probed_owner", string(o), "err", err)
			return false, nil
		}
		return false, err
	}
	if cause != CauseNone {
		tx.t.log.Debug("owner is dead", "dead_owner", string(o), "cause", string(cause))
	}
	return cause != CauseNone, nil
}

// knownOwners lists the registered owners plus owners that only appear on
// handles (a registration lost by a crash between steps cannot happen, but
// the union costs nothing).
func (tx *Tx) knownOwners() ([]OwnerID, error) {
	rows, err := tx.query(`SELECT owner FROM lk_owners UNION SELECT DISTINCT owner FROM lk_handles`)
	if err != nil {
		return nil, fmt.Errorf("locks: list owners: %w", err)
	}
	defer rows.Close()
	var owners []OwnerID
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, fmt.Errorf("locks: list owners: %w", err)
		}
		owners = append(owners, OwnerID(o))
	}
	return owners, rows.Err()
}

// reapOwner closes every handle of o (running delete-on-close and
// completing deletes) and deregisters o.
func (tx *Tx) reapOwner(o OwnerID) error {
	hs, err := scanHandles(tx.query(`SELECT `+handleCols+` FROM lk_handles WHERE owner = ? ORDER BY id`, string(o)))
	if err != nil {
		return fmt.Errorf("locks: handles of owner %s: %w", o, err)
	}
	keys := make([]FileID, len(hs), len(hs)+1)
	for i, h := range hs {
		keys[i] = h.File
	}
	tx.lockKeys("reapOwner", append(keys, ownerKey(o))...)
	for _, h := range hs {
		// A handle closed by another transaction while this one waited
		// for its file's key is gone: nothing left to close.
		if _, err := tx.closeRow(h); err != nil && !errors.Is(err, errHandleGone) {
			return err
		}
	}
	if err := tx.holds(ownerKey(o), "session of owner "+string(o)); err != nil {
		return err
	}
	if _, err := tx.exec(`DELETE FROM lk_owners WHERE owner = ?`, string(o)); err != nil {
		return fmt.Errorf("locks: deregister owner %s: %w", o, err)
	}
	if o != tx.sess.owner {
		tx.reaped = append(tx.reaped, o)
	}
	return nil
}

// closeRow closes handle h whoever owns it: its locks go, delete-on-close
// marks the file, and the last handle of a delete-pending file removes it.
//
// h was read before its file's key was locked; the handle's row is checked
// again by the DELETE itself: a handle another transaction closed
// meanwhile fails with errHandleGone, having changed nothing (its
// delete-on-close ran with that close).
func (tx *Tx) closeRow(h Handle) (CloseResult, error) {
	if err := tx.holds(h.File, "handle"); err != nil {
		return CloseResult{}, err
	}
	res, err := tx.exec(`DELETE FROM lk_handles WHERE file = ? AND id = ?`, int64(h.File), int64(h.ID))
	if err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", h.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", h.ID, err)
	} else if n == 0 {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", h.ID, errHandleGone)
	}
	if _, err := tx.exec(`DELETE FROM lk_locks WHERE file = ? AND handle = ?`, int64(h.File), int64(h.ID)); err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", h.ID, err)
	}
	if _, err := tx.exec(`DELETE FROM lk_durable WHERE file = ? AND handle = ?`, int64(h.File), int64(h.ID)); err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", h.ID, err)
	}
	if h.Owner == tx.sess.owner {
		tx.t.forgetHandle(h.ID)
	}
	pending, _, err := tx.loadFile(h.File)
	if err != nil {
		return CloseResult{}, err
	}
	return tx.finishClose(h.ID, h.File, h.DeleteOnClose, pending)
}

// closeOwn is CloseHandle's fast path for a handle this Table opened
// without delete-on-close: one DELETE that succeeds only while the file is
// not delete-pending — then nothing else can follow from the close. It
// reports ok=false when it did nothing (handle gone, not ours, or the file
// pending), and the caller takes the full path.
func (tx *Tx) closeOwn(id HandleID, file FileID) (CloseResult, bool, error) {
	if err := tx.holds(file, "handle"); err != nil {
		return CloseResult{}, false, err
	}
	res, err := tx.exec(`DELETE FROM lk_handles WHERE file = ?1 AND id = ?2 AND owner = ?3 AND delete_on_close = 0
		AND NOT EXISTS (SELECT 1 FROM lk_files WHERE file = ?1 AND delete_pending)`,
		int64(file), int64(id), string(tx.sess.owner))
	if err != nil {
		return CloseResult{}, false, fmt.Errorf("locks: close handle %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return CloseResult{}, false, fmt.Errorf("locks: close handle %d: %w", id, err)
	}
	if n == 0 {
		return CloseResult{}, false, nil
	}
	if tx.t.mayHaveLocks(id) {
		if _, err := tx.exec(`DELETE FROM lk_locks WHERE file = ? AND handle = ?`, int64(file), int64(id)); err != nil {
			return CloseResult{}, false, fmt.Errorf("locks: close handle %d: %w", id, err)
		}
	}
	tx.t.forgetHandle(id)
	return CloseResult{}, true, nil
}

// finishClose runs delete-on-close and completes a pending delete once the
// file's last handle is gone.
func (tx *Tx) finishClose(id HandleID, file FileID, doc, pending bool) (CloseResult, error) {
	if doc && !pending {
		pending = true
		if _, err := tx.exec(`INSERT INTO lk_files(file, delete_pending) VALUES(?, 1)
			ON CONFLICT(file) DO UPDATE SET delete_pending = 1`, int64(file)); err != nil {
			return CloseResult{}, fmt.Errorf("locks: close handle %d: mark file %d: %w", id, file, err)
		}
	}
	if !pending {
		return CloseResult{}, nil
	}
	var left int
	if err := tx.queryRow(`SELECT count(*) FROM lk_handles WHERE file = ?`, []any{int64(file)}, &left); err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: count handles of file %d: %w", id, file, err)
	}
	if left > 0 {
		return CloseResult{}, nil
	}
	if err := tx.removeFile(file, nil); err != nil {
		return CloseResult{}, fmt.Errorf("locks: close handle %d: %w", id, err)
	}
	return CloseResult{Removed: true}, nil
}

// queryRow runs a one-row query and scans it into dest.
func (tx *Tx) queryRow(query string, args []any, dest ...any) error {
	return tx.conn.QueryRowContext(tx.sctx, query, args...).Scan(dest...)
}

// removeFile completes a delete: the namespace's Remove, then the file's
// lock state goes. st, when not nil, is the file's state as this
// transaction loaded it: with no handles and no lk_files row there is no
// state to delete (byte-range locks belong to handles), which saves an
// unlink of a file nobody holds three statements.
func (tx *Tx) removeFile(file FileID, st *fileState) error {
	if tx.t.opts.Remove != nil {
		if err := tx.t.opts.Remove(tx.ctx, tx.conn, file); err != nil {
			return fmt.Errorf("remove file %d: %w", file, err)
		}
	}
	if st != nil && !st.stored && len(st.handles) == 0 {
		return nil
	}
	return tx.forget(file)
}

// Forget drops every trace of file (handles, locks, lease, pending mark),
// for a file the namespace removed through REST.
func (tx *Tx) Forget(file FileID) error {
	if err := tx.mustWrite("Forget"); err != nil {
		return err
	}
	tx.lockKeys("Forget", file)
	return tx.forget(file)
}

func (tx *Tx) forget(file FileID) error {
	if err := tx.holds(file, "handles, locks and lease"); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM lk_locks WHERE file = ?`,
		`DELETE FROM lk_handles WHERE file = ?`,
		`DELETE FROM lk_files WHERE file = ?`,
	} {
		if _, err := tx.exec(q, int64(file)); err != nil {
			return fmt.Errorf("locks: forget file %d: %w", file, err)
		}
	}
	return nil
}

// Handle returns one handle, of any owner. Errors: ErrHandleClosed.
func (tx *Tx) Handle(id HandleID) (Handle, error) {
	h, ok, err := tx.handleByID(id)
	if err != nil {
		return Handle{}, err
	}
	if !ok {
		return Handle{}, fmt.Errorf("locks: handle %d: %w", id, ErrHandleClosed)
	}
	return h, nil
}

// HandleOpen is Handle for a caller that only needs to know the handle is
// still open (a commit through it: a force-closed handle loses its
// writes). For this Table's handles it reads one column by primary key
// instead of the whole row. Errors: ErrHandleClosed.
func (tx *Tx) HandleOpen(id HandleID) error {
	f, ok := tx.t.handleFile(id)
	if !ok {
		_, err := tx.Handle(id)
		return err
	}
	var one int
	err := tx.queryRow(`SELECT 1 FROM lk_handles WHERE file = ? AND id = ?`, []any{int64(f), int64(id)}, &one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("locks: handle %d: %w", id, ErrHandleClosed)
	case err != nil:
		return fmt.Errorf("locks: handle %d: %w", id, err)
	}
	return nil
}

// ownHandle returns handle id if this owner holds it; another owner's
// handle is ErrHandleClosed for op (only ForceClose reaches across owners).
func (tx *Tx) ownHandle(id HandleID, op string) (Handle, error) {
	h, err := tx.Handle(id)
	if err != nil {
		return Handle{}, fmt.Errorf("%s: %w", op, err)
	}
	if h.Owner != tx.sess.owner {
		return Handle{}, fmt.Errorf("locks: %s: handle %d belongs to owner %s: %w", op, id, h.Owner, ErrHandleClosed)
	}
	return h, nil
}

// Handles returns the live handles open on file, in id order. Handles of
// dead owners are never listed: in an Update their owners are reaped in
// this transaction; in a View they are left out and View reaps their
// owners after fn and runs fn again (see liveHandles).
func (tx *Tx) Handles(file FileID) ([]Handle, error) {
	hs, err := tx.loadHandles(file)
	if err != nil {
		return nil, err
	}
	return tx.liveHandles(hs)
}

// AllHandles returns every live handle in the table, in id order (List
// Handles on a directory filters these by the namespace's subtree). Dead
// owners' handles are left out and reaped, as in Handles.
func (tx *Tx) AllHandles() ([]Handle, error) {
	hs, err := scanHandles(tx.query(`SELECT ` + handleCols + ` FROM lk_handles ORDER BY id`))
	if err != nil {
		return nil, fmt.Errorf("locks: all handles: %w", err)
	}
	return tx.liveHandles(hs)
}

// liveHandles drops the handles of dead owners from hs, probing each other
// owner once. In a write transaction a dead owner is reaped at once (its
// handles close, delete-on-close and pending deletes complete); in a read
// transaction it is flagged for View, which reaps after fn and runs it
// again. A probe that fails counts as alive (ownerDead).
func (tx *Tx) liveHandles(hs []Handle) ([]Handle, error) {
	var dead map[OwnerID]bool
	for _, h := range hs {
		if h.Owner == tx.sess.owner {
			continue
		}
		if _, probed := dead[h.Owner]; probed {
			continue
		}
		d, err := tx.ownerDead(h.Owner)
		if err != nil {
			return nil, err
		}
		if dead == nil {
			dead = map[OwnerID]bool{}
		}
		dead[h.Owner] = d
	}
	out := hs[:0]
	for _, h := range hs {
		if !dead[h.Owner] {
			out = append(out, h)
		}
	}
	for o, d := range dead {
		if !d {
			continue
		}
		if !tx.write {
			tx.needReap = true
			continue
		}
		if err := tx.reapOwner(o); err != nil {
			return nil, err
		}
		tx.t.log.Info("reaped dead owner met while listing handles", "dead_owner", string(o))
	}
	return out, nil
}

// Locks returns the byte-range locks on file, in the order they were taken.
func (tx *Tx) Locks(file FileID) ([]ByteLock, error) {
	ls, err := tx.loadLocks(file)
	if err != nil {
		return nil, err
	}
	out := make([]ByteLock, len(ls))
	for i, l := range ls {
		out[i] = l.ByteLock
	}
	return out, nil
}

// OpenHandle grants a handle if the MS-FSA sharing check (both directions),
// the delete-pending state and an active lease (§4.4, A14) allow it.
// Errors: ErrDeletePending, ErrSharingViolation (a *ConflictError naming
// the handles in the way), ErrInvalidParameter for undefined access or
// share bits. An open with no data access (attribute-only, or no access at
// all) is checked only for delete-pending.
func (tx *Tx) OpenHandle(req OpenRequest) (Handle, error) {
	if err := tx.mustWrite("OpenHandle"); err != nil {
		return Handle{}, err
	}
	if err := validateOpen(req); err != nil {
		return Handle{}, err
	}
	st := &fileState{file: req.File}
	var err error
	if req.Created {
		err = decideOpen(st, req) // a new id: nobody else can know it to lock or hold it
	} else {
		tx.lockKeys("OpenHandle", req.File)
		st, err = tx.decide(req.File, false, func(st *fileState) error { return decideOpen(st, req) })
	}
	if err != nil {
		return Handle{}, err
	}
	if max := tx.t.opts.MaxHandlesPerFile; max > 0 && len(st.handles) >= max {
		return Handle{}, fmt.Errorf("locks: open file %d: %d handles open: %w", req.File, len(st.handles), ErrHandleLimit)
	}
	id, err := tx.newHandleID()
	if err != nil {
		return Handle{}, fmt.Errorf("locks: open file %d: %w", req.File, err)
	}
	now := tx.t.opts.Now()
	if _, err := tx.exec(`INSERT INTO lk_handles(id, file, owner, access, share, open_share, delete_on_close, session, client_name, client_ip, open_time)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, int64(req.File), string(tx.sess.owner), int64(req.Access), int64(req.Share), int64(req.Share),
		req.DeleteOnClose, int64(req.SessionID), req.ClientName, req.ClientIP, now.UnixNano()); err != nil {
		return Handle{}, fmt.Errorf("locks: open file %d: %w", req.File, err)
	}
	tx.t.rememberHandle(HandleID(id), req.File)
	tx.opened = append(tx.opened, HandleID(id))
	return Handle{
		ID: HandleID(id), File: req.File, Owner: tx.sess.owner, Access: req.Access,
		Share: req.Share, OpenShare: req.Share, DeleteOnClose: req.DeleteOnClose,
		SessionID: req.SessionID, ClientName: req.ClientName, ClientIP: req.ClientIP,
		OpenTime: unixNano(now.UnixNano()),
	}, nil
}

// newHandleID hands out the next id of this Table's reserved block,
// reserving a new block in lk_meta when it runs out. The block becomes the
// Table's only if the transaction commits.
func (tx *Tx) newHandleID() (int64, error) {
	if tx.nextID >= tx.idLimit {
		var start int64
		err := tx.queryRow(`INSERT INTO lk_meta(name, value) VALUES('next_handle', 1 + ?)
			ON CONFLICT(name) DO UPDATE SET value = value + ? RETURNING value - ?`,
			[]any{idBlock, idBlock, idBlock}, &start)
		if err != nil {
			return 0, fmt.Errorf("reserve handle ids: %w", err)
		}
		tx.nextID, tx.idLimit = start, start+idBlock
	}
	id := tx.nextID
	tx.nextID++
	return id, nil
}

// CloseHandle closes a handle of this owner: its byte-range locks go, a
// delete-on-close handle marks the file delete-pending, and if that leaves a
// delete-pending file with no handles the file is removed (Options.Remove).
// Errors: ErrHandleClosed for an unknown or force-closed id, or another
// owner's handle.
func (tx *Tx) CloseHandle(id HandleID) (CloseResult, error) {
	if err := tx.mustWrite("CloseHandle"); err != nil {
		return CloseResult{}, err
	}
	if f, ok := tx.t.handleFile(id); ok {
		tx.lockKeys("CloseHandle", f)
		res, found, err := tx.closeOwn(id, f)
		if err != nil || found {
			return res, err
		}
	}
	h, err := tx.ownHandle(id, "close")
	if err != nil {
		return CloseResult{}, err
	}
	tx.lockKeys("CloseHandle", h.File)
	res, err := tx.closeRow(h)
	if errors.Is(err, errHandleGone) {
		return CloseResult{}, fmt.Errorf("locks: close: handle %d: %w", id, ErrHandleClosed)
	}
	return res, err
}

// CloseQuiet closes a handle of this owner only if nothing can follow from
// its close: it is not delete-on-close and its file is not delete-pending.
// It reports false, having done nothing, otherwise (or when the id is not
// this owner's): call CloseHandle then. A caller that must look at the file
// before a close that may remove it does so only when this fails.
func (tx *Tx) CloseQuiet(id HandleID) (bool, error) {
	if err := tx.mustWrite("CloseQuiet"); err != nil {
		return false, err
	}
	f, ok := tx.t.handleFile(id)
	if !ok {
		return false, nil
	}
	tx.lockKeys("CloseQuiet", f)
	_, found, err := tx.closeOwn(id, f)
	return found, err
}

// ForceClose closes a handle of any owner (Force Close Handles), with the
// same effects as CloseHandle (locks go, delete-on-close runs, the last
// handle of a delete-pending file removes it). It reports whether the
// handle existed; an unknown id is (false, nil). The owner's next use of
// the id gets ErrHandleClosed.
func (tx *Tx) ForceClose(id HandleID) (bool, error) {
	if err := tx.mustWrite("ForceClose"); err != nil {
		return false, err
	}
	h, err := tx.Handle(id)
	if errors.Is(err, ErrHandleClosed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	tx.lockKeys("ForceClose", h.File)
	if _, err := tx.closeRow(h); errors.Is(err, errHandleGone) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// Dispose sets (true) or clears (false) the delete disposition through a
// handle of this owner (FileDispositionInformation, locking.md §2.1). Both
// need DELETE access (ErrAccessDenied); setting also needs a file without
// ReadOnly (ErrCannotDelete) and, for a directory, no children
// (ErrDirectoryNotEmpty). Clearing does not cancel a delete-on-close
// handle: its close marks the file again.
func (tx *Tx) Dispose(id HandleID, deletePending bool, facts Facts) error {
	if err := tx.mustWrite("Dispose"); err != nil {
		return err
	}
	h, err := tx.ownHandle(id, "dispose")
	if err != nil {
		return err
	}
	if err := decideDispose(h, deletePending, facts); err != nil {
		return err
	}
	tx.lockKeys("Dispose", h.File)
	st, err := tx.loadState(h.File, false)
	if err != nil {
		return err
	}
	if !st.hasHandle(id) { // closed while this transaction waited for the key
		return fmt.Errorf("locks: dispose: handle %d: %w", id, ErrHandleClosed)
	}
	if st.pending == deletePending {
		return nil
	}
	return tx.storeFile(h.File, deletePending, st.lease)
}

// DeletePending reports whether file is marked delete-pending.
func (tx *Tx) DeletePending(file FileID) (bool, error) {
	p, _, err := tx.loadFile(file)
	return p, err
}

// UnlinkOpen is an unlink through the mount: the same as opening a handle
// with DELETE access (share all), disposing it and closing it. It fails with
// ErrDeletePending if already pending, ErrSharingViolation if a handle does
// not share Delete (or the file is leased, A14), then ErrCannotDelete for
// ReadOnly and ErrDirectoryNotEmpty for a non-empty directory. With no
// other handle open the file is removed at once (Options.Remove runs) and
// removed is true; otherwise the file is left delete-pending until its last
// handle closes.
func (tx *Tx) UnlinkOpen(file FileID, facts Facts) (removed bool, err error) {
	if err := tx.mustWrite("UnlinkOpen"); err != nil {
		return false, err
	}
	open := OpenRequest{File: file, Access: AccessDelete, Share: ShareAll}
	tx.lockKeys("UnlinkOpen", file)
	st, err := tx.decide(file, false, func(st *fileState) error { return decideOpen(st, open) })
	if err != nil {
		return false, err
	}
	if err := decideDispose(Handle{File: file, Access: AccessDelete}, true, facts); err != nil {
		return false, fmt.Errorf("unlink: %w", err)
	}
	if len(st.handles) == 0 {
		if err := tx.removeFile(file, st); err != nil {
			return false, fmt.Errorf("locks: unlink: %w", err)
		}
		return true, nil
	}
	return false, tx.storeFile(file, true, st.lease)
}

// Flock applies flock(2) for a handle of this owner: kind LockShared
// (LOCK_SH) or LockExclusive (LOCK_EX) takes or converts the handle's
// flock, 0 (LOCK_UN) drops it. A flock conflicts only with other handles'
// flocks on the file (an exclusive one with any, a shared one with an
// exclusive one), as between open file descriptions on a local disk: not
// with opens, share modes or byte-range locks. To REST and SMB it is a
// whole-file byte-range lock held by the handle (what the Linux SMB client
// turns flock into): REST reads and writes meet it as ErrLockConflict, SMB
// lock requests as ErrLockNotGranted. POSIX requesters (CheckIOKey,
// SetPOSIXLock) ignore it: flock is advisory to them. The flock goes when
// the handle closes. Errors: ErrLockNotGranted (a *ConflictError naming the
// holders; a dead owner's flocks are reaped first), ErrInvalidParameter,
// ErrHandleClosed.
func (tx *Tx) Flock(id HandleID, kind LockKind) error {
	if err := tx.mustWrite("Flock"); err != nil {
		return err
	}
	if kind != 0 && !validKind(kind) {
		return fmt.Errorf("locks: flock handle %d: kind %d: %w", id, int(kind), ErrInvalidParameter)
	}
	h, err := tx.ownHandle(id, "flock")
	if err != nil {
		return err
	}
	tx.lockKeys("Flock", h.File)
	if kind != 0 {
		if _, err := tx.decide(h.File, true, func(st *fileState) error {
			if !st.hasHandle(id) {
				return fmt.Errorf("locks: flock: handle %d: %w", id, ErrHandleClosed)
			}
			if hs := flockBlockers(st.locks, id, kind); len(hs) > 0 {
				return &ConflictError{Err: ErrLockNotGranted, File: h.File, Op: "flock", Handles: hs}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if err := tx.holds(h.File, "flock"); err != nil {
		return err
	}
	if _, err := tx.exec(`DELETE FROM lk_locks WHERE file = ? AND handle = ? AND posix = ?`, int64(h.File), int64(id), styleFlock); err != nil {
		return fmt.Errorf("locks: flock handle %d: %w", id, err)
	}
	if kind == 0 {
		return nil
	}
	return tx.insertLock(h.File, ByteLock{Handle: id, Range: WholeFile, Kind: kind, Flock: true})
}

// CheckREST decides a FileREST call in the order of locking.md §0.2:
// ErrDeletePending; ErrSharingViolation (share modes; any handle for
// OpDelete); lease errors (*LeaseError); ErrReadOnly (our placement, A5:
// after the lease, before byte ranges); ErrLockConflict. Refusals by
// handles are *ConflictError. It works in View and Update.
//
// The caller answers 404 itself before calling when the path is missing,
// and clears Facts.ReadOnly when the request carries an ignore-readonly
// header or itself clears the ReadOnly attribute.
func (tx *Tx) CheckREST(req RESTRequest) error {
	_, err := tx.CheckRESTLease(req)
	return err
}

// CheckRESTLease is CheckREST that also returns the file's lease status as
// the check read it (Get File Properties reports both), saving a second
// read of the file's state.
func (tx *Tx) CheckRESTLease(req RESTRequest) (LeaseInfo, error) {
	withLocks := req.Op == OpGetFile || req.Op == OpPutRange
	tx.lockKeys("CheckREST", req.File) // in an Update only: a View reads its snapshot
	st, err := tx.decide(req.File, withLocks, func(st *fileState) error { return decideREST(st, req) })
	if err != nil {
		return LeaseInfo{}, err
	}
	return st.lease, nil
}

// Lease runs one Lease File action (locking.md §4.2). Acquire is checked
// against open handles both ways (§1.5, A3). It returns the lease id to
// report: the new id for acquire and change, "" for release and break.
// Errors: *LeaseError (409 codes), ErrSharingViolation, ErrDeletePending,
// ErrInvalidParameter (unknown action; change without both ids; release
// without an id).
func (tx *Tx) Lease(req LeaseRequest) (string, error) {
	if err := tx.mustWrite("Lease"); err != nil {
		return "", err
	}
	var (
		next LeaseInfo
		id   string
	)
	tx.lockKeys("Lease", req.File)
	st, err := tx.decide(req.File, false, func(st *fileState) error {
		var err error
		next, id, err = decideLease(st, req, tx.t.opts.NewLeaseID)
		return err
	})
	if err != nil {
		return "", err
	}
	if next != st.lease {
		if err := tx.storeFile(req.File, st.pending, next); err != nil {
			return "", err
		}
	}
	return id, nil
}

// LeaseInfo returns a file's lease status.
func (tx *Tx) LeaseInfo(file FileID) (LeaseInfo, error) {
	_, l, err := tx.loadFile(file)
	return l, err
}

// Lock takes an SMB byte-range lock for a handle of this owner (no
// waiting). Errors: ErrLockNotGranted (a *ConflictError), ErrInvalidLockRange
// (last byte past 2^64-1), ErrInvalidParameter (unknown kind),
// ErrHandleClosed. A zero-length range is granted (A15); it conflicts with
// nothing.
func (tx *Tx) Lock(id HandleID, r Range, kind LockKind) error {
	if err := tx.mustWrite("Lock"); err != nil {
		return err
	}
	if !validKind(kind) {
		return fmt.Errorf("locks: lock handle %d: kind %d: %w", id, int(kind), ErrInvalidParameter)
	}
	if err := validLockRange(r); err != nil {
		return fmt.Errorf("locks: lock handle %d: %w", id, err)
	}
	h, err := tx.ownHandle(id, "lock")
	if err != nil {
		return err
	}
	tx.lockKeys("Lock", h.File)
	who := lockRequester{handle: id, owner: h.Owner}
	if _, err := tx.decide(h.File, true, func(st *fileState) error {
		if !st.hasHandle(id) {
			return fmt.Errorf("locks: lock: handle %d: %w", id, ErrHandleClosed)
		}
		if l, ok := lockBlocker(st.locks, who, r, kind); ok {
			return &ConflictError{Err: ErrLockNotGranted, File: h.File, Op: "lock", Handles: []HandleID{l.Handle}}
		}
		return nil
	}); err != nil {
		return err
	}
	return tx.insertLock(h.File, ByteLock{Handle: id, Range: r, Kind: kind})
}

// Unlock removes exactly a range this handle locked with Lock
// (ErrRangeNotLocked otherwise). When the handle holds both an exclusive
// and a shared lock on that range, the exclusive one goes first.
func (tx *Tx) Unlock(id HandleID, r Range) error {
	if err := tx.mustWrite("Unlock"); err != nil {
		return err
	}
	if err := validLockRange(r); err != nil {
		return fmt.Errorf("locks: unlock handle %d: %w", id, err)
	}
	h, err := tx.ownHandle(id, "unlock")
	if err != nil {
		return err
	}
	tx.lockKeys("Unlock", h.File)
	if err := tx.holds(h.File, "byte-range locks"); err != nil {
		return err
	}
	res, err := tx.exec(`DELETE FROM lk_locks WHERE id = (SELECT id FROM lk_locks
		WHERE file = ? AND handle = ? AND posix = 0 AND off = ? AND len = ? ORDER BY kind DESC, id LIMIT 1)`,
		int64(h.File), int64(id), int64(r.Offset), int64(r.Length))
	if err != nil {
		return fmt.Errorf("locks: unlock handle %d %v: %w", id, r, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("locks: unlock handle %d %v: %w", id, r, err)
	} else if n == 0 {
		return fmt.Errorf("locks: unlock handle %d %v: %w", id, r, ErrRangeNotLocked)
	}
	return nil
}

// CheckIO decides a read or write through a handle against byte-range locks
// (§3.2): the locks taken through this handle are its own. A zero-length
// access never conflicts. Errors: ErrLockConflict (a *ConflictError),
// ErrInvalidLockRange, ErrHandleClosed.
func (tx *Tx) CheckIO(id HandleID, r Range, write bool) error {
	return tx.checkIO(id, lockRequester{handle: id}, r, write)
}

// CheckIOKey is CheckIO for an I/O of a POSIX process (the FUSE mount),
// key being the process's POSIX lock owner (a FUSE READ or WRITE names it
// when direct I/O). POSIX locks are per process: those of key on the file
// are the I/O's own, whichever of the owner's handles took them, and so
// never block it; a POSIX lock taken through this handle by another
// process (sharing the open file description) does. Key 0 means the owner
// is unknown (I/O from the page cache): the locks taken through this
// handle are then its own, as for CheckIO. Flocks never block it: flock is
// advisory between POSIX processes.
func (tx *Tx) CheckIOKey(id HandleID, key uint64, r Range, write bool) error {
	return tx.checkIO(id, lockRequester{handle: id, key: key, posix: true}, r, write)
}

// ioQuery reads, in one statement, whether handle ?2 of file ?1 is open
// (no row: closed) with its owner, and the file's byte-range locks with
// their holders' owners (a row with NULL lock columns: no locks; a lock
// whose holder row is missing has a NULL holder owner and is skipped, as
// loadLocks' inner join skips it).
const ioQuery = `SELECT h.owner, l.id, l.handle, l.lkey, l.off, l.len, l.kind, l.posix, lh.owner
	FROM lk_handles h
	LEFT JOIN lk_locks l ON l.file = h.file
	LEFT JOIN lk_handles lh ON lh.file = l.file AND lh.id = l.handle
	WHERE h.file = ?1 AND h.id = ?2
	ORDER BY l.id`

// ioState loads handle id (on file, from this Table's hint) and the file's
// byte-range locks in one statement; ok is false if the handle is gone.
func (tx *Tx) ioState(id HandleID, file FileID) (owner OwnerID, ls []lockRec, ok bool, err error) {
	rows, err := tx.query(ioQuery, int64(file), int64(id))
	if err != nil {
		return "", nil, false, fmt.Errorf("locks: io handle %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			hOwner                    string
			row, handle, key, off, ln sql.NullInt64
			kind, style               sql.NullInt64
			lOwner                    sql.NullString
		)
		if err := rows.Scan(&hOwner, &row, &handle, &key, &off, &ln, &kind, &style, &lOwner); err != nil {
			return "", nil, false, fmt.Errorf("locks: io handle %d: %w", id, err)
		}
		owner, ok = OwnerID(hOwner), true
		if !row.Valid || !lOwner.Valid {
			continue
		}
		var l lockRec
		l.row = row.Int64
		l.Handle, l.Key = HandleID(handle.Int64), uint64(key.Int64)
		l.Range = Range{Offset: uint64(off.Int64), Length: uint64(ln.Int64)}
		l.Kind, l.owner = LockKind(kind.Int64), OwnerID(lOwner.String)
		l.POSIX, l.Flock = style.Int64 == stylePOSIX, style.Int64 == styleFlock
		ls = append(ls, l)
	}
	if err := rows.Err(); err != nil {
		return "", nil, false, fmt.Errorf("locks: io handle %d: %w", id, err)
	}
	return owner, ls, ok, nil
}

func (tx *Tx) checkIO(id HandleID, who lockRequester, r Range, write bool) error {
	var (
		h   Handle
		ls  []lockRec
		err error
	)
	if file, hinted := tx.t.handleFile(id); hinted {
		// Fast path for this Table's handles: one statement.
		tx.lockKeys("CheckIO", file) // in an Update only
		owner, locks, ok, err := tx.ioState(id, file)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("io: locks: handle %d: %w", id, ErrHandleClosed)
		}
		h, ls = Handle{ID: id, File: file, Owner: owner}, locks
	} else {
		if h, err = tx.Handle(id); err != nil {
			return fmt.Errorf("io: %w", err)
		}
		tx.lockKeys("CheckIO", h.File)
		if r.Valid() && r.Length != 0 {
			if ls, err = tx.loadLocks(h.File); err != nil {
				return err
			}
		}
	}
	if !r.Valid() {
		return fmt.Errorf("locks: io handle %d %v: %w", id, r, ErrInvalidLockRange)
	}
	if r.Length == 0 {
		return nil
	}
	who.owner = h.Owner
	// Fast path: the locks alone decide; the handles are loaded only when
	// a conflict needs its holders' owners probed (decide).
	if len(ioConflicts(ls, who, r, write)) == 0 {
		return nil
	}
	_, err = tx.decide(h.File, true, func(st *fileState) error {
		if hs := ioConflicts(st.locks, who, r, write); len(hs) > 0 {
			op := "read"
			if write {
				op = "write"
			}
			return &ConflictError{Err: ErrLockConflict, File: h.File, Op: op, Handles: hs}
		}
		return nil
	})
	return err
}

// SetPOSIXLock applies an fcntl lock (F_SETLK) for lock owner key through a
// handle, with POSIX semantics among that owner's own locks on the file
// (a new lock replaces, an unlock splits; kind 0 unlocks) and the §3.2
// conflict rules against everyone else's. The owner's locks are scoped by
// (this Table's owner, key). Errors: ErrLockNotGranted (a *ConflictError),
// ErrInvalidParameter (zero length, unknown kind), ErrInvalidLockRange,
// ErrHandleClosed.
func (tx *Tx) SetPOSIXLock(id HandleID, key uint64, r Range, kind LockKind) error {
	if err := tx.mustWrite("SetPOSIXLock"); err != nil {
		return err
	}
	if kind != 0 && !validKind(kind) {
		return fmt.Errorf("locks: posix lock handle %d: kind %d: %w", id, int(kind), ErrInvalidParameter)
	}
	if err := validPOSIXRange(r); err != nil {
		return fmt.Errorf("locks: posix lock handle %d: %w", id, err)
	}
	h, err := tx.ownHandle(id, "posix lock")
	if err != nil {
		return err
	}
	tx.lockKeys("SetPOSIXLock", h.File)
	who := lockRequester{handle: id, owner: h.Owner, key: key, posix: true}
	st, err := tx.decide(h.File, true, func(st *fileState) error {
		if !st.hasHandle(id) {
			return fmt.Errorf("locks: posix lock: handle %d: %w", id, ErrHandleClosed)
		}
		if kind == 0 {
			return nil
		}
		if l, ok := lockBlocker(st.locks, who, r, kind); ok {
			return &ConflictError{Err: ErrLockNotGranted, File: h.File, Op: "posix lock", Handles: []HandleID{l.Handle}}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var own []ByteLock
	for _, l := range st.locks {
		if l.POSIX && l.owner == h.Owner && l.Key == key {
			own = append(own, l.ByteLock)
			if _, err := tx.exec(`DELETE FROM lk_locks WHERE id = ?`, l.row); err != nil {
				return fmt.Errorf("locks: posix lock handle %d: %w", id, err)
			}
		}
	}
	for _, l := range posixApply(own, id, key, r, kind) {
		if err := tx.insertLock(h.File, l); err != nil {
			return err
		}
	}
	return nil
}

// GetPOSIXLock returns a lock that would block the given one (F_GETLK), or
// ok=false if none would. Errors: ErrInvalidParameter, ErrInvalidLockRange,
// ErrHandleClosed.
func (tx *Tx) GetPOSIXLock(id HandleID, key uint64, r Range, kind LockKind) (ByteLock, bool, error) {
	if !validKind(kind) {
		return ByteLock{}, false, fmt.Errorf("locks: getlk handle %d: kind %d: %w", id, int(kind), ErrInvalidParameter)
	}
	if err := validPOSIXRange(r); err != nil {
		return ByteLock{}, false, fmt.Errorf("locks: getlk handle %d: %w", id, err)
	}
	h, err := tx.Handle(id)
	if err != nil {
		return ByteLock{}, false, fmt.Errorf("getlk: %w", err)
	}
	ls, err := tx.loadLocks(h.File)
	if err != nil {
		return ByteLock{}, false, err
	}
	l, ok := lockBlocker(ls, lockRequester{handle: id, owner: h.Owner, key: key, posix: true}, r, kind)
	return l.ByteLock, ok, nil
}

// ReleasePOSIXLocks drops every POSIX lock of key on the handle's file (FUSE
// FLUSH carries the lock owner; close(2) releases all of the process's locks
// on the file), whichever of this owner's handles took them.
func (tx *Tx) ReleasePOSIXLocks(id HandleID, key uint64) error {
	if err := tx.mustWrite("ReleasePOSIXLocks"); err != nil {
		return err
	}
	h, err := tx.ownHandle(id, "release posix locks")
	if err != nil {
		return err
	}
	tx.lockKeys("ReleasePOSIXLocks", h.File)
	if err := tx.holds(h.File, "byte-range locks"); err != nil {
		return err
	}
	_, err = tx.exec(`DELETE FROM lk_locks WHERE file = ? AND posix = 1 AND lkey = ?
		AND handle IN (SELECT id FROM lk_handles WHERE file = ? AND owner = ?)`, int64(h.File), int64(key), int64(h.File), string(h.Owner))
	if err != nil {
		return fmt.Errorf("locks: release posix locks of handle %d key %d: %w", id, key, err)
	}
	return nil
}
