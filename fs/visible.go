package fs

import (
	"context"
	"errors"
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
// Readers in other processes (a `blobshare mount` or `session` process
// over the same data directory) cannot reach this process's staged
// writes; for them the bound is VisibleWithin: a visible-write handle's
// staged writes are committed at most that long after the first of them
// was answered (one commit per handle per VisibleWithin while it writes:
// on a large file a commit rewrites one partial 4 MiB block, about 30 ms).
// Asking the writer's process to commit at once — a request row it
// polls — is left for the metadata engine's cross-process wake-ups.

// VisibleWithin bounds how long a visible-write handle's answered writes
// stay staged, unseen by readers in other processes.
const VisibleWithin = time.Second

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
	h.h.commitTimer = time.AfterFunc(VisibleWithin, func() {
		// A closed handle committed at its close; a failure is the
		// writer's to see at its flush or close.
		if err := h.flush(context.Background()); err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			fsys.log.Debug("fs: committing staged visible writes for other processes", "file", h.h.file, "handle", h.h.id, "err", err)
		}
	})
}

// clearUnflushed forgets h's staged writes: committed or dropped (h.h.mu
// held).
func (h *Handle) clearUnflushed() {
	if !h.h.marked {
		return
	}
	h.h.commitTimer.Stop() // running already: it waits for h.h.mu, then finds nothing staged
	h.h.commitTimer = nil
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
	if fsys.nUnflushed.Load() == 0 {
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
	if err != nil || a.Kind != KindFile || fsys.nUnflushed.Load() == 0 {
		return a, err
	}
	if !slices.Contains(fsys.unflushedFiles(), a.ID) {
		return a, nil
	}
	fsys.commitWriters(ctx, a.ID, nil)
	return fsys.lookup(ctx, parent, name, stat)
}
