package smb

// Directory leases (SMB 3.x; MS-SMB2 3.3.5.9.11): announced with
// SMB2_GLOBAL_CAP_DIRECTORY_LEASING on 3.x dialects, granted Read and
// Handle caching at most (package locks, dirlease.go), and broken to none
// by a change of the directory's entries from any protocol except a
// change made through an open whose v2 lease names the directory's lease
// as its parent (SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET): that open's
// operations carry its parent lease in their context
// (locks.WithParentLease), which the namespace's transaction reads when
// it records the break. See "Directory leases" in doc.go.

import (
	"context"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// capDirectoryLeasing is SMB2_GLOBAL_CAP_DIRECTORY_LEASING (MS-SMB2 2.2.4).
const capDirectoryLeasing = 0x20

// dirLeasing reports whether a directory gets lease l: only on SMB 3.x
// when the capability was announced — with caching on, to a client whose
// NEGOTIATE said it supports directory leasing, as smbd (4.21 and later)
// does: python3-impacket 0.10, which does not, fails every CREATE against
// a server announcing it — and for a v2 context: "the server returned a
// lease for a file or a directory" is SMB2_CREATE_RESPONSE_LEASE_V2's
// (MS-SMB2 2.2.14.2), and a 3.x client asks for a directory's lease with
// it (3.2.4.3.8).
func (c *conn) dirLeasing(l *leaseRequest) bool {
	return c.serverCaps(c.dialect)&capDirectoryLeasing != 0 && l != nil && l.version == 2
}

// parentCtx is ctx carrying the parent lease of a CREATE's v2 lease
// request, for the changes the CREATE makes (a file created in the
// directory its client caches).
func (l *leaseRequest) parentCtx(ctx context.Context) context.Context {
	if l == nil || l.parent == nil || l.version != 2 {
		return ctx
	}
	return locks.WithParentLease(ctx, locks.LeaseIdentity{Client: l.id.Client, Key: *l.parent})
}

// parentCtx is ctx carrying the parent lease of o's lease, for the
// changes made through o (a rename, a set of attributes or times, a
// write, a delete on close).
func (o *open) parentCtx(ctx context.Context) context.Context {
	if o == nil || o.lease == nil || !o.lease.HasParent {
		return ctx
	}
	return locks.WithParentLease(ctx, locks.LeaseIdentity{Client: o.lease.Client, Key: o.lease.Parent})
}

// dirLeaseHint is the FileSystem's count of directory leases that may
// exist (fs.FileSystem has it): changes look for directory leases to
// break only while it is not zero.
type dirLeaseHint interface {
	HoldDirLease(h *fs.Handle)
	ReleaseDirLease(h *fs.Handle)
}

// holdDirLease counts o's directory lease before its grant's transaction.
func (s *Server) holdDirLease(o *open) {
	if d, ok := s.cfg.FS.(dirLeaseHint); ok && o.h != nil {
		d.HoldDirLease(o.h)
	}
}

// releaseDirLease undoes holdDirLease once o's caching is gone.
func (s *Server) releaseDirLease(o *open) {
	if d, ok := s.cfg.FS.(dirLeaseHint); ok && o.h != nil && o.isDir {
		d.ReleaseDirLease(o.h)
	}
}
