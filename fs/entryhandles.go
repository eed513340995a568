package fs

import (
	"context"
	"errors"
	"fmt"

	"github.com/blobshare/blobshare/locks"
)

// This file holds the handle model for front ends that work through
// handles on files and directories alike (an SMB server): opening either
// kind by path with a create disposition, renaming through a handle, and
// listing a directory with attributes. The path-based file open
// (OpenByPath) is the same code with Kind OpenFileKind.

// OpenKind restricts what OpenEntry may open or create.
type OpenKind int

const (
	OpenAnyKind       OpenKind = iota // a file or a directory; creates a file
	OpenFileKind                      // a file only (a directory is ErrIsDir)
	OpenDirectoryKind                 // a directory only (a file is ErrNotDir); creates a directory
)

// OpenAction says what OpenEntry did to the entry.
type OpenAction int

const (
	ActionOpened      OpenAction = iota + 1 // an existing entry was opened
	ActionCreated                           // the entry was created
	ActionOverwritten                       // an existing file was truncated (overwrite dispositions)
	ActionSuperseded                        // an existing file was replaced (DispositionSupersede)
)

// OpenEntryRequest opens a file or a directory by path.
type OpenEntryRequest struct {
	OpenPathRequest
	Kind OpenKind
	// EAs are the extended attributes of a created entry; an overwritten
	// or superseded file's are replaced by them when any are given (as
	// SetattrRequest.EAs applies them to none).
	EAs []EA
	// AllocationSize is the allocation size of a created, overwritten or
	// superseded file (MS-FSA 2.1.5.1.2.1, 2.1.5.1.2.2; rounded up to
	// ClusterSize); an opened file keeps its own. Negative is
	// ErrInvalidRange.
	AllocationSize int64
}

// OpenEntry opens (or creates, by Disposition) a file or a directory as a
// handle in the lock table; the share itself opens as a directory
// ("share"). Directories take the share-mode check like files; the
// overwrite dispositions apply to files only (ErrIsDir on a directory,
// ErrInvalidArg with OpenDirectoryKind). Errors are OpenByPath's plus
// ErrNotDir.
func (fsys *FileSystem) OpenEntry(ctx context.Context, req OpenEntryRequest) (*Handle, Attr, OpenAction, error) {
	fsys.commitForPath(ctx, req.Path, false)
	return fsys.openEntry(ctx, req)
}

func (fsys *FileSystem) openEntry(ctx context.Context, req OpenEntryRequest) (*Handle, Attr, OpenAction, error) {
	disp := req.Disposition
	if disp == 0 {
		disp = DispositionOpen
	}
	overwriting := disp == DispositionOverwrite || disp == DispositionOverwriteIf || disp == DispositionSupersede
	if req.Kind == OpenDirectoryKind && overwriting {
		return nil, Attr{}, 0, pathErr("open", req.Path, ErrInvalidArg)
	}
	if req.AllocationSize < 0 {
		return nil, Attr{}, 0, pathErr("open", req.Path, ErrInvalidRange)
	}
	var lh locks.Handle
	var a Attr
	var action OpenAction
	var truncate bool
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.resolveLocked("open", req.Path)
		if err != nil {
			return nil, err
		}
		var chs []Change
		e := r.e
		truncate, action = false, ActionOpened
		overwrite := false
		switch {
		case r.found && e.kind.IsDir():
			if req.Kind == OpenFileKind || overwriting {
				return nil, ErrIsDir
			}
			if e.unlinked {
				return nil, locks.ErrDeletePending
			}
			if disp == DispositionCreate {
				return nil, ErrExist
			}
		case r.found:
			if req.Kind == OpenDirectoryKind {
				return nil, ErrNotDir
			}
			if e.unlinked {
				return nil, locks.ErrDeletePending
			}
			switch disp {
			case DispositionCreate:
				if p, err := tx.DeletePending(e.id); err != nil {
					return nil, err
				} else if p {
					return nil, locks.ErrDeletePending
				}
				return nil, ErrExist
			case DispositionOverwrite, DispositionOverwriteIf, DispositionSupersede:
				overwrite, truncate = true, e.size != 0
				action = ActionOverwritten
				if disp == DispositionSupersede {
					action = ActionSuperseded
				}
				// The file starts over with the allocation the open asks
				// (none: its truncation frees what it had).
				alloc := blockAlign(req.AllocationSize)
				if len(req.EAs) > 0 || e.alloc != alloc {
					if len(req.EAs) > 0 {
						if e.eas, err = mergeEAs(nil, req.EAs); err != nil {
							return nil, err
						}
					}
					e.alloc = alloc
					if err := q.save(&e); err != nil {
						return nil, err
					}
				}
			}
		default:
			switch disp {
			case DispositionOpen, DispositionOverwrite:
				return nil, ErrNotFound
			}
			if r.parent.unlinked {
				return nil, ErrParentNotFound
			}
			ne := q.newFileEntry(r.parent.id, r.name, req.Attributes)
			if req.Kind == OpenDirectoryKind {
				if err := ValidateName(r.name); err != nil {
					return nil, err
				}
				ne = q.newDirEntry(r.parent.id, r.name, KindDirectory)
				if extra := req.Attributes &^ (AttrDirectory | AttrArchive); extra != 0 {
					ne.attrs |= extra
				}
			}
			if ne.eas, err = mergeEAs(nil, req.EAs); err != nil {
				return nil, err
			}
			if req.Kind != OpenDirectoryKind {
				ne.alloc = blockAlign(req.AllocationSize)
			}
			if e, err = q.insert(ne); err != nil {
				return nil, err
			}
			if err := q.touchDir(r.parent.id); err != nil {
				return nil, err
			}
			action = ActionCreated
			chs = append(chs, Change{Kind: ChangeCreate, File: e.id, Parent: e.parent, Name: e.name, Version: e.version})
		}
		open := req.Open.request(e.id)
		open.Created = action == ActionCreated
		open.ReadOnly = action != ActionCreated && e.kind == KindFile && e.readOnly()
		open.Overwrite = overwrite
		if lh, err = tx.OpenHandle(open); err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return chs, err
	})
	if err != nil {
		return nil, Attr{}, 0, pathErr("open", req.Path, err)
	}
	h := fsys.newHandle(lh, req.Open)
	if truncate {
		zero := int64(0)
		if a, err = fsys.setattr(ctx, a.ID, SetattrRequest{Size: &zero, Handle: h}); err != nil {
			_ = h.Close(ctx)
			return nil, Attr{}, 0, pathErr("open", req.Path, err)
		}
	}
	return h, a, action, nil
}

// Rename moves the handle's file or directory to dest ("share/dir/name",
// in the same share), as a rename through an open handle does (MS-FSA
// 2.1.5.14.11): the handle must have Delete access, which its open already
// had checked against every other handle, so the source is not checked
// again, but a directory with a handle open below it does not move
// (locks.ErrAccessDenied), and nothing moves out of a directory open with
// Delete access (locks.ErrSharingViolation). An existing destination is replaced only with
// replace and only if it is a file (ErrExist otherwise); a replaced file
// is checked like a REST rename destination (locks.OpRenameReplace).
func (h *Handle) Rename(ctx context.Context, dest string, replace bool) (Attr, error) {
	if err := h.checkOpen("rename"); err != nil {
		return Attr{}, err
	}
	if h.h.access&locks.AccessDelete == 0 {
		return Attr{}, h.op("rename", locks.ErrAccessDenied)
	}
	fsys := h.h.fsys
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		if err := tx.HandleOpen(h.h.id); err != nil {
			return nil, err
		}
		src, err := q.entryLocked("rename", h.h.file)
		if err != nil {
			return nil, err
		}
		dr, err := q.resolveLocked("rename", dest)
		if err != nil {
			return nil, err
		}
		if dr.name == "" {
			return nil, ErrExist
		}
		if dr.found && dr.e.id != src.id && (dr.e.kind.IsDir() || !replace) {
			return nil, ErrExist
		}
		if src.kind.IsDir() {
			// A directory with anything open below it does not move
			// (MS-FSA 2.1.5.14.11; Windows and smbd answer
			// STATUS_ACCESS_DENIED).
			if err := q.noOpensBelow(tx, src.id); err != nil {
				return nil, err
			}
		}
		// Nor does anything out of a directory open with Delete access:
		// the rename would take a name from under that open (Windows and
		// smbd answer STATUS_SHARING_VIOLATION; smbtorture's
		// rename.*delete_access tests).
		parentHandles, err := tx.Handles(src.parent)
		if err != nil {
			return nil, err
		}
		for _, ph := range parentHandles {
			if ph.Access&locks.AccessDelete != 0 {
				return nil, fmt.Errorf("parent directory %d is open with delete access by handle %d: %w", src.parent, ph.ID, locks.ErrSharingViolation)
			}
		}
		chs, err := q.move(tx, src, dr.parent.id, dr.name, moveOpts{noReplace: !replace, byHandle: true})
		if err != nil {
			return nil, err
		}
		e, err := q.get(src.id)
		if err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return chs, err
	})
	fsys.kickGC()
	return a, pathErr("rename", dest, err)
}

// noOpensBelow fails with locks.ErrAccessDenied if a handle is open on
// an entry below directory dir.
func (q *q) noOpensBelow(tx *locks.Tx, dir FileID) error {
	all, err := tx.AllHandles()
	if err != nil {
		return err
	}
	for _, h := range all {
		if h.File == dir {
			continue
		}
		in, err := q.isAncestor(dir, h.File)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if in {
			return fmt.Errorf("directory %d has handle %d open below it: %w", dir, h.ID, locks.ErrAccessDenied)
		}
	}
	return nil
}

// ListEntries lists every entry of directory dir with its attributes, in
// case-insensitive name order, leaving out unlinked and delete-pending
// files (as List Directories and Files does). Attr.Path is left empty.
// Errors: ErrNotFound, ErrNotDir.
func (fsys *FileSystem) ListEntries(ctx context.Context, dir FileID) ([]Attr, error) {
	fsys.commitFor(ctx, dir, true)
	var out []Attr
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		d, err := q.get(dir)
		if err != nil {
			return err
		}
		if !d.kind.IsDir() {
			return ErrNotDir
		}
		rows, err := q.query(`SELECT `+entryCols+` FROM ns_entries WHERE parent = ? AND unlinked = 0 ORDER BY key`, int64(dir))
		if err != nil {
			return err
		}
		var es []entry
		for rows.Next() {
			e, err := scanEntry(rows)
			if err != nil {
				rows.Close()
				return err
			}
			es = append(es, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		out = out[:0]
		for _, e := range es {
			if e.kind == KindFile {
				pending, err := tx.DeletePending(e.id)
				if err != nil {
					return err
				}
				if pending {
					continue
				}
			}
			out = append(out, e.attr(""))
		}
		return nil
	})
	return out, fileErr("list", dir, err)
}
