package fs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/blobshare/blobshare/locks"
)

// lookup finds name in parent with every attribute, or with stat's only
// (statCols: the mount's LOOKUP).
func (fsys *FileSystem) lookup(ctx context.Context, parent FileID, name string, stat bool) (Attr, error) {
	var a Attr
	err := fsys.peekStatement(ctx, func(tx *locks.Tx, q *q) error {
		// One statement, hit or miss (sqlLookup): the child, else the
		// parent if it is a file.
		var e entry
		var err error
		if stat {
			e, err = scanStat(q.queryRow(sqlLookupStat, int64(parent), FoldName(name), KindFile))
		} else {
			e, err = scanEntry(q.queryRow(sqlLookup, int64(parent), FoldName(name), KindFile))
		}
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return err
		case e.id == parent:
			return ErrNotDir
		case stat:
			a = e.statAttr()
		default:
			a = e.attr("")
		}
		return nil
	})
	return a, fileErr("lookup", parent, wrapName(name, err))
}

func wrapName(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%q: %w", name, err)
}

// handleAttr is every attribute of a file open through a handle, as SMB's
// QUERY_INFO needs them (permission key, metadata, extended attributes),
// where getAttr reads only what stat(2) shows.
func (fsys *FileSystem) handleAttr(ctx context.Context, id FileID) (Attr, error) {
	var a Attr
	err := fsys.peek(ctx, func(tx *locks.Tx, q *q) error {
		e, err := q.get(id)
		if err != nil {
			return err
		}
		a = e.attr("")
		if e.unlinked {
			a.DeletePending = true
			return nil
		}
		if e.kind == KindFile {
			a.DeletePending, err = tx.DeletePending(id)
		}
		return err
	})
	return a, fileErr("getattr", id, err)
}

// getAttr is one statement, as a lookup is: every GETATTR of the mount
// runs it, and stat(2) shows nothing of the lock table.
func (fsys *FileSystem) getAttr(ctx context.Context, id FileID) (Attr, error) {
	var a Attr
	err := fsys.peekStatement(ctx, func(tx *locks.Tx, q *q) error {
		e, err := scanStat(q.queryRow(sqlGetStat, int64(id)))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		a = e.statAttr()
		return nil
	})
	return a, fileErr("getattr", id, err)
}

func (fsys *FileSystem) readDir(ctx context.Context, dir FileID) ([]Attr, error) {
	var out []Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		de, err := q.get(dir)
		if err != nil {
			return err
		}
		if !de.kind.IsDir() {
			return ErrNotDir
		}
		// Counted first (from the name index alone) so that the listing
		// fills one slice of the right size: growing it entry by entry
		// cost a fifth of the listing of a large directory.
		var n int
		if err := q.queryRow(`SELECT count(*) FROM ns_entries WHERE parent = ? AND unlinked = 0`, int64(dir)).Scan(&n); err != nil {
			return err
		}
		rows, err := q.query(`SELECT `+statCols+` FROM ns_entries WHERE parent = ? AND unlinked = 0 ORDER BY key`, int64(dir))
		if err != nil {
			return err
		}
		defer rows.Close()
		if cap(out) < n {
			out = make([]Attr, 0, n)
		}
		out = out[:0]
		for rows.Next() {
			e, err := scanStat(rows)
			if err != nil {
				return err
			}
			out = append(out, e.statAttr())
		}
		return rows.Err()
	})
	return out, fileErr("readdir", dir, err)
}

func (o OpenOptions) request(file FileID) locks.OpenRequest {
	return locks.OpenRequest{File: file, Access: o.Access, Share: o.Share, DeleteOnClose: o.DeleteOnClose,
		SessionID: o.SessionID, ClientName: o.ClientName, ClientIP: o.ClientIP}
}

// newFileEntry is a fresh file row in parent.
func (q *q) newFileEntry(parent FileID, name string, attrs Attributes) entry {
	t := ticks(q.now)
	attrs &^= AttrDirectory
	if attrs == 0 {
		attrs = AttrArchive
	}
	return entry{parent: parent, name: name, kind: KindFile, attrs: attrs, created: t, write: t, change: t, modified: t}
}

func (q *q) newDirEntry(parent FileID, name string, kind Kind) entry {
	t := ticks(q.now)
	return entry{parent: parent, name: name, kind: kind, attrs: AttrDirectory, created: t, write: t, change: t, modified: t}
}

func (fsys *FileSystem) create(ctx context.Context, req CreateRequest) (*Handle, Attr, error) {
	if err := ValidateName(req.Name); err != nil {
		return nil, Attr{}, fileErr("create", req.Parent, err)
	}
	var lh locks.Handle
	var a Attr
	var existed bool
	if req.Parent == RootID {
		return nil, Attr{}, fileErr("create", req.Parent, ErrInvalidArg) // files live in shares
	}
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("create", req.Parent); err != nil {
			return nil, err
		}
		// Insert first: the kernel sends CREATE after a negative lookup, so
		// the name is almost always free, and the unique index answers
		// whether it is in one statement; the parent's touch then checks
		// it is a live directory (an existing child says so already).
		e, err := q.insert(q.newFileEntry(req.Parent, req.Name, req.Attributes))
		existed = errors.Is(err, ErrExist)
		switch {
		case err == nil:
			if err := q.touchLiveDir(req.Parent); err != nil {
				return nil, err
			}
		case existed:
			if req.Exclusive {
				return nil, ErrExist
			}
			if e, err = q.child(req.Parent, req.Name, false); err != nil {
				return nil, err
			}
			if e.kind.IsDir() {
				return nil, ErrIsDir
			}
		default:
			return nil, err
		}
		open := req.Open.request(e.id)
		open.Created = !existed
		open.ReadOnly = existed && e.readOnly()
		lh, err = tx.OpenHandle(open)
		if err != nil {
			return nil, err
		}
		urgentOpen(tx, open)
		a = e.attr("")
		if existed {
			return nil, nil
		}
		return []Change{{Kind: ChangeCreate, File: e.id, Parent: req.Parent, Name: e.name, Version: e.version}}, nil
	})
	if err != nil {
		return nil, Attr{}, fileErr("create", req.Parent, wrapName(req.Name, err))
	}
	h := fsys.newHandle(lh, req.Open)
	if existed && req.Truncate && a.Size != 0 {
		zero := int64(0)
		a, err = fsys.setattr(ctx, a.ID, SetattrRequest{Size: &zero, Handle: h})
		if err != nil {
			_ = h.Close(ctx)
			return nil, Attr{}, err
		}
	}
	return h, a, nil
}

func (fsys *FileSystem) mkdir(ctx context.Context, parent FileID, name string) (Attr, error) {
	if parent == RootID {
		a, err := fsys.createShare(ctx, ShareRequest{Name: name})
		return a, err
	}
	if err := ValidateName(name); err != nil {
		return Attr{}, fileErr("mkdir", parent, err)
	}
	var a Attr
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		if _, err := q.lock("mkdir", parent); err != nil {
			return nil, err
		}
		e, err := q.insert(q.newDirEntry(parent, name, KindDirectory))
		if err != nil {
			return nil, err
		}
		if err := q.touchLiveDir(parent); err != nil {
			return nil, err
		}
		a = e.attr("")
		return []Change{{Kind: ChangeCreate, File: e.id, Parent: parent, Name: name, Version: e.version}}, err
	})
	return a, fileErr("mkdir", parent, wrapName(name, err))
}

// unlinkEntry unlinks a file the mount way: removed at once, or left
// delete-pending and out of the name index for its open handles. A
// ReadOnly file goes too: the Linux SMB client answers the server's
// STATUS_CANNOT_DELETE by clearing ReadOnly and deleting again
// (cifs_unlink), so on a mount rm removes it, as on a local disk.
func (q *q) unlinkEntry(tx *locks.Tx, e entry) (removed bool, err error) {
	f, err := q.facts(e)
	if err != nil {
		return false, err
	}
	f.ReadOnly = false
	removed, err = tx.UnlinkOpen(e.id, f)
	if err != nil {
		return false, err
	}
	if removed {
		q.queuedBlob = q.queuedBlob || e.blob
		return true, nil // locks ran RemoveFile in this transaction
	}
	// Delete-pending: another process's read must refuse the file as
	// soon as this is answered (fold.go).
	tx.Urgent()
	e.unlinked = true
	e.change = ticks(q.now)
	return false, q.updateEntry(&e, `unlinked=?, t_change=?`, e.unlinked, e.change)
}

func (fsys *FileSystem) unlink(ctx context.Context, parent FileID, name string) error {
	var queued bool
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.lockChild("unlink", parent, name)
		if err != nil {
			return nil, err
		}
		if e.kind.IsDir() {
			return nil, ErrIsDir
		}
		removed, err := q.unlinkEntry(tx, e)
		if err != nil {
			return nil, err
		}
		queued = removed && e.blob
		if err := q.touchDir(parent); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeRemove, File: e.id, Parent: parent, Name: e.name}}, nil
	})
	if queued {
		fsys.kickGC() // only a removed blob is work for the collector
	}
	return fileErr("unlink", parent, wrapName(name, err))
}

func (fsys *FileSystem) rmdir(ctx context.Context, parent FileID, name string) error {
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.lockFound("rmdir", parent, func() (entry, error) { return q.child(parent, name, false) })
		if err != nil {
			return nil, err
		}
		if !e.kind.IsDir() {
			return nil, ErrNotDir
		}
		if live, err := q.hasLiveChildren(e.id); err != nil {
			return nil, err
		} else if live {
			return nil, ErrNotEmpty
		}
		if any, err := q.hasChildren(e.id); err != nil {
			return nil, err
		} else if any {
			// Only unlinked-but-open files are left: the directory leaves the
			// mount now and goes with its last such file (RemoveFile).
			e.unlinked = true
			e.change = ticks(q.now)
			if err := q.save(&e); err != nil {
				return nil, err
			}
		} else if err := q.removeTree(tx, e); err != nil {
			return nil, err
		}
		if err := q.touchDir(parent); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeRemove, File: e.id, Parent: parent, Name: e.name}}, nil
	})
	return fileErr("rmdir", parent, wrapName(name, err))
}

// shareOf returns the share an entry belongs to (itself for a share).
func (q *q) shareOf(e entry) (FileID, error) {
	for e.kind != KindShare {
		if e.kind == KindRoot {
			return RootID, nil
		}
		var err error
		if e, err = q.get(e.parent); err != nil {
			return 0, err
		}
	}
	return e.id, nil
}

// isAncestor reports whether a is b or an ancestor of b.
func (q *q) isAncestor(a, b FileID) (bool, error) {
	for b != 0 {
		if a == b {
			return true, nil
		}
		e, err := q.get(b)
		if err != nil {
			return false, err
		}
		b = e.parent
	}
	return false, nil
}

func (fsys *FileSystem) renameMount(ctx context.Context, req RenameRequest) error {
	if req.Exchange {
		return fileErr("rename", req.OldParent, ErrNotSupported)
	}
	if err := ValidateName(req.NewName); err != nil {
		return fileErr("rename", req.NewParent, err)
	}
	var queued bool
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		// Both parents first, whose names the rename reads and changes;
		// then the source (and, in move, the destination) found in them.
		if _, err := q.lock("rename", req.OldParent, req.NewParent); err != nil {
			return nil, err
		}
		src, err := q.lockChild("rename", req.OldParent, req.OldName)
		if err != nil {
			return nil, err
		}
		chs, err := q.move(tx, src, req.NewParent, req.NewName, moveOpts{noReplace: req.NoReplace, mount: true})
		queued = q.queuedBlob
		return chs, err
	})
	if err == nil && queued {
		fsys.kickGC() // only a replaced file's removed blob is work for the collector
	}
	return fileErr("rename", req.OldParent, wrapName(req.OldName, err))
}

type moveOpts struct {
	noReplace      bool
	mount          bool // replaced files are unlinked POSIX-style (else removed, REST)
	ignoreReadOnly bool
	srcLease       string
	dstLease       string
	// byHandle: the rename goes through the source's own handle, whose
	// Delete access was checked against every other handle at open; the
	// source is not checked again as a REST rename's is.
	byHandle bool
}

// checkMoveTarget checks that newParent is a live directory of src's share
// that does not lie inside src.
func (q *q) checkMoveTarget(src entry, newParent FileID) error {
	np, err := q.get(newParent)
	if err != nil {
		return err
	}
	if !np.kind.IsDir() || np.kind == KindRoot {
		return ErrNotDir
	}
	if np.unlinked {
		return ErrNotFound // removed, lingering for its open files
	}
	s1, err := q.shareOf(src)
	if err != nil {
		return err
	}
	s2, err := q.shareOf(np)
	if err != nil {
		return err
	}
	if s1 != s2 {
		return ErrCrossShare
	}
	if src.kind.IsDir() {
		// Not into itself: a path-dependent check, decided on the
		// directories above newParent, all locked.
		chain, err := q.lockAncestors("rename", newParent)
		if err != nil {
			return err
		}
		if slices.Contains(chain, src.id) {
			return ErrInvalidArg
		}
	}
	return nil
}

// move renames src to newParent/newName within its share, replacing a
// destination as the options say. src may be partial (childRef), and the
// destination is read so: move changes named columns only.
func (q *q) move(tx *locks.Tx, src entry, newParent FileID, newName string, o moveOpts) ([]Change, error) {
	if src.kind == KindShare || src.kind == KindRoot {
		return nil, ErrNotSupported
	}
	// A rename within the directory that holds a live source (mv a b, the
	// common case) needs none of the destination checks: that directory is
	// a live directory (an unlinked one holds no live entries; the root
	// holds only shares, refused above) of the source's own share, and
	// cannot lie inside the source. Three to four statements saved.
	sameDir := newParent == src.parent && !src.unlinked
	// The destination's side: its directory and the entry its name holds
	// there now, if any (the caller locked the source's side).
	dst, dstErr := q.lockChild("rename", newParent, newName)
	if dstErr != nil && !errors.Is(dstErr, ErrNotFound) {
		return nil, dstErr
	}
	if !sameDir {
		if err := q.checkMoveTarget(src, newParent); err != nil {
			return nil, err
		}
	}
	if !src.kind.IsDir() && !o.byHandle {
		f, err := q.facts(src)
		if err != nil {
			return nil, err
		}
		if err := tx.CheckREST(locks.RESTRequest{File: src.id, Op: locks.OpRenameSource, LeaseID: o.srcLease, Facts: f}); err != nil {
			return nil, err
		}
	}
	var chs []Change
	switch {
	case errors.Is(dstErr, ErrNotFound):
	case dst.id == src.id:
		// Same entry (e.g. a change of case only).
	case o.noReplace:
		return nil, ErrExist
	case dst.kind.IsDir():
		if !src.kind.IsDir() {
			return nil, ErrIsDir
		}
		if !o.mount {
			return nil, ErrExist
		}
		if ne, err := q.hasChildren(dst.id); err != nil {
			return nil, err
		} else if ne {
			return nil, ErrNotEmpty
		}
		if err := q.removeTree(tx, dst); err != nil {
			return nil, err
		}
		chs = append(chs, Change{Kind: ChangeRemove, File: dst.id, Parent: newParent, Name: dst.name})
	default:
		// POSIX refuses a directory over a file (ENOTDIR); REST Rename
		// Directory with replace-if-exists replaces the file.
		if src.kind.IsDir() && o.mount {
			return nil, ErrNotDir
		}
		f, err := q.facts(dst)
		if err != nil {
			return nil, err
		}
		if o.mount {
			if _, err := q.unlinkEntry(tx, dst); err != nil {
				return nil, err
			}
		} else {
			if f.ReadOnly && !o.ignoreReadOnly {
				return nil, locks.ErrReadOnly
			}
			f.ReadOnly = false
			if err := tx.CheckREST(locks.RESTRequest{File: dst.id, Op: locks.OpRenameReplace, LeaseID: o.dstLease, Facts: f}); err != nil {
				return nil, err
			}
			hs, err := tx.Handles(dst.id)
			if err != nil {
				return nil, err
			}
			if len(hs) > 0 {
				if _, err := q.unlinkEntry(tx, dst); err != nil {
					return nil, err
				}
			} else if err := q.removeFile(tx, dst); err != nil {
				return nil, err
			}
		}
		chs = append(chs, Change{Kind: ChangeRemove, File: dst.id, Parent: newParent, Name: dst.name})
	}
	oldParent, oldName := src.parent, src.name
	src.parent, src.name, src.key = newParent, newName, FoldName(newName)
	t := ticks(q.now)
	src.change, src.modified = t, t
	// Only what a rename changes: no properties to encode again.
	if err := q.updateEntry(&src, `parent=?, name=?, key=?, t_change=?, t_modified=?`,
		int64(src.parent), src.name, src.key, src.change, src.modified); err != nil {
		return nil, err
	}
	if err := q.touchDir(oldParent); err != nil {
		return nil, err
	}
	if newParent != oldParent {
		if err := q.touchDir(newParent); err != nil {
			return nil, err
		}
	}
	chs = append(chs, Change{Kind: ChangeRename, File: src.id, Parent: oldParent, Name: oldName, NewParent: newParent, NewName: newName, Version: src.version})
	return chs, nil
}

func (fsys *FileSystem) setattr(ctx context.Context, id FileID, req SetattrRequest) (Attr, error) {
	return fsys.setattrVia(ctx, id, req, fsys.update)
}

// setattrVia is setattr whose attribute change runs through update
// (fsys.update, or updateMount for the mount's: fold.go).
func (fsys *FileSystem) setattrVia(ctx context.Context, id FileID, req SetattrRequest,
	update func(context.Context, func(tx *locks.Tx, q *q) ([]Change, error)) error) (Attr, error) {
	if req.AllocationSize != nil {
		var err error
		if req, err = fsys.allocationCut(ctx, id, req); err != nil {
			return Attr{}, fileErr("setattr", id, err)
		}
	}
	if req.Size != nil {
		if *req.Size < 0 {
			return Attr{}, fileErr("setattr", id, ErrInvalidRange)
		}
		if err := fsys.breakOnResize(ctx, id, req.Handle); err != nil {
			return Attr{}, fileErr("setattr", id, err)
		}
		if err := fsys.flushFile(ctx, id, req.Handle); err != nil {
			return Attr{}, fileErr("setattr", id, err)
		}
		_, err := fsys.commit(ctx, id, commitOp{
			op:       "truncate",
			truncate: req.Size,
			check: func(tx *locks.Tx, q *q, e entry) error {
				if req.Handle != nil {
					return tx.HandleOpen(req.Handle.ID())
				}
				// truncate(2) by path: the Linux SMB client opens the
				// file for writing to set its size, so a ReadOnly file
				// refuses it (ErrReadOnly) like any write.
				f, err := q.facts(e)
				if err != nil {
					return err
				}
				return tx.CheckREST(locks.RESTRequest{File: id, Op: locks.OpSetProperties, Facts: f})
			},
		})
		if err != nil {
			return Attr{}, err
		}
	}
	if req.LastWrite == nil && req.Change == nil && req.Created == nil && req.Attributes == nil && len(req.EAs) == 0 && req.AllocationSize == nil {
		return fsys.getAttr(ctx, id)
	}
	if req.LastWrite != nil && req.Size == nil {
		// A time set now must outlive the writes made before it: commit
		// them first, or their commit at close would stamp the write time
		// over it (cp -p, tar and rsync set times on an open descriptor).
		// When the descriptor it comes through is this process's only
		// handle on the file (tar -x, cp -p), its writes and the new times
		// commit in one transaction: the commit applies them after its
		// own time stamps, as the update below would after it.
		if req.Handle != nil && len(req.EAs) == 0 && fsys.soleHandle(id, req.Handle) {
			e, committed, err := req.Handle.flushTouch(ctx, func(_ *q, e *entry) { req.apply(e) })
			if err != nil {
				return Attr{}, fileErr("setattr", id, err)
			}
			if committed {
				return e.attr(""), nil
			}
		} else if err := fsys.flushFile(ctx, id, req.Handle); err != nil {
			return Attr{}, fileErr("setattr", id, err)
		}
	}
	var a Attr
	err := update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.getLocked("setattr", id)
		if err != nil {
			return nil, err
		}
		t := ticks(q.now)
		e.change, e.modified = t, t
		req.apply(&e)
		if len(req.EAs) > 0 {
			if e.eas, err = mergeEAs(e.eas, req.EAs); err != nil {
				return nil, err
			}
		}
		if err := q.save(&e); err != nil {
			return nil, err
		}
		a = e.attr("")
		return []Change{{Kind: ChangeAttr, File: id, Parent: e.parent, Name: e.name, Version: e.version, Filter: req.notifyFilter()}}, err
	})
	return a, fileErr("setattr", id, err)
}

// apply sets the times and attributes req gives on e (after e's change
// and modified times were stamped with now).
func (req SetattrRequest) apply(e *entry) {
	if req.LastWrite != nil {
		e.write = ticks(*req.LastWrite)
	}
	if req.Change != nil {
		e.change = ticks(*req.Change)
	}
	if req.Created != nil {
		e.created = ticks(*req.Created)
	}
	if req.AllocationSize != nil {
		e.alloc = blockAlign(*req.AllocationSize)
	}
	if req.Attributes != nil {
		e.attrs = *req.Attributes &^ AttrDirectory
		if e.kind.IsDir() {
			e.attrs |= AttrDirectory
		}
	}
}

// soleHandle reports whether h, a handle of file id, is this process's
// only handle on it.
func (fsys *FileSystem) soleHandle(id FileID, h *Handle) bool {
	if h.h.file != id {
		return false
	}
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	st := fsys.files[id]
	if st == nil {
		return false
	}
	_, ok := st.handles[h]
	return ok && len(st.handles) == 1
}

// flushFile commits the staged writes of this process's handles on a file
// (before a truncate or a time change, so that they do not land after it).
func (fsys *FileSystem) flushFile(ctx context.Context, id FileID, first *Handle) error {
	if first != nil {
		if err := first.Flush(ctx); err != nil {
			return err
		}
	}
	fsys.mu.Lock()
	var hs []*Handle
	if st := fsys.files[id]; st != nil {
		for h := range st.handles {
			if h != first {
				hs = append(hs, h)
			}
		}
	}
	fsys.mu.Unlock()
	for _, h := range hs {
		if err := h.Flush(ctx); err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			return err
		}
	}
	return nil
}

func (fsys *FileSystem) openID(ctx context.Context, id FileID, opts OpenOptions) (*Handle, error) {
	var lh locks.Handle
	err := fsys.updateMount(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		e, err := q.getLocked("open", id) // its ReadOnly attribute decides too
		if err != nil {
			return nil, err
		}
		if e.kind.IsDir() {
			return nil, ErrIsDir
		}
		open := opts.request(id)
		open.ReadOnly = e.readOnly()
		if lh, err = tx.OpenHandle(open); err != nil {
			return nil, err
		}
		urgentOpen(tx, open)
		return nil, nil
	})
	if err != nil {
		return nil, fileErr("open", id, err)
	}
	return fsys.newHandle(lh, opts), nil
}

func (fsys *FileSystem) statFS(ctx context.Context) (StatFS, error) {
	var s StatFS
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		var files, used, quota int64
		err := q.queryRow(`SELECT count(*), coalesce(sum(CASE WHEN kind = ? THEN size ELSE 0 END), 0), coalesce(sum(quota), 0) FROM ns_entries`, KindFile).
			Scan(&files, &used, &quota)
		s = StatFS{Files: uint64(files), UsedBytes: uint64(used), QuotaBytes: uint64(quota) << 30}
		return err
	})
	return s, fileErr("statfs", RootID, err)
}

func (fsys *FileSystem) openPath(ctx context.Context, req OpenPathRequest) (*Handle, Attr, error) {
	h, a, _, err := fsys.openEntry(ctx, OpenEntryRequest{OpenPathRequest: req, Kind: OpenFileKind})
	return h, a, err
}

func (fsys *FileSystem) setAttributesByPath(ctx context.Context, path string, attrs Attributes) (Attr, error) {
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("set attributes", path)
		if err != nil {
			return nil, err
		}
		e := r.e
		if e.unlinked {
			return nil, locks.ErrDeletePending
		}
		if e.kind == KindFile {
			if p, err := tx.DeletePending(e.id); err != nil {
				return nil, err
			} else if p {
				return nil, locks.ErrDeletePending
			}
		}
		e.attrs = attrs &^ AttrDirectory
		if e.kind.IsDir() {
			e.attrs |= AttrDirectory
		}
		t := ticks(q.now)
		e.change, e.modified = t, t
		if err := q.save(&e); err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return []Change{{Kind: ChangeAttr, File: e.id, Parent: e.parent, Name: e.name, Version: e.version, Filter: NotifyAttributes}}, err
	})
	return a, pathErr("attrs", path, err)
}
