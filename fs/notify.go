package fs

// Change notification (SMB2 CHANGE_NOTIFY, MS-SMB2 3.3.5.19; MS-FSA's
// FsRtlNotifyFullReportChange): a journal of namespace changes, written in
// the transaction that makes the change, for the directories somebody
// watches.
//
// The two tables are the namespace's (schema 9), not the lock table's: the
// change is made here — every create, delete, rename and attribute change
// of every front end (REST, SMB, the mount, `session`) is an fs
// transaction — and what a row needs (the changed entry's parent chain,
// for WATCH_TREE and the name relative to the watched directory) is the
// namespace's. A watch lives no longer than its owner: a dead owner's
// watches (session liveness, as ns_unflushed) are dropped.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/blobshare/blobshare/locks"
)

// Completion filter bits (MS-SMB2 2.2.35, FILE_NOTIFY_CHANGE_*): what a
// change touched, and what a watch asks to hear about.
const (
	NotifyFileName   uint32 = 0x001
	NotifyDirName    uint32 = 0x002
	NotifyAttributes uint32 = 0x004
	NotifySize       uint32 = 0x008
	NotifyLastWrite  uint32 = 0x010
	NotifyLastAccess uint32 = 0x020
	NotifyCreation   uint32 = 0x040
	NotifyEA         uint32 = 0x080
	NotifySecurity   uint32 = 0x100
)

// Actions of a notice (MS-FSCC 2.7.1 FILE_NOTIFY_INFORMATION.Action).
const (
	ActionAdded      uint32 = 1
	ActionRemoved    uint32 = 2
	ActionModified   uint32 = 3
	ActionRenamedOld uint32 = 4
	ActionRenamedNew uint32 = 5
)

// NoticeDeletePending, as a Notice's Action (not an MS-FSCC action), says
// that the watched directory itself became delete pending: smbd then ends
// the directory's pending CHANGE_NOTIFY requests with
// STATUS_DELETE_PENDING (smbtorture smb2.notify.rmdir1 to rmdir4).
const NoticeDeletePending uint32 = 0

// notifySchema is schema 9's addition (fresh schema and migration 9).
// ns_watches: one row per watched directory open (WatchDir); tree = 1 for
// WATCH_TREE (descendants too). ns_notices: one row per change a watch
// must report, in commit order (seq), the name relative to the watched
// directory; the watch's FileSystem takes (and deletes) them.
const notifySchema = `CREATE TABLE IF NOT EXISTS ns_watches (
	id      INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: an id names one watch
	dir     INTEGER NOT NULL,
	tree    INTEGER NOT NULL,
	owner   TEXT    NOT NULL, -- the FileSystem that delivers (FileSystem.instance)
	session TEXT    NOT NULL  -- its lock table's owner session: the watch dies with it
);
CREATE INDEX IF NOT EXISTS ns_watches_dir ON ns_watches(dir);
CREATE TABLE IF NOT EXISTS ns_notices (
	seq    INTEGER PRIMARY KEY,
	watch  INTEGER NOT NULL,
	owner  TEXT    NOT NULL,
	action INTEGER NOT NULL,
	filter INTEGER NOT NULL,
	name   TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS ns_notices_owner ON ns_notices(owner, seq);`

// notifyNothing as a Change's Filter: the change reports nothing (a
// setattr of the change time alone, MS-FSA 2.1.5.14.2).
const notifyNothing uint32 = 1 << 31

// WatchID names a watch (ns_watches.id).
type WatchID int64

// Notice is one change a watch reports: Action (ActionAdded ...), the
// completion filter bits it matches (Notify*), and the name relative to
// the watched directory, components separated by `\` (SMB's separator).
type Notice struct {
	Action uint32
	Filter uint32
	Name   string
}

// notices is the in-process wake-up of a FileSystem's watchers: closed
// at the next commit of this process that may have recorded a notice
// for one of its watches. Other processes' notices are found by polling
// (HasNotices).
type notices struct {
	mu      sync.Mutex
	ch      chan struct{}
	watches int // this FileSystem's open watches: no signal without one
}

func (n *notices) changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notices) signal() {
	n.mu.Lock()
	if n.watches > 0 && n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}

func (n *notices) add(d int) {
	n.mu.Lock()
	n.watches += d
	n.mu.Unlock()
}

// WatchDir registers a watch on directory dir (tree: its descendants
// too): from the commit on, every change in it is recorded for the watch
// until Unwatch. Watches of dead owners are dropped on the way.
func (fsys *FileSystem) WatchDir(ctx context.Context, dir FileID, tree bool) (WatchID, error) {
	var id, dropped int64
	fsys.watchHint.add(1) // before the row (visiblehint.go)
	err := fsys.table.Update(ctx, func(tx *locks.Tx) error {
		q := fsys.q(tx)
		var err error
		if dropped, err = q.dropDeadWatches(tx); err != nil {
			return err
		}
		// The directory's key first: whoever makes it delete pending
		// does so under it, so either that change finds this watch and
		// records its notice, or this watch finds the directory already
		// pending and records it here. A client may send its notify and,
		// on another connection, remove the directory without waiting for
		// the interim response (smbtorture smb2.notify.rmdir3/4): without
		// this the request would wait for a notice nobody records.
		if _, err := tx.LockKeys(dir); err != nil {
			return err
		}
		if err := q.queryRow(`INSERT INTO ns_watches(dir, tree, owner, session) VALUES(?, ?, ?, ?) RETURNING id`,
			int64(dir), tree, fsys.instance, string(tx.Owner())).Scan(&id); err != nil {
			return err
		}
		pending, err := tx.DeletePending(dir)
		if err != nil || !pending {
			return err
		}
		_, err = q.exec(`INSERT INTO ns_notices(watch, owner, action, filter, name) VALUES(?, ?, ?, 0, '')`,
			id, fsys.instance, NoticeDeletePending)
		return err
	})
	if err != nil {
		fsys.watchHint.add(-1)
		return 0, fileErr("watch", dir, err)
	}
	fsys.watchHint.add(-dropped) // the dead processes' share of the hint
	fsys.notices.add(1)
	return WatchID(id), nil
}

// Unwatch ends a watch and drops its undelivered notices.
func (fsys *FileSystem) Unwatch(ctx context.Context, id WatchID) error {
	var gone int64
	err := fsys.table.Update(context.WithoutCancel(ctx), func(tx *locks.Tx) error {
		q := fsys.q(tx)
		res, err := q.exec(`DELETE FROM ns_watches WHERE id = ? AND owner = ?`, int64(id), fsys.instance)
		if err != nil {
			return err
		}
		if gone, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = q.exec(`DELETE FROM ns_notices WHERE watch = ?`, int64(id))
		return err
	})
	fsys.watchHint.add(-gone) // after the row (a failure leaves the hint high: statements, not answers)
	fsys.notices.add(-1)
	if err != nil {
		return fmt.Errorf("fs: unwatch %d: %w", id, err)
	}
	return nil
}

// NoticesChanged returns a channel closed at the next commit of this
// process that may have recorded notices for this FileSystem's watches.
// Take it before HasNotices; notices of other processes' changes need a
// poll.
func (fsys *FileSystem) NoticesChanged() <-chan struct{} { return fsys.notices.changed() }

// HasNotices reports, in one read statement, whether notices wait for
// this FileSystem's watches: an idle poll costs a read, not a write.
func (fsys *FileSystem) HasNotices(ctx context.Context) (bool, error) {
	var n bool
	err := fsys.table.PeekStatement(ctx, func(tx *locks.Tx) error {
		return tx.SQL().QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM ns_notices WHERE owner = ?)`, fsys.instance).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("fs: notices: %w", err)
	}
	return n, nil
}

// TakeNotices removes and returns the notices waiting for this
// FileSystem's watches, in commit order per watch.
func (fsys *FileSystem) TakeNotices(ctx context.Context) (map[WatchID][]Notice, error) {
	var out map[WatchID][]Notice
	err := fsys.table.Update(ctx, func(tx *locks.Tx) error {
		q := fsys.q(tx)
		out = map[WatchID][]Notice{}
		rows, err := q.query(`DELETE FROM ns_notices WHERE owner = ? RETURNING seq, watch, action, filter, name`, fsys.instance)
		if err != nil {
			return err
		}
		type row struct {
			seq int64
			w   WatchID
			n   Notice
		}
		var rs []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.w, &r.n.Action, &r.n.Filter, &r.n.Name); err != nil {
				rows.Close()
				return err
			}
			rs = append(rs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// RETURNING gives no order: sort by seq.
		slices.SortFunc(rs, func(a, b row) int { return cmp.Compare(a.seq, b.seq) })
		for _, r := range rs {
			out[r.w] = append(out[r.w], r.n)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fs: take notices: %w", err)
	}
	return out, nil
}

// dropDeadWatches removes, at start, the watches (and notices) of
// owners that died: a crashed process's watches would otherwise collect
// notices until the next WatchDir of any process.
func (fsys *FileSystem) dropDeadWatches(ctx context.Context) error {
	var dropped int64
	err := fsys.table.Update(ctx, func(tx *locks.Tx) error {
		var err error
		dropped, err = fsys.q(tx).dropDeadWatches(tx)
		return err
	})
	if err == nil {
		fsys.watchHint.add(-dropped)
	}
	return err
}

// dropDeadWatches removes the watches (and notices) of owners that died
// and returns how many watches went (the caller takes them off the hint
// once the transaction committed).
func (q *q) dropDeadWatches(tx *locks.Tx) (int64, error) {
	rows, err := q.query(`SELECT DISTINCT session FROM ns_watches`)
	if err != nil {
		return 0, err
	}
	var sessions []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return 0, err
		}
		sessions = append(sessions, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var dropped int64
	for _, s := range sessions {
		if s == string(tx.Owner()) {
			continue
		}
		alive, err := tx.OwnerAlive(locks.OwnerID(s))
		if err != nil {
			return 0, err
		}
		if alive {
			continue
		}
		if _, err := q.exec(`DELETE FROM ns_notices WHERE watch IN (SELECT id FROM ns_watches WHERE session = ?)`, s); err != nil {
			return 0, err
		}
		res, err := q.exec(`DELETE FROM ns_watches WHERE session = ?`, s)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		dropped += n
	}
	return dropped, nil
}

// report is one change to record: in directory parent, entry name, with
// action and filter.
type report struct {
	parent FileID
	name   string
	action uint32
	filter uint32
}

// anyWatch reports whether any directory anywhere is watched: when not, a
// change records nothing (one read of an empty table's first row). Before
// it, the watch hint (a counter shared by the processes in a mapped file
// beside the database, blobshare.watches, as the staged-writes hint of
// visiblehint.go) spares even that read while nobody watches: WatchDir
// counts one up before its transaction, so a change's transaction either
// sees the count or, holding SQLite's write lock, commits before the
// watch exists; Unwatch and the drop of dead owners' watches count down
// after theirs. (An engine without a global write lock needs the watch's
// directory keyed instead.)
func anyWatch(ctx context.Context, tx *locks.Conn) (bool, error) {
	var n bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM ns_watches)`).Scan(&n)
	if errors.Is(err, locks.ErrNoTable) {
		return false, nil
	}
	return n, err
}

// record writes the notices of rs for every watch that covers their
// directory: a watch on the directory itself, or a WATCH_TREE watch on
// one of its ancestors (the name is then the path from the watched
// directory). Call it in the transaction that makes the change, after
// anyWatch said yes.
func record(ctx context.Context, tx *locks.Conn, rs []report) error {
	for _, r := range rs {
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE up(id, parent, name, prefix) AS (
				SELECT id, parent, name, '' FROM ns_entries WHERE id = ?1
				UNION ALL
				SELECT e.id, e.parent, e.name, up.name || '\' || up.prefix FROM ns_entries e JOIN up ON e.id = up.parent WHERE up.parent != 0
			)
			SELECT w.id, w.owner, up.prefix FROM up JOIN ns_watches w ON w.dir = up.id WHERE up.prefix = '' OR w.tree = 1`, int64(r.parent))
		if err != nil {
			return fmt.Errorf("notices of %d: %w", r.parent, err)
		}
		type hit struct {
			w      int64
			owner  string
			prefix string
		}
		var hits []hit
		for rows.Next() {
			var h hit
			if err := rows.Scan(&h.w, &h.owner, &h.prefix); err != nil {
				rows.Close()
				return fmt.Errorf("notices of %d: %w", r.parent, err)
			}
			hits = append(hits, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("notices of %d: %w", r.parent, err)
		}
		for _, h := range hits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO ns_notices(watch, owner, action, filter, name) VALUES(?, ?, ?, ?, ?)`,
				h.w, h.owner, r.action, r.filter, h.prefix+r.name); err != nil {
				return fmt.Errorf("notices of %d: %w", r.parent, err)
			}
		}
	}
	return nil
}

// nameFilter is the filter bit of a name change of an entry of kind k.
func nameFilter(k Kind) uint32 {
	if k.IsDir() {
		return NotifyDirName
	}
	return NotifyFileName
}

// recordChanges records the notices of an update's changes (q.journal's
// work); removals are recorded where the row goes (RemoveFile,
// removeTree), which every delete passes, whoever completes it.
func (q *q) recordChanges(chs []Change) error {
	if len(chs) == 0 || !q.fs.watchHint.anyRows() {
		return nil
	}
	watched, err := anyWatch(q.ctx, q.tx)
	if err != nil || !watched {
		return err
	}
	var rs []report
	for _, c := range chs {
		var kind Kind
		switch c.Kind {
		case ChangeRemove:
			continue
		case ChangeCreate, ChangeRename, ChangeAttr, ChangeData:
			err := q.queryRow(`SELECT kind FROM ns_entries WHERE id = ?`, int64(c.File)).Scan(&kind)
			if errors.Is(err, sql.ErrNoRows) {
				continue // gone again in the same transaction
			}
			if err != nil {
				return err
			}
		}
		switch c.Kind {
		case ChangeCreate:
			rs = append(rs, report{c.Parent, c.Name, ActionAdded, nameFilter(kind)})
		case ChangeRename:
			if c.NewParent == c.Parent {
				rs = append(rs, report{c.Parent, c.Name, ActionRenamedOld, nameFilter(kind)},
					report{c.NewParent, c.NewName, ActionRenamedNew, nameFilter(kind)})
			} else {
				// A move to another directory is a removal here and an
				// addition there, as NTFS reports it.
				rs = append(rs, report{c.Parent, c.Name, ActionRemoved, nameFilter(kind)},
					report{c.NewParent, c.NewName, ActionAdded, nameFilter(kind)})
			}
			if !kind.IsDir() {
				// A renamed file is also modified (attributes and
				// creation), a directory not: smbd reports it so, and
				// smbtorture's smb2.notify.mask-change expects it.
				rs = append(rs, report{c.NewParent, c.NewName, ActionModified, NotifyAttributes | NotifyCreation})
			}
		case ChangeAttr, ChangeData:
			f := c.Filter
			if f == notifyNothing {
				continue
			}
			if f == 0 {
				f = NotifyAttributes | NotifyLastWrite
				if c.Kind == ChangeData {
					f = NotifySize | NotifyLastWrite
				}
			}
			rs = append(rs, report{c.Parent, c.Name, ActionModified, f})
		}
	}
	return record(q.ctx, q.tx, rs)
}

// recordRemoval records the removal of entry name (of kind k) from
// parent, if anyone watches.
func recordRemoval(ctx context.Context, tx *locks.Conn, parent FileID, name string, k Kind) error {
	watched, err := anyWatch(ctx, tx)
	if err != nil || !watched {
		return err
	}
	return record(ctx, tx, []report{{parent, name, ActionRemoved, nameFilter(k)}})
}

// notifyFilter is what a setattr changes, as MS-FSA 2.1.5.14.2 reports a
// FileBasicInformation (and EAs, 2.1.5.14.3): the change time alone
// reports nothing.
func (r SetattrRequest) notifyFilter() uint32 {
	var f uint32
	if r.Attributes != nil {
		f |= NotifyAttributes
	}
	if r.LastWrite != nil {
		f |= NotifyLastWrite
	}
	if r.Created != nil {
		f |= NotifyCreation
	}
	if len(r.EAs) > 0 {
		f |= NotifyEA
	}
	if r.Size != nil || r.AllocationSize != nil {
		f |= NotifySize
	}
	if f == 0 {
		return notifyNothing
	}
	return f
}

// recordDirPending records, for the watches of directory dir itself,
// that it became delete pending (NoticeDeletePending), if dir is delete
// pending now and anyone watches it.
func (q *q) recordDirPending(tx *locks.Tx, dir FileID) error {
	if !q.fs.watchHint.anyRows() {
		return nil
	}
	watched, err := anyWatch(q.ctx, q.tx)
	if err != nil || !watched {
		return err
	}
	if pending, err := tx.DeletePending(dir); err != nil || !pending {
		return err
	}
	_, err = q.exec(`INSERT INTO ns_notices(watch, owner, action, filter, name) SELECT id, owner, ?, 0, '' FROM ns_watches WHERE dir = ?`,
		NoticeDeletePending, int64(dir))
	return err
}

// notifyFilter is what a FileREST Set Properties changes, as SMB sees
// it: attributes, creation and last write times, and the permission (the
// security descriptor); content headers have no SMB counterpart.
func (p SMBProperties) notifyFilter() uint32 {
	var f uint32
	if p.Attributes != nil {
		f |= NotifyAttributes
	}
	if p.Created != nil {
		f |= NotifyCreation
	}
	if p.LastWrite != nil {
		f |= NotifyLastWrite
	}
	if p.PermissionKey != nil {
		f |= NotifySecurity
	}
	if f == 0 {
		return notifyNothing
	}
	return f
}
