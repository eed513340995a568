package rest

import "github.com/blobshare/blobshare/locks"

// breakDirCaches is breakCaches for Delete Directory: Azure's rule "A
// Handle (H) oplock needs to be broken whenever a client issues a delete
// operation. Azure Files requires that no handles can be open if a delete
// operation is to succeed" (smb-leases.md §1.1) applied to an SMB
// client's directory lease (locks/dirlease.go), blocking: a client that
// only cached its handle of the directory closes it and the delete goes
// on; one that really keeps it open makes the delete fail as any open
// handle does. It does nothing when the path names no directory.
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
	return s.waitBreaks(c, a.ID, locks.OpDelete)
}
