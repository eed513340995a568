package fs

import (
	"context"
	"slices"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// Visible writes (OpenOptions.VisibleWrites): an SMB client without a
// write-caching lease has no right to cache, so a WRITE it was answered
// for must be seen by every reader at once, as on Azure Files and smbd.
// Committing at every WRITE costs too much (a commit rewrites the partly
// written block: 2000 appends of 100 bytes went from 0.2 s to 25 s), so the
// writes stay staged and the reader commits them: every read path of this
// process (REST Get File, Get File Properties, List, List Ranges, Copy
// File's source; the mount's stat, lookup and listing; other handles'
// reads, attributes and opens) first commits the staged writes of the
// visible-write handles of the files it is about to read. With none
// staged anywhere it costs one atomic load.
//
// Readers in other processes (a `blobshare mount` or `session` over the
// same data directory) cannot reach this process's staged writes, so a
// marked handle also has a row in ns_unflushed, written with its first
// staged write and deleted in the transaction that commits it. A reader
// that finds rows of another FileSystem for the file it reads sets their
// requested flag and waits, polling every pollEvery, until the rows are
// gone; the holder polls its own rows for requests every pollEvery while
// it has staged visible writes, and commits. Read paths ask the database
// only while a counter shared by the processes (visiblehint.go) says
// another one may have rows; writers pay one write transaction per first
// staged write after a commit. The wait is
// bounded by awaitCommit (the holder alive but stuck, or its database
// busy): the reader then reads what is committed and logs it. Rows of a
// dead process are removed by the reader that meets them (the staged
// writes died with it). Wake-ups across processes, instead of the polls,
// are the metadata engine's.

// pollEvery is how often a holder of staged visible writes looks for
// commit requests, and a waiting reader for their commit.
const pollEvery = 2 * time.Millisecond

// awaitCommit bounds a reader's wait for another process's commit.
const awaitCommit = 2 * time.Second

// unflushed is the set of visible-write handles with staged writes, per
// file (FileSystem.unflushed, under FileSystem.mu; count is its size).
type unflushed map[FileID]map[*Handle]struct{}

// markUnflushed records that h (a visible-write handle) has staged writes
// (h.h.mu held).
func (h *Handle) markUnflushed() {
	if !h.h.visible || h.h.marked {
		return
	}
	fsys := h.h.fsys
	fsys.mu.Lock()
	m := fsys.unflushed[h.h.file]
	if m == nil {
		m = map[*Handle]struct{}{}
		fsys.unflushed[h.h.file] = m
	}
	m[h] = struct{}{}
	fsys.nUnflushed.Add(1)
	fsys.mu.Unlock()
	h.h.marked = true
	select {
	case fsys.pollKick <- struct{}{}:
	default:
	}
	// The row, so that readers elsewhere ask for a commit. Without it (the
	// database failed) they read what is committed.
	fsys.hint.add(1) // before the row and nRowed (visiblehint.go)
	err := fsys.update(context.Background(), func(tx *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("unflushed", h.h.file); err != nil {
			return nil, err
		}
		if err := q.holds(h.h.file, "unflushed"); err != nil {
			return nil, err
		}
		_, err := q.exec(`INSERT OR REPLACE INTO ns_unflushed(file, handle, owner, session) VALUES(?,?,?,?)`,
			int64(h.h.file), int64(h.h.id), fsys.instance, string(tx.Owner()))
		return nil, err
	})
	if err != nil {
		fsys.hint.add(-1)
		fsys.log.Warn("fs: recording staged visible writes", "file", h.h.file, "handle", h.h.id, "err", err)
		return
	}
	fsys.nRowed.Add(1)
	h.h.rowed = true
}

// unflushedRowGone deletes h's ns_unflushed row in the transaction that
// commits its writes (commitOp.committed; h.h.mu held).
func (h *Handle) unflushedRowGone(q *q) error {
	if !h.h.rowed {
		return nil
	}
	if _, err := q.lock("unflushed", h.h.file); err != nil {
		return err
	}
	if err := q.holds(h.h.file, "unflushed"); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM ns_unflushed WHERE file = ? AND handle = ?`, int64(h.h.file), int64(h.h.id))
	return err
}

// rowGone accounts for h's row having been deleted (h.h.mu held): nRowed
// before the hint (visiblehint.go).
func (h *Handle) rowGone() {
	h.h.rowed = false
	h.h.fsys.nRowed.Add(-1)
	h.h.fsys.hint.add(-1)
}

// clearUnflushed forgets h's staged writes: committed or dropped (h.h.mu
// held).
func (h *Handle) clearUnflushed() {
	if !h.h.marked {
		return
	}
	fsys := h.h.fsys
	fsys.mu.Lock()
	if m := fsys.unflushed[h.h.file]; m != nil {
		delete(m, h)
		if len(m) == 0 {
			delete(fsys.unflushed, h.h.file)
		}
	}
	fsys.nUnflushed.Add(-1)
	fsys.mu.Unlock()
	h.h.marked = false
}

// dropUnflushedRow deletes h's row when no commit did (h.h.mu held): the
// staged writes were dropped, or their commit failed.
func (h *Handle) dropUnflushedRow(ctx context.Context) {
	if !h.h.rowed {
		return
	}
	err := h.h.fsys.update(context.WithoutCancel(ctx), func(tx *locks.Tx, q *q) ([]Change, error) {
		return nil, h.unflushedRowGone(q)
	})
	if err != nil {
		h.h.fsys.log.Warn("fs: forgetting staged visible writes", "file", h.h.file, "handle", h.h.id, "err", err)
		h.h.rowed = false // the row may stay: the hint stays counting it, readers meet it as a stuck writer's
		h.h.fsys.nRowed.Add(-1)
		return
	}
	h.rowGone()
}

// commitWriters commits the staged writes of the visible-write handles of
// file other than except. Called holding no handle's lock and outside any
// transaction. A failing commit is the writer's to report (at its flush or
// close, which fail the same way); the reader then reads what is
// committed, and the failure is logged.
func (fsys *FileSystem) commitWriters(ctx context.Context, file FileID, except *Handle) {
	if fsys.nUnflushed.Load() == 0 {
		return
	}
	fsys.mu.Lock()
	var ws []*Handle
	for w := range fsys.unflushed[file] {
		if w != except {
			ws = append(ws, w)
		}
	}
	fsys.mu.Unlock()
	for _, w := range ws {
		if err := w.flush(ctx); err != nil {
			fsys.log.Debug("fs: committing another handle's writes for a reader", "file", file, "handle", w.h.id, "err", err)
		}
	}
}

// commitReaders is commitWriters for a read through handle except, also
// waiting for the staged visible writes of other processes.
func (fsys *FileSystem) commitReaders(ctx context.Context, file FileID, except *Handle) {
	fsys.awaitOthers(ctx, file, false)
	fsys.commitWriters(ctx, file, except)
}

// unflushedFiles lists the files with visible writes staged.
func (fsys *FileSystem) unflushedFiles() []FileID {
	if fsys.nUnflushed.Load() == 0 {
		return nil
	}
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	ids := make([]FileID, 0, len(fsys.unflushed))
	for id := range fsys.unflushed {
		ids = append(ids, id)
	}
	return ids
}

// commitFor commits the staged visible writes of the entry with id, or,
// with children, of the entries directly in it (a listing).
func (fsys *FileSystem) commitFor(ctx context.Context, id FileID, children bool) {
	fsys.awaitOthers(ctx, id, children)
	files := fsys.unflushedFiles()
	if len(files) == 0 {
		return
	}
	if slices.Contains(files, id) {
		fsys.commitWriters(ctx, id, nil)
	}
	if !children {
		return
	}
	var in []FileID
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		in = in[:0]
		for _, f := range files {
			e, err := q.get(f)
			if err != nil {
				continue // gone: nothing to list
			}
			if e.parent == id {
				in = append(in, f)
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, f := range in {
		fsys.commitWriters(ctx, f, nil)
	}
}

// commitForPath is commitFor for the entry path names (REST). A path that
// does not resolve has nothing to commit: the read answers its error.
func (fsys *FileSystem) commitForPath(ctx context.Context, path string, children bool) {
	if fsys.nUnflushed.Load() == 0 && !fsys.othersStaged(ctx) {
		return
	}
	var id FileID
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.mustResolve(path)
		id = r.e.id
		return err
	})
	if err != nil {
		return
	}
	fsys.commitFor(ctx, id, children)
}

// lookupVisible is lookup with the found file's staged visible writes
// committed first (found, committed, looked up again: the size changed).
func (fsys *FileSystem) lookupVisible(ctx context.Context, parent FileID, name string, stat bool) (Attr, error) {
	a, err := fsys.lookup(ctx, parent, name, stat)
	if err != nil || a.Kind != KindFile {
		return a, err
	}
	if fsys.nUnflushed.Load() == 0 && !fsys.othersStaged(ctx) {
		return a, nil
	}
	if !slices.Contains(fsys.unflushedFiles(), a.ID) && !fsys.awaitOthers(ctx, a.ID, false) {
		return a, nil
	}
	fsys.commitWriters(ctx, a.ID, nil)
	return fsys.lookup(ctx, parent, name, stat)
}

// othersStaged reports whether another FileSystem (process) has staged
// visible writes anywhere: the one statement every read path pays.
func (fsys *FileSystem) othersStaged(ctx context.Context) bool {
	if !fsys.hint.othersMayHave(fsys.nRowed.Load()) {
		return false
	}
	var any bool
	err := fsys.peekStatement(ctx, func(tx *locks.Tx, q *q) error {
		return q.queryRow(`SELECT EXISTS(SELECT 1 FROM ns_unflushed WHERE owner != ?)`, fsys.instance).Scan(&any)
	})
	return err == nil && any
}

// awaitOthers has the other FileSystems holding staged visible writes to
// file id (or, with children, to the files in directory id) commit them,
// and waits until they have, at most awaitCommit. It reports whether it
// waited for anything.
func (fsys *FileSystem) awaitOthers(ctx context.Context, id FileID, children bool) bool {
	if !fsys.othersStaged(ctx) {
		return false
	}
	type row struct {
		file    FileID
		session locks.OwnerID
		dead    bool
		handle  int64
	}
	pending := func() ([]row, error) {
		var rows []row
		err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
			rows = rows[:0]
			query := `SELECT file, handle, session FROM ns_unflushed WHERE file = ? AND owner != ?`
			if children {
				query = `SELECT u.file, u.handle, u.session FROM ns_unflushed u JOIN ns_entries e ON e.id = u.file WHERE e.parent = ? AND u.owner != ?`
			}
			rs, err := q.query(query, int64(id), fsys.instance)
			if err != nil {
				return err
			}
			defer rs.Close()
			for rs.Next() {
				var r row
				var f int64
				var sess string
				if err := rs.Scan(&f, &r.handle, &sess); err != nil {
					return err
				}
				r.file, r.session = FileID(f), locks.OwnerID(sess)
				rows = append(rows, r)
			}
			return rs.Err()
		})
		return rows, err
	}
	rows, err := pending()
	if err != nil || len(rows) == 0 {
		return false
	}
	// Ask, and clear the rows of processes that are gone.
	removed := 0
	err = fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		removed = 0
		for _, r := range rows {
			if _, err := q.lock("commit request", r.file); err != nil {
				return nil, err
			}
			if err := q.holds(r.file, "commit request"); err != nil {
				return nil, err
			}
			live, err := tx.OwnerAlive(r.session)
			if err != nil {
				return nil, err
			}
			stmt := `UPDATE ns_unflushed SET requested = 1 WHERE file = ? AND handle = ?`
			if !live {
				stmt = `DELETE FROM ns_unflushed WHERE file = ? AND handle = ?`
			}
			res, err := q.exec(stmt, int64(r.file), r.handle)
			if err != nil {
				return nil, err
			}
			if n, _ := res.RowsAffected(); n > 0 && !live {
				removed++
			}
		}
		return nil, nil
	})
	if err == nil {
		fsys.hint.add(-int64(removed)) // the dead processes' share of the hint
	}
	if err != nil {
		fsys.log.Warn("fs: asking another process to commit its visible writes", "file", id, "err", err)
		return true
	}
	deadline := time.Now().Add(awaitCommit)
	for {
		rows, err := pending()
		if err != nil || len(rows) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			fsys.log.Warn("fs: another process did not commit its visible writes in time; reading what is committed",
				"file", rows[0].file, "owner", rows[0].session, "waited", awaitCommit)
			return true
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return true
		}
	}
}

// serveCommitRequests commits this FileSystem's staged visible writes
// that readers of other processes asked for (ns_unflushed.requested),
// looking every pollEvery while it has any; it stops at Close.
func (fsys *FileSystem) serveCommitRequests(ctx context.Context) {
	defer close(fsys.pollDone)
	t := time.NewTimer(pollEvery)
	defer t.Stop()
	for {
		if fsys.nUnflushed.Load() == 0 {
			select {
			case <-fsys.pollKick:
				continue
			case <-fsys.pollStop:
				return
			}
		}
		t.Reset(pollEvery)
		select {
		case <-t.C:
		case <-fsys.pollKick:
		case <-fsys.pollStop:
			return
		}
		var files []FileID
		err := fsys.peek(ctx, func(tx *locks.Tx, q *q) error {
			files = files[:0]
			rs, err := q.query(`SELECT DISTINCT file FROM ns_unflushed WHERE owner = ? AND requested = 1`, fsys.instance)
			if err != nil {
				return err
			}
			defer rs.Close()
			for rs.Next() {
				var f int64
				if err := rs.Scan(&f); err != nil {
					return err
				}
				files = append(files, FileID(f))
			}
			return rs.Err()
		})
		if err != nil {
			fsys.log.Debug("fs: looking for commit requests", "err", err)
			continue
		}
		for _, f := range files {
			fsys.commitWriters(ctx, f, nil)
		}
	}
}

// dropDeadUnflushed removes the ns_unflushed rows of processes that are
// gone (their staged writes died with them), at New.
func (fsys *FileSystem) dropDeadUnflushed(ctx context.Context) error {
	var removed int64
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		removed = 0
		rs, err := q.query(`SELECT file, handle, session FROM ns_unflushed`)
		if err != nil {
			return nil, err
		}
		type key struct {
			file, handle int64
			session      locks.OwnerID
		}
		var rows []key
		for rs.Next() {
			var k key
			var sess string
			if err := rs.Scan(&k.file, &k.handle, &sess); err != nil {
				rs.Close()
				return nil, err
			}
			k.session = locks.OwnerID(sess)
			rows = append(rows, k)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		var dead []key
		for _, k := range rows {
			live, err := tx.OwnerAlive(k.session)
			if err != nil {
				return nil, err
			}
			if !live {
				dead = append(dead, k)
			}
		}
		for _, k := range dead {
			if _, err := q.lock("unflushed", FileID(k.file)); err != nil {
				return nil, err
			}
			if err := q.holds(FileID(k.file), "unflushed"); err != nil {
				return nil, err
			}
			if _, err := q.exec(`DELETE FROM ns_unflushed WHERE file = ? AND handle = ?`, k.file, k.handle); err != nil {
				return nil, err
			}
			removed++
		}
		return nil, nil
	})
	if err == nil {
		fsys.hint.add(-removed) // the dead processes' share of the hint
	}
	return err
}
