package fs

import (
	"context"
	"errors"

	"github.com/blobshare/blobshare/locks"
)

// DefaultQuotaGiB is a new share's quota when none is given (5 TiB).
const DefaultQuotaGiB = 5120

func (fsys *FileSystem) createShare(ctx context.Context, req ShareRequest) (Attr, error) {
	if err := ValidateShareName(req.Name); err != nil {
		return Attr{}, pathErr("create share", req.Name, err)
	}
	if req.QuotaGiB < 0 {
		return Attr{}, pathErr("create share", req.Name, ErrInvalidArg)
	}
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e := q.newDirEntry(RootID, req.Name, KindShare)
		if _, err := q.lock("create share", RootID); err != nil {
			return nil, err
		}
		e.quota = req.QuotaGiB
		if e.quota == 0 {
			e.quota = DefaultQuotaGiB
		}
		e.metadata = req.Metadata
		e.tier = req.AccessTier
		if len(req.Props) > 0 {
			e.shareProps = req.Props
		}
		e, err := q.insert(e)
		if errors.Is(err, ErrExist) {
			return nil, ErrShareExist
		}
		if err != nil {
			return nil, err
		}
		a = e.attr(e.name)
		return []Change{{Kind: ChangeCreate, File: e.id, Parent: RootID, Name: e.name, Version: e.version}}, nil
	})
	return a, pathErr("create share", req.Name, err)
}

func (q *q) share(name string) (entry, error) {
	if err := ValidateShareName(name); err != nil {
		return entry{}, err
	}
	e, err := q.child(RootID, name, false)
	if errors.Is(err, ErrNotFound) {
		return entry{}, ErrShareNotFound
	}
	return e, err
}

func (fsys *FileSystem) getShare(ctx context.Context, name, leaseID string) (Attr, error) {
	var a Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		e, err := q.share(name)
		if err != nil {
			return err
		}
		if err := q.checkShareLease(e, leaseID, false); err != nil {
			return err
		}
		a, err = q.shareAttr(e)
		return err
	})
	return a, pathErr("get share", name, err)
}

func (fsys *FileSystem) changeShare(ctx context.Context, op, name string, fn func(q *q, e *entry) error) (Attr, error) {
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.shareLocked(op, name)
		if err != nil {
			return nil, err
		}
		if err := fn(q, &e); err != nil {
			return nil, err
		}
		e.modified = ticks(q.now)
		if err := q.save(&e); err != nil {
			return nil, err
		}
		if a, err = q.shareAttr(e); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeAttr, File: e.id, Parent: RootID, Name: e.name, Version: e.version}}, nil
	})
	return a, pathErr(op, name, err)
}

func (fsys *FileSystem) setShareQuota(ctx context.Context, name string, quotaGiB int) (Attr, error) {
	return fsys.setShareProperties(ctx, name, ShareProperties{QuotaGiB: &quotaGiB})
}

func (fsys *FileSystem) setShareProperties(ctx context.Context, name string, p ShareProperties) (Attr, error) {
	return fsys.changeShare(ctx, "set share properties", name, func(q *q, e *entry) error {
		if err := q.checkShareLease(*e, p.LeaseID, false); err != nil {
			return err
		}
		if p.QuotaGiB != nil {
			if *p.QuotaGiB <= 0 {
				return ErrInvalidArg
			}
			e.quota = *p.QuotaGiB
		}
		if p.AccessTier != nil {
			e.tier = *p.AccessTier
		}
		if len(p.Props) > 0 {
			merged := make(map[string]string, len(e.shareProps)+len(p.Props))
			for k, v := range e.shareProps {
				merged[k] = v
			}
			for k, v := range p.Props {
				merged[k] = v
			}
			e.shareProps = merged
		}
		return nil
	})
}

func (fsys *FileSystem) setShareMetadata(ctx context.Context, name, leaseID string, md map[string]string) (Attr, error) {
	return fsys.changeShare(ctx, "set share metadata", name, func(q *q, e *entry) error {
		if err := q.checkShareLease(*e, leaseID, false); err != nil {
			return err
		}
		e.metadata = md
		return nil
	})
}

func (fsys *FileSystem) deleteShare(ctx context.Context, req DeleteShareRequest) error {
	name := req.Name
	if err := fsys.purgeExpired(ctx); err != nil {
		return pathErr("delete share", name, err)
	}
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.shareLocked("delete share", name)
		if err != nil {
			return nil, err
		}
		if err := q.checkShareLease(e, req.LeaseID, true); err != nil {
			return nil, err
		}
		if req.Retain > 0 {
			if !req.IncludeSnapshots {
				if err := q.dropSnapshots(e.id, false); err != nil { // only checks: there are none
					return nil, err
				}
			}
			if err := q.softDelete(e, req.Retain); err != nil {
				return nil, err
			}
			return []Change{{Kind: ChangeRemove, File: e.id, Parent: RootID, Name: e.name}}, nil
		}
		if err := q.dropSnapshotsLeased(e.id, req.IncludeSnapshots, req.IncludeLeased); err != nil {
			return nil, err
		}
		if err := q.dropState(e.id); err != nil {
			return nil, err
		}
		if err := q.removeTree(tx, e); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeRemove, File: e.id, Parent: RootID, Name: e.name}}, nil
	})
	fsys.kickGC()
	return pathErr("delete share", name, err)
}

// maxList is the largest page of a listing.
const maxList = 5000

func pageSize(n int) int {
	if n <= 0 || n > maxList {
		return maxList
	}
	return n
}

func (fsys *FileSystem) listShares(ctx context.Context, req ListRequest) (ListSharesResult, error) {
	var res ListSharesResult
	max := pageSize(req.MaxResults)
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		rows, err := q.query(`SELECT `+entryCols+` FROM ns_entries WHERE parent = ? AND unlinked = 0 AND name >= ? AND substr(name, 1, ?) = ? ORDER BY name LIMIT ?`,
			int64(RootID), req.Marker, len(req.Prefix), req.Prefix, max+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		res = ListSharesResult{}
		for rows.Next() {
			e, err := scanEntry(rows)
			if err != nil {
				return err
			}
			if len(res.Shares) == max {
				res.NextMarker = e.name
				break
			}
			res.Shares = append(res.Shares, e.attr(e.name))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		// Each share's lease: one statement per share listed, in the
		// same transaction.
		for i := range res.Shares {
			if res.Shares[i].ShareLease, err = q.shareLeaseInfo(res.Shares[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	return res, pathErr("list shares", req.Prefix, err)
}
