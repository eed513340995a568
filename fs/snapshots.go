package fs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// Share snapshots are read-only point-in-time views of a share. Taking one
// copies the share's namespace rows (ns_snap_entries, same columns as
// ns_entries) in one transaction, and gives each blob-backed file's
// content a second key that keeps its data (blobstore.Cloner: hard links
// in the local store, a copy made by the service within the account on
// Azure), so no file data passes through blobshare; inline files
// (≤ InlineMax) keep their bytes in the copied row. A file's blob is replaced by its
// later commits and removed when it is deleted, but the snapshot's key
// names the same blocks and keeps them (blob garbage collection counts
// every key's manifest; fs's collector removes only keys queued in ns_gc,
// and a snapshot's keys are queued only when the snapshot is deleted).
//
// Point in time, without copying: the rows are those of the snapshot's
// first transaction, which also records, for every blob-backed file, a
// pending clone (ns_snap_pending: the file's key and the snapshot's).
// Clones are made after that transaction (no blob I/O inside one), by the
// snapshot, or — copy on write — by a commit that is about to replace the
// file's blob: a commit reads the pending clones of its file in the
// transaction that records its intent as committing, and clones the
// version it builds on before committing the new one (commitLocked). Who
// comes second finds the clone there. A commit already committing when
// the snapshot's first transaction runs may have replaced the blob
// already; the snapshot then waits (short backoff) until no such commit
// is in flight and starts over. The blob collector leaves a key with
// pending clones alone, so a file deleted meanwhile keeps its content
// until the snapshot has it. The second transaction drops the pending
// clones and makes the snapshot visible (ready).
//
// A process that dies between the two leaves an invisible unready
// snapshot (and its pending clones, which commits of those files keep
// trying cheaply); both go with the share.

// ErrSnapshotNotFound: the share has no such snapshot (404
// ShareSnapshotNotFound).
var ErrSnapshotNotFound = errors.New("share snapshot not found")

// ErrShareHasSnapshots: Delete Share of a share with snapshots without
// deleting them too (409 ShareHasSnapshots).
var ErrShareHasSnapshots = errors.New("share has snapshots")

// snapshotAttempts bounds the waits for in-flight commits.
const snapshotAttempts = 200

// errSnapshotBusy: a commit was replacing a file's blob when the snapshot
// was taken.
var errSnapshotBusy = errors.New("a commit is in flight")

// snapshotLayout is the x-ms-snapshot form (UTC, 7 fractional digits).
const snapshotLayout = "2006-01-02T15:04:05.0000000Z"

// ParseSnapshot checks a sharesnapshot value; it returns the canonical
// name. Errors: ErrInvalidArg.
func ParseSnapshot(v string) (string, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return "", fmt.Errorf("%w: share snapshot %q", ErrInvalidArg, v)
	}
	return t.UTC().Format(snapshotLayout), nil
}

// snapKey is the blob key of file id's content in a snapshot.
func snapKey(share FileID, snapshot string, id FileID) string {
	t, _ := time.Parse(snapshotLayout, snapshot)
	return fmt.Sprintf("s%016x/%016x/f%016x", uint64(share), t.UnixNano()/100, uint64(id))
}

type snapFile struct {
	id      FileID
	version uint64
}

// CreateShareSnapshot takes a snapshot of share and returns its name
// (x-ms-snapshot). md, when not nil, is the snapshot's metadata instead
// of the share's. Errors: ErrShareNotFound, ErrNotSupported (a blob
// store that cannot clone blobs, when the share has blob-backed files),
// locks.ErrSharingViolation (lost races).
func (fsys *FileSystem) CreateShareSnapshot(ctx context.Context, share string, md map[string]string) (string, Attr, error) {
	backoff := time.Millisecond
	for range snapshotAttempts {
		name, a, err := fsys.snapshotOnce(ctx, share, md)
		if errors.Is(err, errSnapshotBusy) {
			if err := sleepCtx(ctx, backoff); err != nil {
				return "", Attr{}, pathErr("snapshot share", share, err)
			}
			backoff = min(2*backoff, 20*time.Millisecond)
			continue
		}
		return name, a, pathErr("snapshot share", share, err)
	}
	return "", Attr{}, pathErr("snapshot share", share, fmt.Errorf("%w: files kept changing", locks.ErrSharingViolation))
}

func (fsys *FileSystem) snapshotOnce(ctx context.Context, share string, md map[string]string) (string, Attr, error) {
	var (
		name  string
		shID  FileID
		files []snapFile
		a     Attr
	)
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		sh, err := q.shareLocked("snapshot share", share)
		if err != nil {
			return nil, err
		}
		shID = sh.id
		t := q.now.UTC().Truncate(100 * time.Nanosecond)
		for {
			name = t.Format(snapshotLayout)
			var n int
			if err := q.queryRow(`SELECT count(*) FROM ns_snapshots WHERE share = ? AND name = ?`, int64(sh.id), name).Scan(&n); err != nil {
				return nil, err
			}
			if n == 0 {
				break
			}
			t = t.Add(100 * time.Nanosecond)
		}
		if _, err := q.exec(`INSERT INTO ns_snapshots(share, name, ready) VALUES (?, ?, 0)`, int64(sh.id), name); err != nil {
			return nil, err
		}
		if _, err := q.exec(`INSERT INTO ns_snap_entries(share, snapshot, `+snapCols+`)
			WITH RECURSIVE tree(id) AS (
				SELECT ?1 UNION ALL
				SELECT e.id FROM ns_entries e JOIN tree ON e.parent = tree.id WHERE e.unlinked = 0
			)
			SELECT ?1, ?2, `+snapCols+` FROM ns_entries WHERE id IN (SELECT id FROM tree)`, int64(sh.id), name); err != nil {
			return nil, err
		}
		root := sh
		if md != nil {
			root.metadata = md
			props, err := root.props()
			if err != nil {
				return nil, err
			}
			if _, err := q.exec(`UPDATE ns_snap_entries SET props = ? WHERE share = ? AND snapshot = ? AND id = ?`,
				props, int64(sh.id), name, int64(sh.id)); err != nil {
				return nil, err
			}
		}
		a = root.attr(root.name)
		a.Snapshot = name
		var busy int
		if err := q.queryRow(`SELECT count(*) FROM ns_intents WHERE state = ? AND file IN
			(SELECT id FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND kind = ? AND blob = 1)`,
			intentCommitting, int64(sh.id), name, KindFile).Scan(&busy); err != nil {
			return nil, err
		}
		if busy > 0 {
			return nil, errSnapshotBusy // rolls the rows back
		}
		files = files[:0]
		rows, err := q.query(`SELECT id, version FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND kind = ? AND blob = 1`,
			int64(sh.id), name, KindFile)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, err
			}
			files = append(files, snapFile{FileID(id), uint64(v)})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, f := range files {
			if _, err := q.exec(`INSERT INTO ns_snap_pending(share, snapshot, file, src, dst) VALUES (?, ?, ?, ?, ?)`,
				int64(sh.id), name, int64(f.id), blobKey(f.id), snapKey(sh.id, name, f.id)); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		return "", Attr{}, err
	}
	cl, canClone := fsys.store.(blobstore.Cloner)
	var missing []FileID
	var cloneErr error
	if len(files) > 0 && !canClone {
		cloneErr = fmt.Errorf("%w: the blob store cannot share content between keys", ErrNotSupported)
	}
	for i := 0; cloneErr == nil && i < len(files); i++ {
		f := files[i]
		_, err := cl.CloneBlob(ctx, blobKey(f.id), snapKey(shID, name, f.id), blobstore.Conditions{})
		switch {
		case err == nil, errors.Is(err, blobstore.ErrPreconditionFailed):
			// Cloned, or a commit cloned it first (copy on write).
		case errors.Is(err, blobstore.ErrNotFound):
			missing = append(missing, f.id) // a blob-backed file without a blob reads as zeros
		default:
			cloneErr = err
		}
	}
	err = fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("snapshot share", shID); err != nil {
			return nil, err
		}
		var exists int
		if err := q.queryRow(`SELECT count(*) FROM ns_snapshots WHERE share = ? AND name = ?`, int64(shID), name).Scan(&exists); err != nil {
			return nil, err
		}
		if exists == 0 {
			// The share (and the unready snapshot with it) was deleted
			// meanwhile: the clones made since are the collector's.
			for _, f := range files {
				if _, err := q.exec(`INSERT OR IGNORE INTO ns_gc(key, since) VALUES(?, ?)`, snapKey(shID, name, f.id), time.Now().UnixNano()); err != nil {
					return nil, err
				}
			}
			return nil, ErrShareNotFound
		}
		if cloneErr != nil {
			return nil, q.dropSnapshot(shID, name)
		}
		if _, err := q.exec(`DELETE FROM ns_snap_pending WHERE share = ? AND snapshot = ?`, int64(shID), name); err != nil {
			return nil, err
		}
		for _, id := range missing {
			if _, err := q.exec(`UPDATE ns_snap_entries SET blob = 0 WHERE share = ? AND snapshot = ? AND id = ?`, int64(shID), name, int64(id)); err != nil {
				return nil, err
			}
		}
		_, err := q.exec(`UPDATE ns_snapshots SET ready = 1 WHERE share = ? AND name = ?`, int64(shID), name)
		return nil, err
	})
	if cloneErr != nil || err != nil {
		fsys.kickGC()
		if cloneErr != nil {
			return "", Attr{}, cloneErr
		}
		return "", Attr{}, err
	}
	return name, a, nil
}

// snapCols are the ns_entries columns a snapshot copies.
const snapCols = `id, parent, name, key, kind, unlinked, size, attrs, t_created, t_write, t_change, t_modified, version,
	props, quota, blob, inline, ranges`

// dropSnapshot removes a snapshot's rows and queues its blob keys for the
// collector.
func (q *q) dropSnapshot(share FileID, name string) error {
	rows, err := q.query(`SELECT id FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND kind = ? AND blob = 1`, int64(share), name, KindFile)
	if err != nil {
		return err
	}
	var ids []FileID
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, FileID(id))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := q.exec(`INSERT OR IGNORE INTO ns_gc(key, since) VALUES(?, ?)`, snapKey(share, name, id), time.Now().UnixNano()); err != nil {
			return err
		}
	}
	if _, err := q.exec(`DELETE FROM ns_snap_pending WHERE share = ? AND snapshot = ?`, int64(share), name); err != nil {
		return err
	}
	if err := q.storeState(share, stateLease, name, nil); err != nil {
		return err
	}
	if _, err := q.exec(`DELETE FROM ns_snap_entries WHERE share = ? AND snapshot = ?`, int64(share), name); err != nil {
		return err
	}
	_, err = q.exec(`DELETE FROM ns_snapshots WHERE share = ? AND name = ?`, int64(share), name)
	return err
}

// snapshotNames lists a share's snapshots (ready only unless all).
func (q *q) snapshotNames(share FileID, all bool) ([]string, error) {
	rows, err := q.query(`SELECT name FROM ns_snapshots WHERE share = ? AND (ready = 1 OR ?) ORDER BY name`, int64(share), all)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// snapView is a snapshot's namespace as a transaction sees it.
type snapView struct {
	q     *q
	share FileID
	name  string
}

// snapshot opens a ready snapshot of share. Errors: ErrShareNotFound,
// ErrSnapshotNotFound.
func (q *q) snapshot(share, snapshot string) (snapView, entry, error) {
	name, err := ParseSnapshot(snapshot)
	if err != nil {
		return snapView{}, entry{}, err
	}
	sh, err := q.share(share)
	if err != nil {
		return snapView{}, entry{}, err
	}
	v := snapView{q: q, share: sh.id, name: name}
	root, err := v.get(sh.id)
	if errors.Is(err, ErrNotFound) {
		return v, entry{}, ErrSnapshotNotFound
	}
	var ready bool
	if err == nil {
		err = q.queryRow(`SELECT ready FROM ns_snapshots WHERE share = ? AND name = ?`, int64(sh.id), name).Scan(&ready)
	}
	if errors.Is(err, sql.ErrNoRows) || err == nil && !ready {
		return v, entry{}, ErrSnapshotNotFound
	}
	return v, root, err
}

func (v snapView) get(id FileID) (entry, error) {
	e, err := scanEntry(v.q.queryRow(`SELECT `+entryCols+` FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND id = ?`,
		int64(v.share), v.name, int64(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return entry{}, ErrNotFound
	}
	return e, err
}

// resolve walks path ("share/dir/f") in the snapshot.
func (v snapView) resolve(root entry, path string) (entry, string, error) {
	_, parts, err := SplitPath(path)
	if err != nil {
		return entry{}, "", err
	}
	e, p := root, root.name
	for i, part := range parts {
		if !e.kind.IsDir() {
			return entry{}, "", ErrParentNotFound
		}
		c, err := scanEntry(v.q.queryRow(`SELECT `+entryCols+` FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND parent = ? AND key = ?`,
			int64(v.share), v.name, int64(e.id), FoldName(part)))
		if errors.Is(err, sql.ErrNoRows) {
			if i < len(parts)-1 {
				return entry{}, "", ErrParentNotFound
			}
			return entry{}, "", ErrNotFound
		}
		if err != nil {
			return entry{}, "", err
		}
		e, p = c, p+"/"+c.name
	}
	return e, p, nil
}

func (v snapView) attr(e entry, path string) Attr {
	a := e.attr(path)
	a.Snapshot = v.name
	return a
}

// SnapshotStat is Stat in a share snapshot: path is "share" or
// "share/dir/f". Errors: ErrShareNotFound, ErrSnapshotNotFound,
// ErrNotFound, ErrParentNotFound, ErrInvalidArg (a malformed snapshot).
func (fsys *FileSystem) SnapshotStat(ctx context.Context, snapshot, path string) (Attr, error) {
	var a Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		share, _, _ := strings.Cut(path, "/")
		v, root, err := q.snapshot(share, snapshot)
		if err != nil {
			return err
		}
		e, p, err := v.resolve(root, path)
		if err != nil {
			return err
		}
		a = v.attr(e, p)
		if e.id == v.share {
			a.ShareLease, err = q.leaseInfoOf(v.share, v.name)
		}
		return err
	})
	return a, pathErr("stat snapshot "+snapshot, path, err)
}

// SnapshotGetFile is GetFile in a share snapshot (no locks: a snapshot has
// no handles or leases of its own).
func (fsys *FileSystem) SnapshotGetFile(ctx context.Context, snapshot string, req GetFileRequest) (*FileReader, error) {
	var a Attr
	var c content
	var off, n int64
	var key string
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		share, _, _ := strings.Cut(req.Path, "/")
		v, root, err := q.snapshot(share, snapshot)
		if err != nil {
			return err
		}
		e, p, err := v.resolve(root, req.Path)
		if err != nil {
			return err
		}
		if e.kind.IsDir() {
			return ErrIsDir
		}
		off, n = 0, e.size
		if req.Ranged {
			if req.Offset < 0 || req.Offset >= e.size {
				return fmt.Errorf("%w: offset %d, size %d", ErrInvalidRange, req.Offset, e.size)
			}
			off, n = req.Offset, e.size-req.Offset
			if req.Length >= 0 && req.Length < n {
				n = req.Length
			}
		}
		c = content{size: e.size, version: e.version, blob: e.blob}
		if !e.blob {
			if err := q.queryRow(`SELECT inline FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND id = ?`,
				int64(v.share), v.name, int64(e.id)).Scan(&c.inline); err != nil {
				return err
			}
		}
		key = snapKey(v.share, v.name, e.id)
		a = v.attr(e, p)
		return nil
	})
	if err != nil {
		return nil, pathErr("get file in snapshot "+snapshot, req.Path, err)
	}
	var rd interface {
		Read([]byte) (int, error)
		Close() error
	}
	if c.blob {
		rd = &blobReader{fsys: fsys, ctx: ctx, key: key, off: off, left: n}
	} else {
		rd = &inlineReader{data: c.inline, off: off, left: n}
	}
	return &FileReader{ReadCloser: rd, Attr: a, Offset: off, Length: n}, nil
}

// SnapshotList is ListDirectory in a share snapshot.
func (fsys *FileSystem) SnapshotList(ctx context.Context, snapshot, path string, req ListRequest) (ListResult, error) {
	var res ListResult
	max := pageSize(req.MaxResults)
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		share, _, _ := strings.Cut(path, "/")
		v, root, err := q.snapshot(share, snapshot)
		if err != nil {
			return err
		}
		d, p, err := v.resolve(root, path)
		if err != nil {
			return err
		}
		if !d.kind.IsDir() {
			return ErrNotDir
		}
		res = ListResult{Dir: v.attr(d, p)}
		prefix := FoldName(req.Prefix)
		rows, err := q.query(`SELECT `+entryCols+` FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND parent = ? AND key >= ?
			AND substr(key, 1, length(?)) = ? ORDER BY key LIMIT ?`, int64(v.share), v.name, int64(d.id), req.Marker, prefix, prefix, max+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEntry(rows)
			if err != nil {
				return err
			}
			if len(res.Entries) == max {
				res.NextMarker = e.key
				break
			}
			res.Entries = append(res.Entries, v.attr(e, joinPath(p, e.name)))
		}
		return rows.Err()
	})
	return res, pathErr("list snapshot "+snapshot, path, err)
}

// ShareSnapshots lists the snapshots of a share as share Attrs (Snapshot
// set; metadata and properties as they were taken).
func (fsys *FileSystem) ShareSnapshots(ctx context.Context, share string) ([]Attr, error) {
	var out []Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		sh, err := q.share(share)
		if err != nil {
			return err
		}
		names, err := q.snapshotNames(sh.id, false)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, n := range names {
			v := snapView{q: q, share: sh.id, name: n}
			e, err := v.get(sh.id)
			if err != nil {
				return err
			}
			a := v.attr(e, e.name)
			if a.ShareLease, err = q.leaseInfoOf(sh.id, n); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, pathErr("list snapshots", share, err)
}

// DeleteShareSnapshot deletes one snapshot; its blobs go to the
// collector. leaseID is needed while the snapshot's lease is active.
// Errors: ErrShareNotFound, ErrSnapshotNotFound, *lease.Error.
func (fsys *FileSystem) DeleteShareSnapshot(ctx context.Context, share, snapshot, leaseID string) error {
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		v, _, err := q.snapshot(share, snapshot)
		if err != nil {
			return nil, err
		}
		if _, err := q.lock("delete snapshot", v.share); err != nil {
			return nil, err
		}
		if err := q.checkLeaseOf(v.share, v.name, leaseID, true); err != nil {
			return nil, err
		}
		return nil, q.dropSnapshot(v.share, v.name)
	})
	fsys.kickGC()
	return pathErr("delete snapshot "+snapshot, share, err)
}

// ErrSnapshotLeased: Delete Share with its snapshots while one of them
// has an active lease (409 DeleteShareWhenSnapshotLeased); "include-leased"
// deletes them anyway.
var ErrSnapshotLeased = errors.New("a share snapshot has an active lease")

// dropSnapshots removes every snapshot of a share (with DeleteShare's
// include); without include a share with ready snapshots is
// ErrShareHasSnapshots.
func (q *q) dropSnapshots(share FileID, include bool) error {
	return q.dropSnapshotsLeased(share, include, true)
}

// dropSnapshotsLeased is dropSnapshots; unless leased, a snapshot with an
// active lease is ErrSnapshotLeased.
func (q *q) dropSnapshotsLeased(share FileID, include, leased bool) error {
	names, err := q.snapshotNames(share, true)
	if err != nil {
		return err
	}
	if include && !leased {
		for _, n := range names {
			l, err := q.leaseOf(share, n)
			if err != nil {
				return err
			}
			if l.Active(q.now) {
				return ErrSnapshotLeased
			}
		}
	}
	if !include {
		ready, err := q.snapshotNames(share, false)
		if err != nil {
			return err
		}
		if len(ready) > 0 {
			return ErrShareHasSnapshots
		}
	}
	for _, n := range names {
		if err := q.dropSnapshot(share, n); err != nil {
			return err
		}
	}
	return nil
}

// pendingClones are the snapshot keys still waiting for file's current
// content (read by a commit in the transaction that marks its intent
// committing).
func (q *q) pendingClones(file FileID) ([]string, error) {
	rows, err := q.query(`SELECT dst FROM ns_snap_pending WHERE file = ?`, int64(file))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// cloneBeforeCommit is the copy on write of a commit: the version etag of
// key, which the commit is about to replace, is cloned to every pending
// snapshot key first. A clone already there (the snapshot's own) is fine.
func (fsys *FileSystem) cloneBeforeCommit(ctx context.Context, key, etag string, dsts []string) error {
	cl, ok := fsys.store.(blobstore.Cloner)
	if !ok || etag == "" {
		return nil
	}
	for _, d := range dsts {
		_, err := cl.CloneBlob(ctx, key, d, blobstore.Conditions{IfMatch: etag})
		if err != nil && !errors.Is(err, blobstore.ErrPreconditionFailed) && !errors.Is(err, blobstore.ErrNotFound) {
			return fmt.Errorf("keep %s for a snapshot: %w", key, err)
		}
	}
	return nil
}
