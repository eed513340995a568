package locks

// Directory leases (SMB 3.x, MS-SMB2 3.3.1.4, 3.3.5.9.11; MS-FSA 2.1.4.12
// with PARENT_OBJECT, 2.1.4.12.2): what a lease on a directory is granted,
// and which directory leases a change of the directory's entries breaks.
// The lease itself is stored like a file's (lk_smbleases, lk_opcache) and
// its breaks travel through the same outbox (lk_breaks); what differs is
// the rule, kept here beside the file rules of caching.go:
//
//   - Granting: a directory lease holds Read and Handle caching at most —
//     no client caches writes to a directory (MS-FSA 2.1.5.18: on a
//     directory only READ_CACHING and READ_CACHING|HANDLE_CACHING are
//     granted); an oplock on a directory is never granted.
//   - Handle caching on a directory breaks as a file's does (DecideCaching):
//     an open whose sharing conflicts with the holder's opens, the rename
//     or delete of the directory itself.
//   - Read caching on a directory breaks "before processing one of the
//     following operations from a client with a different ClientLeaseId
//     ... A new file or directory is added, deleted, or renamed within the
//     directory. Directory metadata such as timestamps, file attributes,
//     and file sizes are updated." — and "The object store is not required
//     to wait for acknowledgment" (MS-SMB2 3.3.1.4). DecideDirChange is
//     that rule: every lease with Read caching on the directory breaks to
//     none (a lease without Read caching is no lease state, so Handle goes
//     too, and the holder must acknowledge when it loses Handle), except
//     the lease whose key is the changing open's parent lease key (MS-FSA
//     2.1.4.12.2 with PARENT_OBJECT: OperationOpen.ParentOplockKey equals
//     OplockOpen.TargetOplockKey): a client never breaks the directory it
//     caches itself. The change does not wait.
//
// The change's requester (its client and parent lease key) travels in the
// context of the transaction that makes the change (WithParentLease): the
// namespace records the break where it records CHANGE_NOTIFY notices, in
// that transaction, whichever protocol made the change; REST, the mount
// and `session` have no parent lease key and break every directory lease.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DirLease is a lease on a directory as DecideDirChange sees it.
type DirLease struct {
	LeaseInfoSMB
	// Breaking: a break is outstanding (not yet acknowledged).
	Breaking bool
}

// DecideDirChange decides which of a directory's leases a change of its
// entries breaks (see the file comment): by is the changing open's parent
// lease (its client and ParentLeaseKey), nil when it has none. Breaks name
// leases by index (CacheBreak.Holder). A lease already breaking is left to
// its outstanding break: MS-SMB2 3.3.5.22.2 accepts only an
// acknowledgment within the state that break announced, so a second
// notification cannot narrow it (see "Directory leases" in doc.go).
func DecideDirChange(leases []DirLease, by *LeaseIdentity) []CacheBreak {
	var out []CacheBreak
	for i, l := range leases {
		if by != nil && l.LeaseIdentity == *by {
			continue
		}
		if l.State&CacheRead == 0 || l.Breaking {
			continue
		}
		br := CacheBreak{Holder: i, From: l.State, To: CacheNone, ToOplock: OplockNone,
			AckRequired: l.State&(CacheHandle|CacheWrite) != 0}
		if l.Version == 2 {
			br.NewEpoch = l.Epoch + 1
		}
		out = append(out, br)
	}
	return out
}

// grantDirCaching is what an open of a directory gets (MS-FSA 2.1.5.18):
// no oplock; a lease the Read and Handle caching it asks for (Handle
// without Read is no lease state: nothing), never Write; an existing
// lease of the requester only grows to a superset of what it holds, as
// on a file (MS-SMB2 3.3.5.9.8).
func grantDirCaching(holders []CacheHolder, req CacheRequest, breaks []CacheBreak) (CacheState, OplockLevel) {
	if req.Lease == nil {
		return CacheNone, OplockNone
	}
	ask := req.RequestLease & CacheRH
	if !ask.Valid() {
		ask = CacheNone
	}
	after := make([]CacheState, len(holders))
	for i, h := range holders {
		after[i] = h.State()
	}
	for _, b := range breaks {
		after[b.Holder] = b.To
	}
	var own CacheState
	for i, h := range holders {
		if h.Lease != nil && h.Lease.LeaseIdentity == *req.Lease {
			own |= after[i]
		}
	}
	if own != CacheNone && ask&own != own {
		return own, OplockNone
	}
	return ask, OplockNone
}

type parentLeaseCtx struct{}

// WithParentLease returns ctx carrying the parent lease of the open a
// change is made through (an SMB open whose v2 lease named a parent lease
// key, SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET): the directory lease with
// that key (of the same client) is not broken by the change.
func WithParentLease(ctx context.Context, id LeaseIdentity) context.Context {
	return context.WithValue(ctx, parentLeaseCtx{}, id)
}

// ParentLease is the parent lease ctx carries (WithParentLease).
func ParentLease(ctx context.Context) (LeaseIdentity, bool) {
	id, ok := ctx.Value(parentLeaseCtx{}).(LeaseIdentity)
	return id, ok
}

// BreakDirCaching records, in the transaction that changes directory
// dir's entries, the breaks of dir's leases the change makes
// (DecideDirChange, the requester's parent lease from the transaction's
// context): each lease's new state (at once for a lease losing only Read,
// else breaking with a deadline) and an outbox row for its holder's
// process. The change does not wait. Holders in this process are woken at
// commit.
func (tx *Tx) BreakDirCaching(dir FileID) error {
	if err := tx.mustWrite("BreakDirCaching"); err != nil {
		return err
	}
	tx.lockKeys("BreakDirCaching", dir)
	if err := tx.holds(dir, "directory caching"); err != nil {
		return err
	}
	n, err := BreakDirCachingConn(tx.sctx, tx.conn, dir, tx.t.opts.Now())
	if n > 0 {
		tx.OnCommit(tx.t.cacheChanged)
	}
	return err
}

// BreakDirCachingConn is BreakDirCaching for a caller that has only the
// transaction's connection (the namespace's Remove hook, run by this
// package inside a close): it returns how many leases it broke. The
// holders' processes find the breaks at their next look at the outbox
// (the SMB server's poll) rather than at this commit.
func BreakDirCachingConn(ctx context.Context, c *Conn, dir FileID, now time.Time) (int, error) {
	// Statements inside a transaction never wait for a lock: without
	// cancellation the driver spares a watcher goroutine per statement.
	ctx = context.WithoutCancel(ctx)
	rows, err := c.QueryContext(ctx, `SELECT client, lkey, owner, state, breaking, epoch, version FROM lk_smbleases l
		WHERE file = ? AND state & 1 != 0
		AND EXISTS (SELECT 1 FROM lk_opcache o JOIN lk_handles h ON h.file = o.file AND h.id = o.handle
			WHERE o.file = l.file AND o.client = l.client AND o.lkey = l.lkey)`, int64(dir))
	if errors.Is(err, ErrNoTable) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("locks: leases of directory %d: %w", dir, err)
	}
	var ls []DirLease
	var owners []OwnerID
	for rows.Next() {
		var client, key []byte
		var owner string
		var state, epoch, version int64
		var l DirLease
		if err := rows.Scan(&client, &key, &owner, &state, &l.Breaking, &epoch, &version); err != nil {
			rows.Close()
			return 0, fmt.Errorf("locks: leases of directory %d: %w", dir, err)
		}
		id := scanIdentity(client, key)
		if id == nil {
			continue
		}
		l.LeaseInfoSMB = LeaseInfoSMB{LeaseIdentity: *id, State: CacheState(state), Epoch: uint16(epoch), Version: uint8(version)}
		ls = append(ls, l)
		owners = append(owners, OwnerID(owner))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("locks: leases of directory %d: %w", dir, err)
	}
	if len(ls) == 0 {
		return 0, nil
	}
	var by *LeaseIdentity
	if id, ok := ParentLease(ctx); ok {
		by = &id
	}
	breaks := DecideDirChange(ls, by)
	deadline := now.Add(DefaultBreakTimeout).UnixNano()
	for _, br := range breaks {
		l := ls[br.Holder]
		cl, k := identityArgs(l.LeaseIdentity)
		epoch := int64(l.Epoch)
		if l.Version == 2 {
			epoch = int64(br.NewEpoch)
		}
		if br.AckRequired {
			_, err = c.ExecContext(ctx, `UPDATE lk_smbleases SET breaking = 1, break_to = ?, deadline = ?, epoch = ? WHERE client = ? AND lkey = ?`,
				int64(br.To), deadline, epoch, cl, k)
		} else {
			_, err = c.ExecContext(ctx, `UPDATE lk_smbleases SET state = ?, epoch = ? WHERE client = ? AND lkey = ?`, int64(br.To), epoch, cl, k)
		}
		if err != nil {
			return 0, fmt.Errorf("locks: break lease on directory %d: %w", dir, err)
		}
		if _, err := c.ExecContext(ctx, `INSERT INTO lk_breaks(owner, file, handle, client, lkey, from_state, to_state, epoch, ack) VALUES(?, ?, 0, ?, ?, ?, ?, ?, ?)`,
			string(owners[br.Holder]), int64(dir), cl, k, int64(br.From), int64(br.To), int64(br.NewEpoch), br.AckRequired); err != nil {
			return 0, fmt.Errorf("locks: record break on directory %d: %w", dir, err)
		}
	}
	return len(breaks), nil
}
