package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// ErrFileGeneration: the path names another file than it did in the
// previous snapshot of a range diff (409 FileGenerationMismatch).
var ErrFileGeneration = errors.New("the file was recreated since the previous snapshot")

// ErrFileRenamed: the file was in the previous snapshot under another
// path, and the request did not ask to follow renames (409
// PreviousSnapshotNotFound, as Azure answers without
// x-ms-file-support-rename: true).
var ErrFileRenamed = errors.New("the file was renamed or moved since the previous snapshot")

// RangeDiffRequest asks which ranges of a file changed since an older
// share snapshot (List Ranges with prevsharesnapshot).
type RangeDiffRequest struct {
	Path     string      // "share/dir/file"
	Snapshot string      // the target: a snapshot, or "" for the live file
	Previous string      // the older snapshot
	Range    locks.Range // Length 0: the whole file
	LeaseID  string      // live target only
	// FollowRenames finds the file in the previous snapshot by its id
	// when it was renamed or moved since (x-ms-file-support-rename);
	// without it such a file is ErrFileRenamed.
	FollowRenames bool
}

// RangeDiff is the answer of RangeDiff.
type RangeDiff struct {
	Ranges  []Range // changed ranges that hold data now
	Cleared []Range // changed ranges that held data before and hold none now
	Attr    Attr    // the target
}

// diffSide is one version of a file as the diff compares it.
type diffSide struct {
	e      entry
	data   rangeSet
	log    storedRanges // data and write log (writelog.go)
	key    string       // blob key of its content when e.blob
	inline []byte
}

// RangeDiff reports the ranges of a file written between a previous share
// snapshot and the target (a later snapshot, or the live file), as Azure
// does: from the file's write log (writelog.go), to the byte — ranges
// rewritten with the same bytes included — plus the span between the two
// sizes; Ranges hold data now, Cleared held data before and hold none now.
// Where the log cannot answer (its history broken by a crash-adopted
// commit) changed content is found by comparing the two versions' block
// lists instead: a block is unchanged when both name the same block at the
// same place (a block id names one payload), so at block granularity
// (BlockSize), clipped to the data ranges; inline (small) files by content
// per 512 bytes. Errors:
// ErrSnapshotNotFound, ErrNotFound (the file is not in the target or in
// the previous snapshot), ErrFileGeneration, ErrFileRenamed, lease and
// lock errors.
func (fsys *FileSystem) RangeDiff(ctx context.Context, req RangeDiffRequest) (RangeDiff, error) {
	if req.Snapshot == "" {
		fsys.commitForPath(ctx, req.Path, false)
	}
	var cur, prev diffSide
	var res RangeDiff
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		share, _, _ := strings.Cut(req.Path, "/")
		pv, proot, err := q.snapshot(share, req.Previous)
		if err != nil {
			return err
		}
		if req.Snapshot != "" {
			v, root, err := q.snapshot(share, req.Snapshot)
			if err != nil {
				return err
			}
			e, p, err := v.resolve(root, req.Path)
			if err != nil {
				return err
			}
			if cur, err = v.side(e); err != nil {
				return err
			}
			res.Attr = v.attr(e, p)
		} else {
			r, err := q.checkedFile(tx, req.Path, locks.OpListRanges, req.LeaseID, locks.Range{})
			if err != nil {
				return err
			}
			cur = diffSide{e: r.e, key: blobKey(r.e.id)}
			if cur.log, err = q.storedRanges(r.e.id); err != nil {
				return err
			}
			cur.data = cur.log.data
			if !r.e.blob {
				c, err := q.content(r.e.id)
				if err != nil {
					return err
				}
				cur.inline = c.inline
			}
			res.Attr = r.attr()
		}
		if cur.e.kind.IsDir() {
			return ErrIsDir
		}
		pe, _, err := pv.resolve(proot, req.Path)
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrParentNotFound) {
			return err
		}
		if err != nil || pe.id != cur.e.id {
			// The path is new or names another file: was this file
			// elsewhere in the previous snapshot (renamed or moved)?
			was, gerr := pv.get(cur.e.id)
			switch {
			case gerr == nil && was.kind == cur.e.kind && req.FollowRenames:
				pe = was
			case gerr == nil && was.kind == cur.e.kind:
				return ErrFileRenamed
			case !errors.Is(gerr, ErrNotFound):
				return gerr
			case err != nil:
				return err
			default:
				return ErrFileGeneration
			}
		}
		prev, err = pv.side(pe)
		return err
	})
	if err != nil {
		return RangeDiff{}, pathErr("range diff", req.Path, err)
	}
	changed, err := fsys.diffChanges(ctx, cur, prev)
	if err != nil {
		return RangeDiff{}, pathErr("range diff", req.Path, err)
	}
	lo, hi := int64(0), cur.e.size
	if req.Range.Length > 0 {
		lo = int64(min(req.Range.Offset, 1<<62))
		if e := req.Range.Offset + req.Range.Length; e > req.Range.Offset && e < uint64(hi) {
			hi = int64(e)
		}
	}
	for _, c := range changed {
		for _, d := range cur.data {
			if s, e := max(c.lo, d.lo, lo), min(c.hi, d.hi, hi); s < e {
				res.Ranges = append(res.Ranges, Range{Start: s, End: e - 1})
			}
		}
		// Cleared: held data before, holds none now.
		was := rangeSet(nil)
		for _, d := range prev.data {
			if s, e := max(c.lo, d.lo, lo), min(c.hi, d.hi, hi); s < e {
				was = was.add(s, e)
			}
		}
		for _, d := range cur.data {
			was = was.sub(d.lo, d.hi)
		}
		for _, w := range was {
			res.Cleared = append(res.Cleared, Range{Start: w.lo, End: w.hi - 1})
		}
	}
	return res, nil
}

// side reads one version of a file in a snapshot.
func (v snapView) side(e entry) (diffSide, error) {
	s := diffSide{e: e, key: snapKey(v.share, v.name, e.id)}
	var enc string
	err := v.q.queryRow(`SELECT ranges, inline FROM ns_snap_entries WHERE share = ? AND snapshot = ? AND id = ?`,
		int64(v.share), v.name, int64(e.id)).Scan(&enc, &s.inline)
	if err != nil {
		return s, err
	}
	s.log, err = decodeStored(enc)
	s.data = s.log.data
	return s, err
}

// diffChanges is where a range diff looks: the ranges the write log says
// were written since prev, or (without a usable log) where content
// differs.
func (fsys *FileSystem) diffChanges(ctx context.Context, cur, prev diffSide) (rangeSet, error) {
	var w rangeSet
	switch {
	case cur.log.logID != "" && cur.log.logID == prev.log.logID:
		w = cur.log.since(prev.log.n)
	case cur.log.logID != "" && prev.log.logID == "" && len(prev.data) == 0:
		// Nothing was written before prev: the whole log is since.
		w = cur.log.since(0)
	default:
		return fsys.changedRanges(ctx, cur, prev)
	}
	if lo, hi := min(cur.e.size, prev.e.size), max(cur.e.size, prev.e.size); lo < hi {
		w = w.add(lo, hi)
	}
	return w, nil
}

// changedRanges is where the content of two versions may differ, up to
// the larger size.
func (fsys *FileSystem) changedRanges(ctx context.Context, cur, prev diffSide) (rangeSet, error) {
	end := max(cur.e.size, prev.e.size)
	var out rangeSet
	if !cur.e.blob && !prev.e.blob {
		const chunk = clearAlign
		for off := int64(0); off < end; off += chunk {
			if !bytes.Equal(window(cur.inline, off, chunk, cur.e.size), window(prev.inline, off, chunk, prev.e.size)) {
				out = out.add(off, min(off+chunk, end))
			}
		}
		return out, nil
	}
	if cur.e.blob != prev.e.blob {
		return out.add(0, end), nil
	}
	cb, err := fsys.blocksOf(ctx, cur.key)
	if err != nil {
		return nil, err
	}
	pb, err := fsys.blocksOf(ctx, prev.key)
	if err != nil {
		return nil, err
	}
	// Blocks sit at fixed offsets (block i at i*BlockSize; all but the
	// last are full), so the lists compare index by index.
	var blobEnd int64
	for i := 0; i < max(len(cb), len(pb)); i++ {
		var size int64
		if i < len(cb) {
			size = cb[i].Size
		}
		if i < len(pb) {
			size = max(size, pb[i].Size)
		}
		off := int64(i) * BlockSize
		if i >= len(cb) || i >= len(pb) || cb[i].ID != pb[i].ID {
			out = out.add(off, off+size)
		}
		blobEnd = max(blobEnd, off+size)
	}
	// Past both blobs both read zeros, except where one version's size
	// ends and the other's goes on (a resize): that span changed.
	if lo, hi := max(min(cur.e.size, prev.e.size), blobEnd), end; lo < hi {
		out = out.add(lo, hi)
	}
	return out, nil
}

// blocksOf is a blob's block list (none when it has no blob).
func (fsys *FileSystem) blocksOf(ctx context.Context, key string) ([]blobstore.Block, error) {
	bs, _, err := fsys.store.Blocks(ctx, key)
	if errors.Is(err, blobstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blocks of %s: %w", key, err)
	}
	return bs, nil
}

// window is content[off, off+n) of a file of size bytes whose data is
// content (zeros past it), cut at size.
func window(content []byte, off, n, size int64) []byte {
	end := min(off+n, size)
	if end <= off {
		return nil
	}
	out := make([]byte, end-off)
	if off < int64(len(content)) {
		copy(out, content[off:min(end, int64(len(content)))])
	}
	return out
}

// SnapshotListRanges is ListRanges of a file in a share snapshot.
func (fsys *FileSystem) SnapshotListRanges(ctx context.Context, snapshot, path string, rg locks.Range) ([]Range, Attr, error) {
	var side diffSide
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
		if e.kind.IsDir() {
			return ErrIsDir
		}
		side, err = v.side(e)
		a = v.attr(e, p)
		return err
	})
	if err != nil {
		return nil, Attr{}, pathErr("list ranges in snapshot "+snapshot, path, err)
	}
	lo, hi := int64(0), a.Size
	if rg.Length > 0 {
		lo = int64(min(rg.Offset, 1<<62))
		if e := rg.Offset + rg.Length; e > rg.Offset && e < uint64(hi) {
			hi = int64(e)
		}
	}
	var out []Range
	for _, d := range side.data {
		if s, e := max(d.lo, lo), min(d.hi, hi); s < e {
			out = append(out, Range{Start: s, End: e - 1})
		}
	}
	return out, a, nil
}
