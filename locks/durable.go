package locks

// Durable SMB opens (schema 5): an SMB open the client may reclaim after
// its connection dropped (MS-SMB2 3.3.5.9.6, 3.3.5.9.10, 3.3.7.1). The
// open stays what it is in the lock table — a handle of the serving
// process's owner, with its share mode, byte-range locks and caching — so
// it keeps blocking every protocol while its client is away, and dies
// with its owner as any handle does (a durable handle is not persistent).
// lk_durable records, beside the handle, that it is durable and whether
// and until when it is disconnected, so any process can see it (List
// Handles, `blobshare status`) and any decision can treat it as MS-SMB2
// says: a break that needs an acknowledgment cannot reach a disconnected
// open, so the open is closed instead (DecideCache, "A break that must
// reach a disconnected durable handle", smb-leases.md §4.4). See "Durable
// opens" in doc.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// durableDDL is schema 5's addition (fresh schema and migration 5).
const durableDDL = `CREATE TABLE IF NOT EXISTS lk_durable (
	file         INTEGER NOT NULL,
	handle       INTEGER NOT NULL,
	version      INTEGER NOT NULL,           -- 1: DHnQ, 2: DH2Q
	create_guid  BLOB,                       -- DH2Q's CreateGuid (NULL for v1)
	client_guid  BLOB,
	app_instance BLOB,                       -- SMB2_CREATE_APP_INSTANCE_ID, NULL when none
	timeout_ms   INTEGER NOT NULL,
	disconnected INTEGER NOT NULL DEFAULT 0, -- ns when its connection dropped; 0 while connected
	expires      INTEGER NOT NULL DEFAULT 0, -- ns: disconnected, it is closed then (the scavenger)
	PRIMARY KEY (file, handle)
) WITHOUT ROWID;
`

// Durable is what makes an open durable (MS-SMB2 3.3.1.10 Open.IsDurable,
// DurableOpenTimeout, CreateGuid, AppInstanceId, ClientGuid).
type Durable struct {
	Version     uint8 // 1 (DHnQ) or 2 (DH2Q)
	CreateGuid  [16]byte
	ClientGuid  [16]byte
	AppInstance *[16]byte
	Timeout     time.Duration
}

// DurableOpen is one durable open as the lock table holds it.
type DurableOpen struct {
	Durable
	File   FileID
	Handle HandleID
	// Disconnected is when its connection dropped (zero while connected);
	// Expires when it is closed unless reclaimed.
	Disconnected, Expires time.Time
}

// MakeDurable records that handle (an open of this owner on file) is
// durable. ErrHandleClosed when the handle is gone.
func (tx *Tx) MakeDurable(file FileID, handle HandleID, d Durable) error {
	if err := tx.mustWrite("MakeDurable"); err != nil {
		return err
	}
	tx.lockKeys("MakeDurable", file)
	if err := tx.ownDurable(file, handle, "make durable"); err != nil {
		return err
	}
	var create, app any
	if d.Version == 2 {
		create = d.CreateGuid[:]
	}
	if d.AppInstance != nil {
		app = d.AppInstance[:]
	}
	if _, err := tx.exec(`INSERT OR REPLACE INTO lk_durable(file, handle, version, create_guid, client_guid, app_instance, timeout_ms)
		VALUES(?, ?, ?, ?, ?, ?, ?)`, int64(file), int64(handle), int64(d.Version), create, d.ClientGuid[:], app, d.Timeout.Milliseconds()); err != nil {
		return fmt.Errorf("locks: durable handle %d: %w", handle, err)
	}
	return nil
}

// ownDurable checks that handle is an open of this owner on file.
func (tx *Tx) ownDurable(file FileID, handle HandleID, op string) error {
	if err := tx.holds(file, "durable handle"); err != nil {
		return err
	}
	var owner string
	err := tx.queryRow(`SELECT owner FROM lk_handles WHERE file = ? AND id = ?`, []any{int64(file), int64(handle)}, &owner)
	if errors.Is(err, sql.ErrNoRows) || err == nil && OwnerID(owner) != tx.sess.owner {
		return fmt.Errorf("locks: %s: handle %d: %w", op, handle, ErrHandleClosed)
	}
	if err != nil {
		return fmt.Errorf("locks: %s: handle %d: %w", op, handle, err)
	}
	return nil
}

// DisconnectDurable marks durable handle disconnected at now (its
// connection dropped, MS-SMB2 3.3.7.1): it stays open until now plus its
// timeout. ErrHandleClosed when it is gone or not durable.
func (tx *Tx) DisconnectDurable(file FileID, handle HandleID, now time.Time) (time.Time, error) {
	if err := tx.mustWrite("DisconnectDurable"); err != nil {
		return time.Time{}, err
	}
	tx.lockKeys("DisconnectDurable", file)
	if err := tx.ownDurable(file, handle, "disconnect durable"); err != nil {
		return time.Time{}, err
	}
	var ms int64
	if err := tx.queryRow(`SELECT timeout_ms FROM lk_durable WHERE file = ? AND handle = ?`, []any{int64(file), int64(handle)}, &ms); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return time.Time{}, fmt.Errorf("locks: disconnect durable: handle %d is not durable: %w", handle, ErrHandleClosed)
		}
		return time.Time{}, fmt.Errorf("locks: disconnect durable handle %d: %w", handle, err)
	}
	expires := now.Add(time.Duration(ms) * time.Millisecond)
	if _, err := tx.exec(`UPDATE lk_durable SET disconnected = ?, expires = ? WHERE file = ? AND handle = ?`,
		now.UnixNano(), expires.UnixNano(), int64(file), int64(handle)); err != nil {
		return time.Time{}, fmt.Errorf("locks: disconnect durable handle %d: %w", handle, err)
	}
	// A waiter for a break this open was sent decides again at once: the
	// open can no longer acknowledge (DecideCache closes it).
	tx.OnCommit(tx.t.cacheChanged)
	return expires, nil
}

// ReconnectDurable reclaims disconnected durable handle (MS-SMB2
// 3.3.5.9.7, 3.3.5.9.12): it must still be open, durable, this owner's
// and disconnected, else ErrHandleClosed (the reconnect names nothing).
// It is connected again, with its timeout, state and locks.
func (tx *Tx) ReconnectDurable(file FileID, handle HandleID) (DurableOpen, error) {
	if err := tx.mustWrite("ReconnectDurable"); err != nil {
		return DurableOpen{}, err
	}
	tx.lockKeys("ReconnectDurable", file)
	if err := tx.ownDurable(file, handle, "reconnect durable"); err != nil {
		return DurableOpen{}, err
	}
	d, ok, err := tx.durableRow(file, handle)
	if err != nil {
		return DurableOpen{}, err
	}
	if !ok || d.Disconnected.IsZero() {
		return DurableOpen{}, fmt.Errorf("locks: reconnect durable: handle %d is not a disconnected durable open: %w", handle, ErrHandleClosed)
	}
	if _, err := tx.exec(`UPDATE lk_durable SET disconnected = 0, expires = 0 WHERE file = ? AND handle = ?`, int64(file), int64(handle)); err != nil {
		return DurableOpen{}, fmt.Errorf("locks: reconnect durable handle %d: %w", handle, err)
	}
	d.Disconnected, d.Expires = time.Time{}, time.Time{}
	return d, nil
}

// ForgetDurable drops the durable record of a handle closed by its owner.
func (tx *Tx) ForgetDurable(file FileID, handle HandleID) error {
	if err := tx.mustWrite("ForgetDurable"); err != nil {
		return err
	}
	tx.lockKeys("ForgetDurable", file)
	if err := tx.holds(file, "durable handle"); err != nil {
		return err
	}
	if _, err := tx.exec(`DELETE FROM lk_durable WHERE file = ? AND handle = ?`, int64(file), int64(handle)); err != nil {
		return fmt.Errorf("locks: forget durable handle %d: %w", handle, err)
	}
	return nil
}

// DurableOf returns the durable record of handle on file (false when it
// is not a durable open, or closed).
func (tx *Tx) DurableOf(file FileID, handle HandleID) (DurableOpen, bool, error) {
	return tx.durableRow(file, handle)
}

const durableCols = `d.file, d.handle, d.version, d.create_guid, d.client_guid, d.app_instance, d.timeout_ms, d.disconnected, d.expires`

// scanDurable reads one row of durableCols.
func scanDurable(scan func(dest ...any) error) (DurableOpen, error) {
	var d DurableOpen
	var file, handle, version, ms, disc, exp int64
	var create, client, app []byte
	if err := scan(&file, &handle, &version, &create, &client, &app, &ms, &disc, &exp); err != nil {
		return DurableOpen{}, err
	}
	d.File, d.Handle, d.Version, d.Timeout = FileID(file), HandleID(handle), uint8(version), time.Duration(ms)*time.Millisecond
	copy(d.CreateGuid[:], create)
	copy(d.ClientGuid[:], client)
	if len(app) == 16 {
		var a [16]byte
		copy(a[:], app)
		d.AppInstance = &a
	}
	if disc != 0 {
		d.Disconnected, d.Expires = unixNano(disc), unixNano(exp)
	}
	return d, nil
}

func (tx *Tx) durableRow(file FileID, handle HandleID) (DurableOpen, bool, error) {
	d, err := scanDurable(tx.conn.QueryRowContext(tx.sctx, `SELECT `+durableCols+`
		FROM lk_durable d JOIN lk_handles h ON h.file = d.file AND h.id = d.handle WHERE d.file = ? AND d.handle = ?`,
		int64(file), int64(handle)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return DurableOpen{}, false, nil
	}
	if err != nil {
		return DurableOpen{}, false, fmt.Errorf("locks: durable handle %d: %w", handle, err)
	}
	return d, true, nil
}

// readDurables reads every durable open's record (ReadSnapshot).
func readDurables(ctx context.Context, c *Conn) (map[HandleID]DurableOpen, error) {
	rows, err := c.QueryContext(ctx, `SELECT `+durableCols+` FROM lk_durable d`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[HandleID]DurableOpen{}
	for rows.Next() {
		d, err := scanDurable(rows.Scan)
		if err != nil {
			return nil, err
		}
		out[d.Handle] = d
	}
	return out, rows.Err()
}

// disconnectedDurable returns the handles of file that are disconnected
// durable opens, and forgets the durable records of closed handles.
func (tx *Tx) disconnectedDurable(file FileID) (map[HandleID]bool, error) {
	if err := tx.holds(file, "durable handles"); err != nil {
		return nil, err
	}
	if _, err := tx.exec(`DELETE FROM lk_durable WHERE file = ? AND NOT EXISTS (SELECT 1 FROM lk_handles h WHERE h.file = lk_durable.file AND h.id = lk_durable.handle)`, int64(file)); err != nil {
		return nil, fmt.Errorf("locks: durable handles of file %d: %w", file, err)
	}
	rows, err := tx.query(`SELECT handle FROM lk_durable WHERE file = ? AND disconnected != 0`, int64(file))
	if err != nil {
		return nil, fmt.Errorf("locks: durable handles of file %d: %w", file, err)
	}
	defer rows.Close()
	var out map[HandleID]bool
	for rows.Next() {
		var h int64
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("locks: durable handles of file %d: %w", file, err)
		}
		if out == nil {
			out = map[HandleID]bool{}
		}
		out[HandleID(h)] = true
	}
	return out, rows.Err()
}

// closeUnreachable closes, for DecideCache, the disconnected durable
// opens a break that needs an acknowledgment would have to reach: their
// client cannot acknowledge (MS-SMB2 3.3.4.6, 3.3.4.7 send to
// Open.Connection, which is gone), and Windows drops such an open so that
// the requester proceeds; its reconnect then names nothing. It reports
// whether it closed any (the decision is then taken again).
func (tx *Tx) closeUnreachable(file FileID, holders []CacheHolder, d CacheDecision, gone map[HandleID]bool) (bool, error) {
	closed := false
	// The holders to close: those a new break needing an acknowledgment
	// goes to, and, when the requester waits, those with one
	// outstanding (their connection dropped after it was sent).
	var reach []int
	for _, br := range d.Breaks {
		if br.AckRequired {
			reach = append(reach, br.Holder)
		}
	}
	if d.Wait {
		for i, h := range holders {
			if h.Breaking {
				reach = append(reach, i)
			}
		}
	}
	for _, i := range reach {
		h := holders[i]
		all := len(h.Handles) > 0
		for _, hd := range h.Handles {
			all = all && gone[hd.ID]
		}
		if !all {
			continue
		}
		for _, hd := range h.Handles {
			if _, err := tx.closeRow(hd); err != nil && !errors.Is(err, errHandleGone) {
				return false, err
			}
			if _, err := tx.exec(`DELETE FROM lk_durable WHERE file = ? AND handle = ?`, int64(file), int64(hd.ID)); err != nil {
				return false, fmt.Errorf("locks: durable handle %d: %w", hd.ID, err)
			}
			delete(gone, hd.ID)
			tx.t.log.Info("closed a disconnected durable handle a break had to reach", "file", int64(file), "handle", int64(hd.ID))
			closed = true
		}
	}
	if closed {
		tx.OnCommit(tx.t.cacheChanged)
	}
	return closed, nil
}
