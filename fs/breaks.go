package fs

import (
	"context"
	"fmt"

	"github.com/blobshare/blobshare/locks"
)

// breakCaching breaks, before an open of the mount (Open) or of `blobshare
// session` (OpenByPath), the SMB clients' oplocks and leases the open
// meets, as a local open on the file server would (MS-FSA 2.1.5.1.2: an
// open breaks other opens' Write caching, and Handle caching when the
// sharing conflicts), and waits, as a local open blocks, until the
// holders acknowledged (having flushed what they cached and closed the
// handles they only cached) or the break timed out (35 s,
// locks.DefaultBreakTimeout). The decision is package locks'
// (DecideCaching); the notifications reach the holders' processes through
// the lock table's outbox. Nothing is done when nothing anywhere is cached
// or the file does not exist (the open answers that itself).
func (fsys *FileSystem) breakCaching(ctx context.Context, id FileID, who locks.Requester, opts OpenOptions, overwrite bool) error {
	if any, err := fsys.table.AnyCachingPeek(ctx); err != nil || !any {
		return nil
	}
	cc := locks.CacheCall{File: id, Req: locks.CacheRequest{Who: who, Kind: locks.CacheOpOpen,
		Access: opts.Access, Share: opts.Share, Overwrite: overwrite}}
	if _, err := fsys.table.WaitCache(ctx, cc, 0); err != nil {
		return fmt.Errorf("fs: open of file %d waiting for SMB clients' caches: %w", id, err)
	}
	return nil
}

// breakCachingPath is breakCaching for an open by path: the file it names,
// if it exists and is a file.
func (fsys *FileSystem) breakCachingPath(ctx context.Context, req OpenPathRequest) error {
	if req.Disposition == DispositionCreate {
		return nil // meets no existing file
	}
	if any, err := fsys.table.AnyCachingPeek(ctx); err != nil || !any {
		return nil
	}
	a, _, err := fsys.Stat(ctx, req.Path, "")
	if err != nil || a.Kind.IsDir() {
		return nil
	}
	overwrite := req.Disposition == DispositionOverwrite || req.Disposition == DispositionOverwriteIf || req.Disposition == DispositionSupersede
	return fsys.breakCaching(ctx, a.ID, locks.RequesterSession, req.Open, overwrite)
}

// breakOnWrite breaks, before a write or a clear through a handle of the
// mount or of `blobshare session`, the Read caching of every SMB client's
// oplock or lease on the file (MS-FSA 2.1.4.12: a write through an open
// breaks every other open's level II oplock and Read caching, to none).
// Such a break needs no acknowledgment to go on (MS-SMB2 3.3.1.4: "The
// object store is not required to wait"), and no Write caching can be
// left to wait for: the handle's open, which has write access, broke it
// and waited, and none is granted beside it. So the write records the
// breaks and goes on; the holders' processes send them. A handle of SMB
// or FileREST does nothing here: their front ends break caching on their
// writes themselves. Costs one read statement when nothing on the file is
// cached.
func (h *Handle) breakOnWrite(ctx context.Context) error {
	if h.h.breaker == 0 {
		return nil
	}
	return h.h.fsys.breakReaders(ctx, h.h.file, h.h.breaker, h.h.id)
}

// breakOnResize is breakOnWrite for a size change (Setattr with Size):
// through a handle of the mount or session, or by path (the mount's
// truncate(2), which names no handle). A size change through an SMB
// handle is SMB's to break.
func (fsys *FileSystem) breakOnResize(ctx context.Context, id FileID, h *Handle) error {
	if h != nil {
		return h.breakOnWrite(ctx)
	}
	return fsys.breakReaders(ctx, id, locks.RequesterMount, 0)
}

// breakReaders records the breaks a write by who (through handle, 0 for
// none) makes on file, without waiting for them.
func (fsys *FileSystem) breakReaders(ctx context.Context, file FileID, who locks.Requester, handle locks.HandleID) error {
	if fsys.table == nil {
		return nil
	}
	if any, err := fsys.table.WriteBreakable(ctx, file); err != nil || !any {
		return err
	}
	cc := locks.CacheCall{File: file, Req: locks.CacheRequest{Who: who, Kind: locks.CacheOpWrite, Handle: handle}}
	if _, err := fsys.table.DecideCacheUpdate(ctx, cc); err != nil {
		return fmt.Errorf("fs: write to file %d breaking SMB clients' read caching: %w", file, err)
	}
	return nil
}
