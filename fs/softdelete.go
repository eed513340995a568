package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// Soft delete of shares: Delete Share with DeleteShareRequest.Retain > 0
// keeps the share — its tree, snapshots, lease-free state — out of sight
// instead of removing it: the share's row is flagged unlinked (outside the
// unique name index, so a new share may take the name; listings and
// lookups skip it) and a "deleted" state row records its version and
// when it expires. RestoreShare brings it back; past its expiry it is
// removed for good, lazily, by the next ListDeletedShares, RestoreShare or
// RemoveShare (purgeExpired).

const stateDeleted = "deleted" // name "": deletedShare

type deletedShare struct {
	Version string    `json:"v"`
	Deleted time.Time `json:"d"`
	Expires time.Time `json:"x"`
}

// DeletedShareInfo describes a soft-deleted share (List Shares with
// include=deleted).
type DeletedShareInfo struct {
	Version string    // x-ms-deleted-share-version
	Deleted time.Time // DeletedTime
	Expires time.Time // when it goes for good
}

// softDelete hides share sh for retain (the caller checked lease and
// snapshots).
func (q *q) softDelete(sh entry, retain time.Duration) error {
	now := q.now.UTC()
	d := deletedShare{Version: fmt.Sprintf("%016X", uint64(now.UnixNano()/100)^uint64(sh.id)<<40), Deleted: now, Expires: now.Add(retain)}
	if err := q.storeState(sh.id, stateDeleted, "", d); err != nil {
		return err
	}
	if err := q.storeState(sh.id, stateLease, "", nil); err != nil {
		return err
	}
	_, err := q.exec(`UPDATE ns_entries SET unlinked = 1 WHERE id = ?`, int64(sh.id))
	return err
}

// deletedShares lists the soft-deleted shares with their state.
func (q *q) deletedShares() ([]entry, []deletedShare, error) {
	rows, err := q.query(`SELECT `+prefixed("e.", entryCols)+`, s.value FROM ns_share_state s JOIN ns_entries e ON e.id = s.share
		WHERE s.kind = ? ORDER BY e.key, e.id`, stateDeleted)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var es []entry
	var ds []deletedShare
	for rows.Next() {
		var v string
		e, err := scanEntry(rows, &v)
		if err != nil {
			return nil, nil, err
		}
		var d deletedShare
		if err := jsonUnmarshal(v, &d); err != nil {
			return nil, nil, fmt.Errorf("deleted share %d: %w", e.id, err)
		}
		es, ds = append(es, e), append(ds, d)
	}
	return es, ds, rows.Err()
}

// purgeExpired removes soft-deleted shares past their expiry, for good.
func (fsys *FileSystem) purgeExpired(ctx context.Context) error {
	var expired int
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		_, ds, err := q.deletedShares()
		expired = 0
		for _, d := range ds {
			if !q.now.Before(d.Expires) {
				expired++
			}
		}
		return err
	})
	if err != nil || expired == 0 {
		return err
	}
	err = fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		es, ds, err := q.deletedShares()
		if err != nil {
			return nil, err
		}
		for i, e := range es {
			if q.now.Before(ds[i].Expires) {
				continue
			}
			if _, err := q.lock("purge deleted share", e.id); err != nil {
				return nil, err
			}
			if err := q.dropSnapshots(e.id, true); err != nil {
				return nil, err
			}
			if err := q.dropState(e.id); err != nil {
				return nil, err
			}
			if err := q.removeTree(tx, e); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	fsys.kickGC()
	return err
}

// ListDeletedShares lists the soft-deleted shares still retained (Attr
// with Deleted set), in name order.
func (fsys *FileSystem) ListDeletedShares(ctx context.Context) ([]Attr, error) {
	if err := fsys.purgeExpired(ctx); err != nil {
		return nil, fmt.Errorf("list deleted shares: %w", err)
	}
	var out []Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		es, ds, err := q.deletedShares()
		out = out[:0]
		for i, e := range es {
			a := e.attr(e.name)
			a.Deleted = &DeletedShareInfo{Version: ds[i].Version, Deleted: ds[i].Deleted, Expires: ds[i].Expires}
			out = append(out, a)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list deleted shares: %w", err)
	}
	return out, nil
}

// RestoreShare brings back the soft-deleted share deletedName of version
// under name. Errors: ErrShareNotFound (no such deleted share, or expired),
// ErrShareExist (a live share has the name), ErrInvalidName.
func (fsys *FileSystem) RestoreShare(ctx context.Context, name, deletedName, version string) (Attr, error) {
	if err := ValidateShareName(name); err != nil {
		return Attr{}, pathErr("restore share", name, err)
	}
	if err := fsys.purgeExpired(ctx); err != nil {
		return Attr{}, pathErr("restore share", name, err)
	}
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		es, ds, err := q.deletedShares()
		if err != nil {
			return nil, err
		}
		for i, e := range es {
			if e.key != FoldName(deletedName) || ds[i].Version != version {
				continue
			}
			if _, err := q.lock("restore share", RootID, e.id); err != nil {
				return nil, err
			}
			if _, err := q.share(name); err == nil {
				return nil, ErrShareExist
			} else if !errors.Is(err, ErrShareNotFound) {
				return nil, err
			}
			e.name, e.key, e.unlinked = name, FoldName(name), false
			if _, err := q.exec(`UPDATE ns_entries SET unlinked = 0, name = ?, key = ? WHERE id = ?`, e.name, e.key, int64(e.id)); err != nil {
				return nil, err
			}
			if err := q.storeState(e.id, stateDeleted, "", nil); err != nil {
				return nil, err
			}
			a, err = q.shareAttr(e)
			return []Change{{Kind: ChangeCreate, File: e.id, Parent: RootID, Name: e.name, Version: e.version}}, err
		}
		return nil, ErrShareNotFound
	})
	return a, pathErr("restore share", name, err)
}

// prefixed qualifies every column of a column list with p ("e.").
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
