package fusefs

import (
	"context"
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS wraps go-fuse's node file system to recover what its fs API drops
// (fuse-notes §2.1): FLUSH's lock owner and RELEASE's flags and lock owner.
//
// The bridge calls our FileFlusher/FileReleaser with a *fuse.Context whose
// Cancel is the very channel the server handed to rawFS for that request.
// Each in-flight request has its own channel (requests are pooled, never
// shared while in flight), so the channel is a key that ties the node-level
// call back to the raw request without guessing by thread id or pid.
type rawFS struct {
	fuse.RawFileSystem

	reqs sync.Map // <-chan struct{} → rawReq
}

// rawReq is the part of a FLUSH, RELEASE, READ or WRITE request the node
// API loses.
type rawReq struct {
	lockOwner    uint64 // 0 when a READ or WRITE names none (page-cache I/O)
	releaseFlags uint32 // fuse.ReleaseFlags: FUSE_RELEASE_FLOCK_UNLOCK
	flush        bool   // the request is a FLUSH
}

// Flush records the lock owner for the duration of the request.
func (r *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	r.reqs.Store(cancel, rawReq{lockOwner: in.LockOwner, flush: true})
	defer r.reqs.Delete(cancel)
	return r.RawFileSystem.Flush(cancel, in)
}

// Release records the release flags and lock owner for the request.
func (r *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	r.reqs.Store(cancel, rawReq{lockOwner: in.LockOwner, releaseFlags: in.ReleaseFlags})
	defer r.reqs.Delete(cancel)
	r.RawFileSystem.Release(cancel, in)
}

// Read records the lock owner a direct-I/O READ carries (POSIX locks are
// per process: its own locks never block its reads).
func (r *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	defer r.noteIOOwner(cancel, in.ReadFlags&fuse.READ_LOCKOWNER != 0, in.LockOwner)()
	return r.RawFileSystem.Read(cancel, in, buf)
}

// Writev records the lock owner a direct-I/O WRITE carries. (The server
// calls Writev for every WRITE, and Write only if Writev says ENOSYS.)
func (r *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	defer r.noteIOOwner(cancel, in.WriteFlags&fuse.WRITE_LOCKOWNER != 0, in.LockOwner)()
	return r.RawFileSystem.Writev(cancel, in, data)
}

// Write is Writev's fallback, with the same bookkeeping.
func (r *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	defer r.noteIOOwner(cancel, in.WriteFlags&fuse.WRITE_LOCKOWNER != 0, in.LockOwner)()
	return r.RawFileSystem.Write(cancel, in, data)
}

// noteIOOwner records, when the request names one (has), the lock owner
// of the READ or WRITE under cancel; the returned func forgets it.
func (r *rawFS) noteIOOwner(cancel <-chan struct{}, has bool, owner uint64) func() {
	if !has {
		return func() {}
	}
	r.reqs.Store(cancel, rawReq{lockOwner: owner})
	return func() { r.reqs.Delete(cancel) }
}

// ioOwner is the lock owner of the READ or WRITE served under ctx, 0 when
// it names none.
func (r *rawFS) ioOwner(ctx context.Context) uint64 {
	req, _ := r.request(ctx)
	return req.lockOwner
}

// Lookup turns the alias marker (aliasTTL: a name found under another
// case) into a true zero entry timeout, which go-fuse's bridge would
// replace with the default and which the kernel would round up to a jiffy
// if sent as 1 ns.
func (r *rawFS) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := r.RawFileSystem.Lookup(cancel, header, name, out)
	if st == fuse.OK && out.EntryValid == 0 && out.EntryValidNsec == uint32(aliasTTL.Nanoseconds()) {
		out.EntryValidNsec = 0
	}
	return st
}

// request returns the raw fields of the FLUSH, RELEASE, READ or WRITE being served under
// ctx (the context the bridge passed to the node method), ok=false if ctx
// does not belong to one.
func (r *rawFS) request(ctx context.Context) (rawReq, bool) {
	fc, ok := ctx.(*fuse.Context)
	if !ok || fc.Cancel == nil {
		return rawReq{}, false
	}
	v, ok := r.reqs.Load(fc.Cancel)
	if !ok {
		return rawReq{}, false
	}
	return v.(rawReq), true
}

// String keeps the server's debug output naming us.
func (r *rawFS) String() string { return fsName }
