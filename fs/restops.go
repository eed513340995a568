package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/locks"
)

// applyProps sets the SMB properties that are given (nil: keep).
func (e *entry) applyProps(p SMBProperties) {
	if p.Attributes != nil {
		e.attrs = *p.Attributes &^ AttrDirectory
		if e.kind.IsDir() {
			e.attrs |= AttrDirectory
		}
	}
	if p.Created != nil {
		e.created = ticks(*p.Created)
	}
	if p.LastWrite != nil {
		e.write = ticks(*p.LastWrite)
	}
	if p.Change != nil {
		e.change = ticks(*p.Change)
	}
	if p.PermissionKey != nil {
		e.permKey = *p.PermissionKey
		if e.permKey == defaultPermissionKey {
			e.permKey = ""
		}
	}
}

// checkedFile resolves path to a file and asks locks about op.
func (q *q) checkedFile(tx *locks.Tx, path string, op locks.Op, leaseID string, r locks.Range) (resolved, error) {
	res, err := q.mustResolve(path)
	if err != nil {
		return res, err
	}
	_, err = q.checkResolved(tx, res, op, leaseID, r)
	return res, err
}

// checkResolved asks locks about op on the file res found, and returns the
// file's lease status read with the same check.
func (q *q) checkResolved(tx *locks.Tx, res resolved, op locks.Op, leaseID string, r locks.Range) (locks.LeaseInfo, error) {
	if res.e.kind.IsDir() {
		return locks.LeaseInfo{}, ErrIsDir
	}
	f, err := q.facts(res.e)
	if err != nil {
		return locks.LeaseInfo{}, err
	}
	return tx.CheckRESTLease(locks.RESTRequest{File: res.e.id, Op: op, LeaseID: leaseID, Range: r, Facts: f})
}

func (fsys *FileSystem) createDirectory(ctx context.Context, req CreateDirectoryRequest) (Attr, error) {
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.resolveLocked("create directory", req.Path)
		if err != nil {
			return nil, err
		}
		if r.name == "" || (r.found && !r.e.unlinked) {
			return nil, ErrExist
		}
		e := q.newDirEntry(r.parent.id, r.name, KindDirectory)
		e.applyProps(req.Props)
		e.metadata = req.Metadata
		if e, err = q.insert(e); err != nil {
			return nil, err
		}
		if err := q.touchDir(r.parent.id); err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return []Change{{Kind: ChangeCreate, File: e.id, Parent: e.parent, Name: e.name, Version: e.version}}, err
	})
	return a, pathErr("create directory", req.Path, err)
}

func (fsys *FileSystem) setProperties(ctx context.Context, req SetPropertiesRequest) (Attr, error) {
	apply := func(e *entry) {
		e.applyProps(req.Props)
		if req.Props.Change == nil {
			e.change = e.modified
		}
		if req.Content != nil && e.kind == KindFile {
			e.content = *req.Content
		}
		e.copy = nil // Azure drops x-ms-copy-* once properties are set
	}
	if req.Size != nil {
		if *req.Size < 0 {
			return Attr{}, pathErr("set properties", req.Path, ErrInvalidRange)
		}
		return retryMoved("set properties", req.Path, func() (Attr, bool, error) { return fsys.resizeOnce(ctx, req, apply) })
	}
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("set properties", req.Path)
		if err != nil {
			return nil, err
		}
		if r.e.kind == KindFile {
			if _, err := q.checkResolved(tx, r, locks.OpSetProperties, req.LeaseID, locks.Range{}); err != nil {
				return nil, err
			}
		}
		e := r.e
		e.modified = ticks(q.now)
		apply(&e)
		if err := q.save(&e); err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return []Change{{Kind: ChangeAttr, File: e.id, Parent: e.parent, Name: e.name, Version: e.version, Filter: req.Props.notifyFilter()}}, err
	})
	return a, pathErr("set properties", req.Path, err)
}

// resizeOnce is one attempt of a Set File Properties that changes the size:
// lookup and check in one transaction, the resize by id in the commit;
// byID reports that the error came from the step acting by id.
func (fsys *FileSystem) resizeOnce(ctx context.Context, req SetPropertiesRequest, apply func(e *entry)) (Attr, bool, error) {
	var id FileID
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.checkedFile(tx, req.Path, locks.OpSetProperties, req.LeaseID, locks.Range{})
		id = r.e.id
		return err
	})
	if err != nil {
		return Attr{}, false, pathErr("set properties", req.Path, err)
	}
	if err := fsys.flushFile(ctx, id, nil); err != nil {
		return Attr{}, true, pathErr("set properties", req.Path, err)
	}
	e, err := fsys.commit(ctx, id, commitOp{
		op:       "resize",
		truncate: req.Size,
		check: func(tx *locks.Tx, q *q, e entry) error {
			if err := q.stillNamed(req.Path, id); err != nil {
				return err
			}
			f, err := q.facts(e)
			if err != nil {
				return err
			}
			if err := tx.CheckREST(locks.RESTRequest{File: id, Op: locks.OpSetProperties, LeaseID: req.LeaseID, Facts: f}); err != nil {
				return err
			}
			return q.checkQuota(e, *req.Size)
		},
		touch: func(_ *q, e *entry) { apply(e) },
	})
	if err != nil {
		return Attr{}, true, pathErr("set properties", req.Path, err)
	}
	return e.attr(req.Path), false, nil
}

func (fsys *FileSystem) setMetadata(ctx context.Context, path string, md map[string]string, leaseID string) (Attr, error) {
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("set metadata", path)
		if err != nil {
			return nil, err
		}
		if r.e.kind == KindFile {
			if _, err := q.checkResolved(tx, r, locks.OpSetMetadata, leaseID, locks.Range{}); err != nil {
				return nil, err
			}
		}
		e := r.e
		e.metadata = md
		t := ticks(q.now)
		e.modified, e.change = t, t
		if err := q.save(&e); err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		// Metadata has no SMB counterpart and no completion filter bit:
		// CHANGE_NOTIFY hears nothing of it.
		return []Change{{Kind: ChangeAttr, File: e.id, Parent: e.parent, Name: e.name, Version: e.version, Filter: notifyNothing}}, err
	})
	return a, pathErr("set metadata", path, err)
}

func (fsys *FileSystem) deleteDirectory(ctx context.Context, path string) error {
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("delete directory", path)
		if err != nil {
			return nil, err
		}
		switch {
		case r.e.kind == KindShare:
			return nil, ErrInvalidArg
		case !r.e.kind.IsDir():
			return nil, ErrNotDir
		}
		if ne, err := q.hasChildren(r.e.id); err != nil {
			return nil, err
		} else if ne {
			return nil, ErrNotEmpty
		}
		if err := q.removeTree(tx, r.e); err != nil {
			return nil, err
		}
		if err := q.touchDir(r.parent.id); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeRemove, File: r.e.id, Parent: r.e.parent, Name: r.e.name}}, nil
	})
	return pathErr("delete directory", path, err)
}

func (fsys *FileSystem) listDirectory(ctx context.Context, path string, req ListRequest) (ListResult, error) {
	var res ListResult
	max := pageSize(req.MaxResults)
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.mustResolve(path)
		if err != nil {
			return err
		}
		if !r.e.kind.IsDir() {
			return ErrNotDir
		}
		if res.Dir, err = q.attrOf(r.e); err != nil {
			return err
		}
		res.Entries, res.NextMarker = nil, ""
		prefix := FoldName(req.Prefix)
		from := req.Marker
		for {
			var batch []entry
			rows, err := q.query(`SELECT `+entryCols+` FROM ns_entries WHERE parent = ? AND unlinked = 0 AND key >= ? AND substr(key, 1, length(?)) = ? ORDER BY key LIMIT ?`,
				int64(r.e.id), from, prefix, prefix, max+1)
			if err != nil {
				return err
			}
			for rows.Next() {
				e, err := scanEntry(rows)
				if err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, e)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, e := range batch {
				if len(res.Entries) == max {
					res.NextMarker = e.key
					return nil
				}
				if e.kind == KindFile {
					pending, err := tx.DeletePending(e.id)
					if err != nil {
						return err
					}
					if pending {
						continue
					}
				}
				res.Entries = append(res.Entries, e.attr(joinPath(res.Dir.Path, e.name)))
			}
			if len(batch) <= max {
				return nil
			}
			from = batch[len(batch)-1].key
		}
	})
	return res, pathErr("list", path, err)
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// errPathMoved: the path no longer names the file an earlier transaction of
// the same call found there (a concurrent rename, delete or re-create in
// between). Calls that look up in one transaction and act by id in another
// check it in the acting transaction and start over.
var errPathMoved = errors.New("path no longer names the file found")

// maxLookupRetries bounds the start-overs of one call after errPathMoved;
// each one means another request committed in between, so a few suffice.
const maxLookupRetries = 50

// stillNamed fails with errPathMoved unless path resolves (SMB view) to
// file id.
func (q *q) stillNamed(path string, id FileID) error {
	r, err := q.resolve(path)
	if err != nil {
		return err
	}
	if !r.found || r.e.id != id {
		return errPathMoved
	}
	return nil
}

// retryMoved runs call again while it fails because the file it found
// moved or vanished before it acted (errPathMoved, or ErrNotFound from the
// by-id step: byID says which), so a race with a rename or delete of the
// same path gives the answer of a call made just after it, never a
// spurious 404. A call that loses maxLookupRetries races in a row (the
// path churns without pause) gets ErrSharingViolation: the path is busy.
func retryMoved[T any](op, path string, call func() (T, bool, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, byID, err := call()
		if !errors.Is(err, errPathMoved) && !(byID && errors.Is(err, ErrNotFound)) {
			return v, err
		}
		if attempt >= maxLookupRetries {
			return v, &Error{Op: op, Path: path, Err: fmt.Errorf("%w: lost %d races with renames and deletes of the path (last: %v)",
				locks.ErrSharingViolation, attempt+1, err)}
		}
	}
}

// fileToWrite resolves the path of an operation that creates the file if
// it is missing (Create File, Copy File's destination): r.found with the
// file, or the parent and name to create it in. A directory or share root
// is ErrIsDir; a lease id for a missing file is refused as Azure does.
func (q *q) fileToWrite(path, leaseID string) (resolved, error) {
	r, err := q.resolveLocked("create file", path)
	switch {
	case err != nil:
		return resolved{}, err
	case r.name == "" || r.found && r.e.kind.IsDir():
		return resolved{}, ErrIsDir
	case !r.found && leaseID != "":
		return resolved{}, &locks.LeaseError{Code: locks.LeaseNotPresentWithFileOperation}
	}
	return r, nil
}

// insertFile adds the new file e to directory parent and returns it with
// the change to notify.
func (q *q) insertFile(parent, e entry) (entry, []Change, error) {
	e, err := q.insert(e)
	if err != nil {
		return entry{}, nil, err
	}
	if err := q.touchDir(parent.id); err != nil {
		return entry{}, nil, err
	}
	return e, []Change{{Kind: ChangeCreate, File: e.id, Parent: e.parent, Name: e.name, Version: e.version}}, nil
}

func (fsys *FileSystem) createFile(ctx context.Context, req CreateFileRequest) (Attr, error) {
	if req.Size < 0 {
		return Attr{}, pathErr("create file", req.Path, ErrInvalidRange)
	}
	return retryMoved("create file", req.Path, func() (Attr, bool, error) { return fsys.createFileOnce(ctx, req) })
}

// createFileOnce is one attempt of createFile; byID reports that the error
// came from the step that acts on the file found by the lookup.
func (fsys *FileSystem) createFileOnce(ctx context.Context, req CreateFileRequest) (Attr, bool, error) {
	apply := func(q *q, e *entry) {
		t := ticks(q.now)
		e.created, e.write, e.change, e.modified = t, t, t, t
		if e.attrs == 0 || req.Props.Attributes == nil {
			e.attrs = AttrArchive
		}
		e.applyProps(req.Props)
		e.content = req.Content
		e.metadata = req.Metadata
		e.copy = nil // a recreated file is no copy destination any more
		e.alloc = 0  // nor keeps the allocation an SMB client set (alloc.go)
	}
	var a Attr
	var existing FileID
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		existing = 0
		r, err := q.fileToWrite(req.Path, req.LeaseID)
		if err != nil || r.found {
			existing = r.e.id
			return nil, err
		}
		if err := q.checkShareRoom(r.share.id, req.Size); err != nil {
			return nil, err
		}
		e := q.newFileEntry(r.parent.id, r.name, 0)
		apply(q, &e)
		e.size = req.Size
		e, chs, err := q.insertFile(r.parent, e)
		if err != nil {
			return nil, err
		}
		a, err = q.attrOf(e)
		return chs, err
	})
	if err != nil || existing == 0 {
		return a, false, pathErr("create file", req.Path, err)
	}
	size := req.Size
	e, err := fsys.commit(ctx, existing, commitOp{
		op:       "create",
		reset:    true,
		truncate: &size,
		check: func(tx *locks.Tx, q *q, e entry) error {
			// The path must still name the file found above: otherwise
			// a rename or delete came in between and the call starts over.
			if err := q.stillNamed(req.Path, e.id); err != nil {
				return err
			}
			f, err := q.facts(e)
			if err != nil {
				return err
			}
			if err := tx.CheckREST(locks.RESTRequest{File: e.id, Op: locks.OpCreateOverwrite, LeaseID: req.LeaseID, Facts: f}); err != nil {
				return err
			}
			return q.checkQuota(e, size)
		},
		touch: func(q *q, e *entry) {
			apply(q, e)
		},
	})
	if err != nil {
		return Attr{}, true, pathErr("create file", req.Path, err)
	}
	return e.attr(req.Path), false, nil
}

// maxPutRange is the largest Put Range update (4 MiB).
const maxPutRange = 4 << 20

func (fsys *FileSystem) putRange(ctx context.Context, req PutRangeRequest) (Attr, error) {
	if req.Offset < 0 || req.Length <= 0 || req.Offset+req.Length < req.Offset {
		return Attr{}, pathErr("put range", req.Path, ErrInvalidRange)
	}
	if req.Body != nil && req.Length > maxPutRange {
		return Attr{}, pathErr("put range", req.Path, fmt.Errorf("%w: %d bytes in one update", ErrInvalidArg, req.Length))
	}
	var id FileID
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.mustResolve(req.Path)
		if err != nil {
			return err
		}
		if r.e.kind.IsDir() {
			return ErrIsDir
		}
		id = r.e.id
		return nil
	})
	if err != nil {
		return Attr{}, pathErr("put range", req.Path, err)
	}
	s := newStage(fsys, id)
	s.durable = true // acknowledged when committed: sync the data before the commit lock
	defer s.reset()
	mark := fsys.markStaging(id) // a group commit meanwhile waits for it (groupcommit.go)
	defer mark.release()
	if req.Body == nil {
		err = s.clearRange(ctx, req.Offset, req.Length)
	} else {
		err = stageFrom(ctx, s, req.Body, req.Offset, req.Length)
	}
	if err != nil {
		return Attr{}, pathErr("put range", req.Path, err)
	}
	a, err := fsys.commitRange(ctx, "put range", req.Path, id, s, req.Offset, req.Length, req.LeaseID, req.PreserveLastWrite, mark)
	return fsys.durable(ctx, "put range", req.Path, a, err)
}

// durable returns a REST write's outcome once it is durable: the blob's
// new block list is (CommitBlocks), the namespace row naming the new
// version is once the lock table's log is synced, one fsync for every
// write committed meanwhile (internal/walsync).
func (fsys *FileSystem) durable(ctx context.Context, op, path string, a Attr, err error) (Attr, error) {
	if err != nil {
		return Attr{}, err
	}
	if err := fsys.wal.Sync(ctx); err != nil {
		return Attr{}, pathErr(op, path, err)
	}
	return a, nil
}

// stageFrom copies exactly n bytes of r into s at off.
func stageFrom(ctx context.Context, s *stage, r io.Reader, off, n int64) error {
	buf := s.fsys.getBuf()
	defer s.fsys.putBuf(buf)
	for n > 0 {
		// Align chunks to blocks so whole blocks are staged directly.
		c := min(n, BlockSize-off%BlockSize)
		if _, err := io.ReadFull(r, buf[:c]); err != nil {
			return fmt.Errorf("%w: body shorter than the range: %v", ErrInvalidArg, err)
		}
		if err := s.write(ctx, buf[:c], off); err != nil {
			return err
		}
		off, n = off+c, n-c
	}
	return nil
}

// commitRange commits a staged REST write of [off, off+n) to file id.
// Writes of whole blocks that do not preserve the write time are
// committed in groups (commitRanges); others alone.
// mark, when not nil, counts the write as staging on the file until it
// joins the group queue.
func (fsys *FileSystem) commitRange(ctx context.Context, op, path string, id FileID, s *stage, off, n int64, leaseID string, preserve bool, mark *stagingMark) (Attr, error) {
	if !preserve && s.wholeBlocksOnly() {
		return fsys.commitRanges(ctx, op, path, id, &rangeWrite{stage: s, off: off, n: n, leaseID: leaseID, mark: mark})
	}
	var prevWrite int64
	e, err := fsys.commit(ctx, id, commitOp{
		op:    op,
		stage: s,
		check: func(tx *locks.Tx, q *q, e entry) error {
			prevWrite = e.write
			return checkPutRange(tx, q, e, id, off, n, leaseID)
		},
		touch: func(q *q, e *entry) {
			if preserve {
				e.write = prevWrite
			}
		},
	})
	if err != nil {
		return Attr{}, pathErr(op, path, err)
	}
	return e.attr(path), nil
}

// checkPutRange is a REST write's check in the transaction that takes the
// commit lock: the range lies within the file, and the lock table allows
// the write (leases, byte-range locks, share modes).
func checkPutRange(tx *locks.Tx, q *q, e entry, id FileID, off, n int64, leaseID string) error {
	if off+n > e.size {
		return fmt.Errorf("%w: range ends at %d, file size %d", ErrInvalidRange, off+n, e.size)
	}
	f, err := q.facts(e)
	if err != nil {
		return err
	}
	return tx.CheckREST(locks.RESTRequest{File: id, Op: locks.OpPutRange, LeaseID: leaseID,
		Range: locks.Range{Offset: uint64(off), Length: uint64(n)}, Facts: f})
}

func (fsys *FileSystem) putRangeFrom(ctx context.Context, req PutRangeFromRequest) (Attr, error) {
	if req.Offset < 0 || req.Length <= 0 || req.SourceOffset < 0 || req.Length > maxPutRange {
		return Attr{}, pathErr("put range from URL", req.Path, ErrInvalidRange)
	}
	var src, dst FileID
	var srcSize int64
	var srcContent content
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.checkedFile(tx, req.SourcePath, locks.OpCopySource, "", locks.Range{Offset: uint64(req.SourceOffset), Length: uint64(req.Length)})
		if err != nil {
			return fmt.Errorf("source %s: %w", req.SourcePath, err)
		}
		src, srcSize = r.e.id, r.e.size
		if srcContent, err = q.content(src); err != nil {
			return err
		}
		d, err := q.mustResolve(req.Path)
		if err != nil {
			return err
		}
		if d.e.kind.IsDir() {
			return ErrIsDir
		}
		dst = d.e.id
		return nil
	})
	if err != nil {
		return Attr{}, pathErr("put range from URL", req.Path, err)
	}
	if req.SourceOffset+req.Length > srcSize {
		return Attr{}, pathErr("put range from URL", req.Path, fmt.Errorf("source %s: %w", req.SourcePath, ErrInvalidRange))
	}
	s := newStage(fsys, dst)
	s.durable = true // as Put Range
	defer s.reset()
	rd := fsys.contentReader(ctx, src, srcContent, req.SourceOffset, req.Length)
	defer rd.Close()
	var from io.Reader = rd
	if req.Verify != nil {
		from = req.Verify(rd)
	}
	if err := stageFrom(ctx, s, from, req.Offset, req.Length); err != nil {
		return Attr{}, pathErr("put range from URL", req.Path, err)
	}
	a, err := fsys.commitRange(ctx, "put range from URL", req.Path, dst, s, req.Offset, req.Length, req.LeaseID, req.PreserveLastWrite, nil)
	return fsys.durable(ctx, "put range from URL", req.Path, a, err)
}

// contentReader streams [off, off+n) of a file's content, inline or in
// its blob; zeros past the data's end.
func (fsys *FileSystem) contentReader(ctx context.Context, id FileID, c content, off, n int64) io.ReadCloser {
	if !c.blob {
		return &inlineReader{data: c.inline, off: off, left: n}
	}
	return &blobReader{fsys: fsys, ctx: ctx, key: blobKey(id), off: off, left: n}
}

// inlineReader streams inline content, zeros past its end.
type inlineReader struct {
	data      []byte
	off, left int64
}

func (r *inlineReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.left)
	copyInline(p[:k], r.data, r.off)
	r.off += k
	r.left -= k
	return int(k), nil
}

func (r *inlineReader) Close() error { return nil }

// blobReader streams [off, off+left) of a blob, zeros past its end.
type blobReader struct {
	fsys   *FileSystem
	ctx    context.Context
	key    string
	off    int64
	left   int64
	rc     io.ReadCloser
	eof    bool  // the blob ended: the rest is zeros
	winEnd int64 // end of the current ReadRange window
}

func (r *blobReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	if err := r.openWindow(); err != nil {
		return 0, err
	}
	if !r.eof {
		n, err := r.rc.Read(p)
		r.off += int64(n)
		r.left -= int64(n)
		if err == io.EOF {
			// The window ended; the blob may go on.
			r.rc.Close()
			r.rc = nil
			err = nil
			if n == 0 {
				return r.nextWindow(p)
			}
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	clear(p)
	r.left -= int64(len(p))
	r.off += int64(len(p))
	return len(p), nil
}

// nextWindow is called when a window's stream ended: if it ended short of
// the window, the blob ended (zeros from here); otherwise open the next one.
func (r *blobReader) nextWindow(p []byte) (int, error) {
	if r.winEnd > r.off {
		r.eof = true
	}
	return r.Read(p)
}

// openWindow opens the stream of the next window unless one is open or
// the blob ended.
func (r *blobReader) openWindow() error {
	if r.eof || r.rc != nil {
		return nil
	}
	rc, _, err := r.fsys.store.ReadRange(r.ctx, r.key, r.off, min(r.left, readWindow))
	switch {
	case errors.Is(err, blobstore.ErrNotFound):
		r.eof = true
	case err != nil:
		return err
	default:
		r.rc = rc
		r.winEnd = r.off + min(r.left, readWindow)
	}
	return nil
}

// WriteTo copies the rest of the range to w a window at a time, handing
// w to the blob store's stream when it can write itself out (the local
// store gives an HTTP response its block files, for sendfile), and zeros
// past the blob's end.
func (r *blobReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.left > 0 {
		if err := r.openWindow(); err != nil {
			return total, err
		}
		if r.eof {
			n, err := io.CopyN(w, zeroReader{}, r.left)
			total += n
			r.off += n
			r.left -= n
			return total, err
		}
		var n int64
		var err error
		if wt, ok := r.rc.(io.WriterTo); ok {
			n, err = wt.WriteTo(w)
		} else {
			n, err = io.Copy(w, struct{ io.Reader }{r.rc})
		}
		total += n
		r.off += n
		r.left -= n
		if err != nil {
			return total, err
		}
		r.rc.Close()
		r.rc = nil
		if r.off < r.winEnd {
			r.eof = true // the window ended short: so did the blob
		}
	}
	return total, nil
}

func (r *blobReader) Close() error {
	if r.rc != nil {
		err := r.rc.Close()
		r.rc = nil
		return err
	}
	return nil
}

func (fsys *FileSystem) getFile(ctx context.Context, req GetFileRequest) (*FileReader, error) {
	var a Attr
	var li locks.LeaseInfo
	var off, n int64
	var c content
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.mustResolve(req.Path)
		if err != nil {
			return err
		}
		if r.e.kind.IsDir() {
			return ErrIsDir
		}
		size := r.e.size
		off, n = 0, size
		rng := locks.WholeFile
		if req.Ranged {
			if req.Offset < 0 || req.Offset >= size {
				return fmt.Errorf("%w: offset %d, size %d", ErrInvalidRange, req.Offset, size)
			}
			off = req.Offset
			n = size - off
			if req.Length >= 0 && req.Length < n {
				n = req.Length
			}
			rng = locks.Range{Offset: uint64(off), Length: uint64(n)}
		}
		if _, err := q.checkedFile(tx, req.Path, locks.OpGetFile, req.LeaseID, rng); err != nil {
			return err
		}
		if li, err = tx.LeaseInfo(r.e.id); err != nil {
			return err
		}
		if c, err = q.content(r.e.id); err != nil {
			return err
		}
		a, err = q.attrOf(r.e)
		return err
	})
	if err != nil {
		return nil, pathErr("get file", req.Path, err)
	}
	rd := fsys.contentReader(ctx, a.ID, c, off, n)
	return &FileReader{ReadCloser: rd, Attr: a, Lease: li, Offset: off, Length: n}, nil
}

func (fsys *FileSystem) deleteFile(ctx context.Context, path, leaseID string) error {
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("delete file", path)
		if err != nil {
			return nil, err
		}
		if _, err := q.checkResolved(tx, r, locks.OpDelete, leaseID, locks.Range{}); err != nil {
			return nil, err
		}
		if err := q.removeFile(tx, r.e); err != nil {
			return nil, err
		}
		if err := q.touchDir(r.parent.id); err != nil {
			return nil, err
		}
		return []Change{{Kind: ChangeRemove, File: r.e.id, Parent: r.e.parent, Name: r.e.name}}, nil
	})
	if err == nil {
		fsys.kickGC()
	}
	return pathErr("delete file", path, err)
}

func (fsys *FileSystem) listRanges(ctx context.Context, path string, rg locks.Range, leaseID string) ([]Range, Attr, error) {
	var a Attr
	var rs rangeSet
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		r, err := q.checkedFile(tx, path, locks.OpListRanges, leaseID, locks.Range{})
		if err != nil {
			return err
		}
		if rs, err = q.ranges(r.e.id); err != nil {
			return err
		}
		a, err = q.attrOf(r.e)
		return err
	})
	if err != nil {
		return nil, Attr{}, pathErr("list ranges", path, err)
	}
	lo, hi := int64(0), a.Size // [lo, hi)
	if rg.Length > 0 {
		lo = int64(min(rg.Offset, 1<<62))
		if e := rg.Offset + rg.Length; e > rg.Offset && e < uint64(hi) {
			hi = int64(e)
		}
	}
	var out []Range
	for _, r := range rs {
		s, e := max(r.lo, lo), min(r.hi, hi)
		if s < e {
			out = append(out, Range{Start: s, End: e - 1})
		}
	}
	return out, a, nil
}

// ranges returns a file's stored data ranges.
func (q *q) ranges(id FileID) (rangeSet, error) {
	var enc string
	if err := q.queryRow(`SELECT ranges FROM ns_entries WHERE id = ?`, int64(id)).Scan(&enc); err != nil {
		return nil, err
	}
	return decodeRanges(enc)
}

func (fsys *FileSystem) copyFile(ctx context.Context, req CopyFileRequest) (Attr, error) {
	return retryMoved("copy", req.Dest, func() (Attr, bool, error) { return fsys.copyFileOnce(ctx, req) })
}

// copyFileOnce is one attempt of copyFile; byID reports that the error came
// from the commit to the destination found (or created) by id.
func (fsys *FileSystem) copyFileOnce(ctx context.Context, req CopyFileRequest) (Attr, bool, error) {
	var cs copySource
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) (err error) {
		cs, err = q.copySource(tx, req.Source, req.SourceSnapshot)
		return err
	})
	if err != nil {
		return Attr{}, false, pathErr("copy", req.Dest, err)
	}
	src, sc, srcRanges := cs.e, cs.c, cs.ranges
	if req.SourceSnapshot == "" && strings.EqualFold(req.Source, req.Dest) {
		return Attr{}, false, pathErr("copy", req.Dest, fmt.Errorf("%w: source and destination are the same file", ErrInvalidArg))
	}
	// The destination: create it empty if it does not exist.
	var dst FileID
	err = fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.fileToWrite(req.Dest, req.LeaseID)
		if err != nil || r.found {
			dst = r.e.id
			return nil, err
		}
		// A new destination starts as a plain file: the source's
		// attributes (ReadOnly included) are applied with the content,
		// and only a destination that existed before is checked for
		// ReadOnly.
		e, chs, err := q.insertFile(r.parent, q.newFileEntry(r.parent.id, r.name, AttrArchive))
		dst = e.id
		return chs, err
	})
	if err != nil {
		return Attr{}, false, pathErr("copy", req.Dest, err)
	}
	// Stream the source's blob into staged blocks of the destination.
	s := newStage(fsys, dst)
	defer s.reset()
	dataLen := int64(len(sc.inline))
	if sc.blob {
		info, err := fsys.store.Stat(ctx, cs.key)
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
			dataLen = 0
		case err != nil:
			return Attr{}, false, pathErr("copy", req.Dest, err)
		default:
			dataLen = info.Size
		}
	}
	if n := min(dataLen, src.size); n > 0 {
		rd := cs.reader(ctx, fsys, n)
		err := stageFrom(ctx, s, rd, 0, n)
		rd.Close()
		if err != nil {
			return Attr{}, false, pathErr("copy", req.Dest, err)
		}
	}
	size := src.size
	e, err := fsys.commit(ctx, dst, commitOp{
		op:       "copy",
		reset:    true,
		truncate: &size,
		stage:    s,
		ranges:   &srcRanges,
		check: func(tx *locks.Tx, q *q, e entry) error {
			if err := q.stillNamed(req.Dest, e.id); err != nil {
				return err
			}
			f, err := q.facts(e)
			if err != nil {
				return err
			}
			if req.IgnoreReadOnly {
				f.ReadOnly = false
			}
			if err := tx.CheckREST(locks.RESTRequest{File: e.id, Op: locks.OpCreateOverwrite, LeaseID: req.LeaseID, Facts: f}); err != nil {
				return err
			}
			return q.checkQuota(e, size)
		},
		touch: func(q *q, e *entry) {
			t := ticks(q.now)
			e.attrs = src.attrs
			e.created, e.write, e.change, e.modified = t, t, t, t
			e.applyProps(req.Props)
			from := req.FromSource
			if from.Attributes {
				e.attrs = src.attrs
			}
			if req.SetArchive {
				e.attrs |= AttrArchive
			}
			if from.Created {
				e.created = src.created
			}
			if from.LastWrite {
				e.write = src.write
			}
			if from.Change {
				e.change = src.change
			}
			e.permKey = req.PermissionKey
			if from.Permission {
				e.permKey = src.permKey
			}
			e.content = src.content
			e.metadata = src.metadata
			if req.Metadata != nil {
				e.metadata = req.Metadata
			}
			e.alloc = 0 // the destination's content is replaced, with its allocation (alloc.go)
			e.copy = &CopyInfo{ID: req.CopyID, Source: req.CopySource, Status: "success",
				Progress: fmt.Sprintf("%d/%d", src.size, src.size), Completed: q.now.UTC()}
		},
	})
	if err != nil {
		return Attr{}, true, pathErr("copy", req.Dest, err)
	}
	return e.attr(req.Dest), false, nil
}

func (fsys *FileSystem) renamePath(ctx context.Context, req RenamePathRequest) (Attr, error) {
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		sr, err := q.mustResolveLocked("rename", req.Source)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", req.Source, err)
		}
		if sr.name == "" {
			return nil, ErrInvalidArg
		}
		dr, err := q.resolveLocked("rename", req.Dest)
		if err != nil {
			return nil, err
		}
		if dr.name == "" {
			return nil, ErrExist
		}
		if dr.share.id != sr.share.id {
			return nil, ErrCrossShare
		}
		if dr.found && dr.e.id != sr.e.id {
			if dr.e.kind.IsDir() || !req.ReplaceIfExists {
				return nil, ErrExist
			}
		}
		chs, err := q.move(tx, sr.e, dr.parent.id, dr.name, moveOpts{
			noReplace: !req.ReplaceIfExists, ignoreReadOnly: req.IgnoreReadOnly,
			srcLease: req.SourceLeaseID, dstLease: req.DestLeaseID,
		})
		if err != nil {
			return nil, err
		}
		e, err := q.get(sr.e.id)
		if err != nil {
			return nil, err
		}
		if req.Props != (SMBProperties{}) || req.Metadata != nil {
			e.applyProps(req.Props)
			if req.Metadata != nil {
				e.metadata = req.Metadata
			}
			if err := q.save(&e); err != nil {
				return nil, err
			}
		}
		a, err = q.attrOf(e)
		return chs, err
	})
	fsys.kickGC()
	return a, pathErr("rename", req.Source, err)
}

func (fsys *FileSystem) leaseFile(ctx context.Context, path string, req locks.LeaseRequest) (string, Attr, error) {
	var id string
	var a Attr
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		r, err := q.mustResolveLocked("lease", path)
		if err != nil {
			return nil, err
		}
		if r.e.kind.IsDir() {
			return nil, ErrIsDir
		}
		req.File = r.e.id
		if id, err = tx.Lease(req); err != nil {
			return nil, err
		}
		a, err = q.attrOf(r.e)
		return nil, err
	})
	return id, a, pathErr("lease", path, err)
}

// selectHandles returns the handles List Handles / Force Close select.
func (q *q) selectHandles(tx *locks.Tx, path string, recursive bool) ([]HandleInfo, error) {
	r, err := q.mustResolve(path)
	if err != nil {
		return nil, err
	}
	var hs []locks.Handle
	if r.e.kind == KindFile {
		if hs, err = tx.Handles(r.e.id); err != nil {
			return nil, err
		}
	} else {
		all, err := tx.AllHandles()
		if err != nil {
			return nil, err
		}
		for _, h := range all {
			if h.File == r.e.id {
				hs = append(hs, h)
				continue
			}
			if !recursive {
				continue
			}
			in, err := q.isAncestor(r.e.id, h.File)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, err
			}
			if in {
				hs = append(hs, h)
			}
		}
	}
	out := make([]HandleInfo, 0, len(hs))
	for _, h := range hs {
		hi := HandleInfo{Handle: h}
		if e, err := q.get(h.File); err == nil {
			hi.Parent = e.parent
			if p, err := q.pathOf(e); err == nil {
				if i := strings.IndexByte(p, '/'); i >= 0 {
					hi.Path = p[i+1:]
				}
			}
		}
		out = append(out, hi)
	}
	return out, nil
}

func (fsys *FileSystem) listHandles(ctx context.Context, path string, recursive bool) ([]HandleInfo, error) {
	var out []HandleInfo
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		var err error
		out, err = q.selectHandles(tx, path, recursive)
		return err
	})
	return out, pathErr("list handles", path, err)
}

func (fsys *FileSystem) forceCloseHandles(ctx context.Context, path string, id locks.HandleID, all, recursive bool) (int, error) {
	var n int
	err := fsys.update(ctx, func(tx *locks.Tx, q *q) ([]Change, error) {
		hs, err := q.selectHandles(tx, path, recursive)
		if err != nil {
			return nil, err
		}
		n = 0
		for _, h := range hs {
			if !all && h.ID != id {
				continue
			}
			ok, err := tx.ForceClose(h.ID)
			if err != nil {
				return nil, err
			}
			if ok {
				n++
			}
		}
		return nil, nil
	})
	fsys.kickGC()
	return n, pathErr("force close handles", path, err)
}
