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
