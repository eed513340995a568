package filerest

import (
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// breakDirCaches is breakCaches for Delete Directory: Azure's rule "A
// Handle (H) oplock needs to be broken whenever a client issues a delete
// operation. Azure Files requires that no handles can be open if a delete
// operation is to succeed" (smb-leases.md §1.1) applied to an SMB
// client's directory lease (locks/dirlease.go), blocking: a client that
// only cached its handle of the directory closes it and the delete goes
// on, and so it does after one that keeps it acknowledged (a REST delete
// never pends, locking.md §2.3). It does nothing when the path names no
// directory or a directory that is not empty.
func (s *Server) breakDirCaches(c *call) error {
	t := s.caching
	if t == nil {
		return nil
	}
	ctx := c.r.Context()
	if any, err := t.AnyCachingPeek(ctx); err != nil || !any {
		return nil
	}
	a, _, err := s.fs.Stat(ctx, c.fsPath(), "")
	if err != nil || !a.Kind.IsDir() {
		return nil
	}
	if l, err := s.fs.ListDirectory(ctx, c.fsPath(), fs.ListRequest{MaxResults: 1}); err != nil || len(l.Entries) > 0 {
		// The delete answers DirectoryNotEmpty (or the error) itself:
		// no client is made to give up its handle for a delete that
		// cannot happen.
		return nil
	}
	return s.waitBreaks(c, a.ID, locks.OpDelete)
}
