package fs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/lease"
	"github.com/blobshare/blobshare/locks"
)

// A share's REST state that is no property of its entry — its lease, its
// stored access policies, its permissions — lives in ns_share_state, one
// JSON value per (share, kind, name), and goes with the share. Keeping it
// off the entry keeps the share's ETag still across lease calls (Azure
// changes no ETag for a lease) and keeps permissions (up to 8 KiB each)
// out of every share lookup.
const (
	stateLease = "lease" // name "" (the share) or a snapshot's name: storedLease
	stateACL   = "acl"   // name "": []storedIdentifier
	statePerm  = "perm"  // name: the permission key; value: the SDDL text
)

// ErrPermissionKeyNotFound: a permission key the share does not have
// (400 FileInvalidPermissionKey).
var ErrPermissionKeyNotFound = errors.New("permission key not found")

// loadState decodes the state (share, kind, name) into v; found is false
// when there is none (v untouched).
func (q *q) loadState(share FileID, kind, name string, v any) (found bool, err error) {
	var s string
	err = q.queryRow(`SELECT value FROM ns_share_state WHERE share = ? AND kind = ? AND name = ?`,
		int64(share), kind, name).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return false, fmt.Errorf("share %d state %s %q: %w", share, kind, name, err)
	}
	return true, nil
}

// storeState writes (share, kind, name); a nil v removes it.
func (q *q) storeState(share FileID, kind, name string, v any) error {
	if err := q.holds(share, "share state"); err != nil {
		return err
	}
	if v == nil {
		_, err := q.exec(`DELETE FROM ns_share_state WHERE share = ? AND kind = ? AND name = ?`, int64(share), kind, name)
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = q.exec(`INSERT INTO ns_share_state(share, kind, name, value) VALUES (?, ?, ?, ?)
		ON CONFLICT(share, kind, name) DO UPDATE SET value = excluded.value`, int64(share), kind, name, string(b))
	return err
}

// dropState removes every state of a share.
func (q *q) dropState(share FileID) error {
	if err := q.holds(share, "share state"); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM ns_share_state WHERE share = ?`, int64(share))
	return err
}

// ShareLeaseInfo is a share's lease as Get Share Properties reports it.
type ShareLeaseInfo struct {
	State    lease.State
	Infinite bool // x-ms-lease-duration: infinite (else fixed); while leased
}

// storedLease is a share's lease as ns_share_state holds it (JSON): the
// fields of the locks.TimedLease that rows were written with before the
// timed-lease machine moved to package lease, so existing rows read as
// they were written and new rows are written the same way.
type storedLease struct {
	ID       string    // "" when available (no row is kept then)
	Seconds  int       // duration as acquired: 15..60, or lease.Infinite
	Expires  time.Time // end of a finite lease
	Breaking bool      // a break was asked: the lease ends at BreakEnd
	BreakEnd time.Time // end of the break period
}

func (s storedLease) lease() lease.Lease {
	switch {
	case s.ID == "":
		return lease.Lease{}
	case s.Breaking:
		return lease.Lease{State: lease.Breaking, ID: s.ID, Duration: s.Seconds, BreakAt: s.BreakEnd}
	}
	return lease.Lease{State: lease.Leased, ID: s.ID, Duration: s.Seconds, Expires: s.Expires}
}

func storeForm(l lease.Lease) storedLease {
	s := storedLease{ID: l.ID, Seconds: l.Duration, Expires: l.Expires}
	if l.State == lease.Breaking || l.State == lease.Broken {
		s.Breaking, s.BreakEnd, s.Expires = true, l.BreakAt, time.Time{}
	}
	return s
}

// leaseOf is the lease of a share (snapshot "") or of one of its
// snapshots.
func (q *q) leaseOf(share FileID, snapshot string) (lease.Lease, error) {
	var s storedLease
	_, err := q.loadState(share, stateLease, snapshot, &s)
	return s.lease(), err
}

func (q *q) shareLeaseInfo(share FileID) (ShareLeaseInfo, error) { return q.leaseInfoOf(share, "") }

func (q *q) leaseInfoOf(share FileID, snapshot string) (ShareLeaseInfo, error) {
	l, err := q.leaseOf(share, snapshot)
	return ShareLeaseInfo{State: l.StateAt(q.now), Infinite: l.Duration == lease.Infinite}, err
}

// checkShareLease applies the share's lease to an operation on the share
// (lease.CheckWrite when the operation needs the id while the lease is
// active, as Delete Share does; lease.CheckRead otherwise).
func (q *q) checkShareLease(sh entry, leaseID string, needID bool) error {
	return q.checkLeaseOf(sh.id, "", leaseID, needID)
}

func (q *q) checkLeaseOf(share FileID, snapshot, leaseID string, needID bool) error {
	l, err := q.leaseOf(share, snapshot)
	if err != nil {
		return err
	}
	check := lease.CheckRead
	if needID {
		check = lease.CheckWrite
	}
	if err := check(l, leaseID, q.now); err != nil {
		return fmt.Errorf("share %d lease: %w", share, err)
	}
	return nil
}

// LeaseShare runs one Lease Share action at the FileSystem's clock, on
// the share or (snapshot not "") on one of its snapshots, and returns its
// outcome and the share (or snapshot). Errors: ErrShareNotFound,
// ErrSnapshotNotFound, *lease.Error, lease's malformed-request errors.
func (fsys *FileSystem) LeaseShare(ctx context.Context, name, snapshot string, req lease.Request) (lease.Result, Attr, error) {
	var res lease.Result
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		sh, err := q.shareLocked("lease share", name)
		if err != nil {
			return nil, err
		}
		if snapshot != "" {
			v, root, err := q.snapshot(name, snapshot)
			if err != nil {
				return nil, err
			}
			snapshot = v.name
			sh = root
		}
		l, err := q.leaseOf(sh.id, snapshot)
		if err != nil {
			return nil, err
		}
		next, r, err := lease.Decide(l, req, q.now, lease.Options{NewID: fsys.table.NewLeaseID})
		if err != nil {
			return nil, err
		}
		res = r
		var v any
		if !next.IsZero() {
			v = storeForm(next)
		}
		if err := q.storeState(sh.id, stateLease, snapshot, v); err != nil {
			return nil, err
		}
		a = sh.attr(sh.name)
		a.Snapshot = snapshot
		a.ShareLease, err = q.leaseInfoOf(sh.id, snapshot)
		return nil, err
	})
	return res, a, pathErr("lease share", name, err)
}

// shareAttr is a share's Attr with its lease.
func (q *q) shareAttr(sh entry) (Attr, error) {
	a := sh.attr(sh.name)
	var err error
	a.ShareLease, err = q.shareLeaseInfo(sh.id)
	return a, err
}

// storedIdentifier is one stored access policy of a share as
// ns_share_state holds it (JSON, times parsed): the form rows always had.
// Zero times and an empty permission are fields the policy leaves to the
// SAS that names it.
type storedIdentifier struct {
	ID         string    `json:"id"`
	Start      time.Time `json:"st,omitzero"`
	Expiry     time.Time `json:"se,omitzero"`
	Permission string    `json:"sp,omitempty"`
}

// MaxSignedIdentifiers is how many stored access policies a share holds.
const MaxSignedIdentifiers = acl.MaxIdentifiers

// ShareACL returns a share's stored access policies, times as Get Share
// ACL answers them (acl.FormatTime). leaseID, when not empty, must name
// the share's active lease. Errors: ErrShareNotFound, *lease.Error.
func (fsys *FileSystem) ShareACL(ctx context.Context, name, leaseID string) ([]acl.SignedIdentifier, Attr, error) {
	var ids []acl.SignedIdentifier
	var a Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		sh, err := q.share(name)
		if err != nil {
			return err
		}
		if err := q.checkShareLease(sh, leaseID, false); err != nil {
			return err
		}
		var stored []storedIdentifier
		if _, err := q.loadState(sh.id, stateACL, "", &stored); err != nil {
			return err
		}
		ids = make([]acl.SignedIdentifier, 0, len(stored))
		for _, s := range stored {
			ids = append(ids, acl.SignedIdentifier{ID: s.ID, Start: acl.FormatTime(s.Start),
				Expiry: acl.FormatTime(s.Expiry), Permission: s.Permission})
		}
		a = sh.attr(sh.name)
		return nil
	})
	return ids, a, pathErr("get share acl", name, err)
}

// SetShareACL replaces a share's stored access policies, checked by
// acl.ShareRules (at most MaxSignedIdentifiers, ids unique, 1 to 64
// characters, times ISO 8601, permissions from "rcwdl", stored in that
// order). Errors: ErrShareNotFound, *acl.Error, *lease.Error.
func (fsys *FileSystem) SetShareACL(ctx context.Context, name, leaseID string, ids []acl.SignedIdentifier) (Attr, error) {
	ids, err := acl.Validate(ids, acl.ShareRules)
	if err != nil {
		return Attr{}, pathErr("set share acl", name, err)
	}
	stored := make([]storedIdentifier, 0, len(ids))
	for _, id := range ids {
		p, err := id.Policy()
		if err != nil { // Validate parsed them
			return Attr{}, pathErr("set share acl", name, err)
		}
		stored = append(stored, storedIdentifier{ID: id.ID, Start: p.Start, Expiry: p.Expiry, Permission: p.Permission})
	}
	return fsys.changeShare(ctx, "set share acl", name, func(q *q, e *entry) error {
		if err := q.checkShareLease(*e, leaseID, false); err != nil {
			return err
		}
		var v any
		if len(stored) > 0 {
			v = stored
		}
		return q.storeState(e.id, stateACL, "", v)
	})
}

// SharePolicy returns the stored access policy id of a share, for a
// service SAS that names it (si). Errors: ErrShareNotFound, ErrNotFound.
func (fsys *FileSystem) SharePolicy(ctx context.Context, name, id string) (acl.Policy, error) {
	var out acl.Policy
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		sh, err := q.share(name)
		if err != nil {
			return err
		}
		var ids []storedIdentifier
		if _, err := q.loadState(sh.id, stateACL, "", &ids); err != nil {
			return err
		}
		for _, p := range ids {
			if p.ID == id {
				out = acl.Policy{Start: p.Start, Expiry: p.Expiry, Permission: p.Permission}
				return nil
			}
		}
		return ErrNotFound
	})
	return out, pathErr("share policy", name+"/"+id, err)
}

// DefaultPermissionKey is the key of the permission every entry has until
// one is set (DefaultPermission).
const DefaultPermissionKey = defaultPermissionKey

// DefaultPermission is the security descriptor of DefaultPermissionKey:
// owner and group BUILTIN\Administrators, full control for everyone.
const DefaultPermission = "O:BAG:BAD:(A;;FA;;;WD)"

// CreatePermission stores a permission (SDDL text, as the caller
// canonicalised it) for a share and returns its key. The key is derived
// from the text, so the same permission gets the same key. Errors:
// ErrShareNotFound.
func (fsys *FileSystem) CreatePermission(ctx context.Context, share, sddl string) (string, error) {
	if sddl == DefaultPermission {
		return DefaultPermissionKey, nil
	}
	return fsys.createPermission(ctx, share, sddl, "")
}

// CreateUpdatePermission stores a permission given inline to Set File or
// Set Directory Properties. Its key is derived from the text as well, but
// is never the key CreatePermission gives the same text: Azure answers a
// new key when Set Properties sets the descriptor a file or directory was
// created with (Windows update semantics rather than create's; the azfile
// SDK's live test TestDirSetPropertiesFilePermissionFormat).
func (fsys *FileSystem) CreateUpdatePermission(ctx context.Context, share, sddl string) (string, error) {
	return fsys.createPermission(ctx, share, sddl, "update\n")
}

// createPermission stores sddl under the key derived from salt + sddl.
func (fsys *FileSystem) createPermission(ctx context.Context, share, sddl, salt string) (string, error) {
	sum := sha256.Sum256([]byte(salt + sddl))
	key := fmt.Sprintf("%d*%d", binary.BigEndian.Uint64(sum[:8])>>1, binary.BigEndian.Uint64(sum[8:16])>>1)
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		sh, err := q.shareLocked("create permission", share)
		if err != nil {
			return nil, err
		}
		return nil, q.storeState(sh.id, statePerm, key, sddl)
	})
	return key, pathErr("create permission", share, err)
}

// Permission returns the SDDL text of a share's permission key. Errors:
// ErrShareNotFound, ErrPermissionKeyNotFound.
func (fsys *FileSystem) Permission(ctx context.Context, share, key string) (string, error) {
	var sddl string
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		sh, err := q.share(share)
		if err != nil {
			return err
		}
		if strings.EqualFold(key, DefaultPermissionKey) {
			sddl = DefaultPermission
			return nil
		}
		found, err := q.loadState(sh.id, statePerm, key, &sddl)
		if err == nil && !found {
			err = ErrPermissionKeyNotFound
		}
		return err
	})
	return sddl, pathErr("get permission", share+" "+key, err)
}

// PermissionOf returns the permission (SDDL text) of an entry by id: its
// key's, or DefaultPermission; what the SMB endpoint's security queries
// answer (in binary: package secdesc). Errors: ErrNotFound.
func (fsys *FileSystem) PermissionOf(ctx context.Context, id FileID) (string, error) {
	var sddl string
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		e, err := q.get(id)
		if err != nil {
			return err
		}
		sddl = DefaultPermission
		if e.permKey == "" || e.permKey == DefaultPermissionKey {
			return nil
		}
		share, err := q.shareOf(e)
		if err != nil {
			return err
		}
		found, err := q.loadState(share, statePerm, e.permKey, &sddl)
		if err == nil && !found {
			sddl = DefaultPermission // a key whose permission went with its share
		}
		return err
	})
	if err != nil {
		return "", fileErr("permission", id, err)
	}
	return sddl, nil
}
