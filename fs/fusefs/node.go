package fusefs

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// node is one entry of the mount: the account root, a share, a directory
// or a file. Its go-fuse inode number is the core's FileID (never reused).
type node struct {
	gofs.Inode

	st   *mountState
	id   fs.FileID
	kind fs.Kind

	mu          sync.Mutex
	handles     map[*fileHandle]struct{} // open handles of this mount on the file
	cachedVer   uint64                   // version whose pages the kernel may cache
	cacheUnsure bool                     // the kernel may hold pages of another version
	lockOwners  map[uint64]struct{}      // POSIX lock owners granted a lock through this mount
}

// aliasTTL marks the entry of a name found under a different case; rawFS
// turns it into a zero timeout on the wire (go-fuse would replace a zero
// timeout with the default).
const aliasTTL = time.Nanosecond

// newChild returns the go-fuse inode for a: the live node of the file if
// the kernel already knows it (it holds the file's open handles), else a
// new one. NewInode alone would build a fresh node that go-fuse's bridge
// then drops in favour of the known one, so the live node is looked up in
// the mount's table first.
func (n *node) newChild(ctx context.Context, a fs.Attr) *gofs.Inode {
	n.st.mu.Lock()
	live := n.st.nodes[a.ID]
	n.st.mu.Unlock()
	if live != nil && live.kind.IsDir() == a.Kind.IsDir() {
		return live.EmbeddedInode()
	}
	child := &node{st: n.st, id: a.ID, kind: a.Kind}
	mode := uint32(syscall.S_IFREG)
	if a.Kind.IsDir() {
		mode = syscall.S_IFDIR
	}
	ino := n.NewInode(ctx, child, gofs.StableAttr{Mode: mode, Ino: uint64(a.ID)})
	n.st.remember(child)
	return ino
}

// fillAttr converts the core's attributes to FUSE's.
func (st *mountState) fillAttr(a fs.Attr, out *fuse.Attr) {
	out.Ino = uint64(a.ID)
	out.Size = uint64(a.Size)
	out.Blocks = (out.Size + 511) / 512
	out.Blksize = 1 << 20
	if a.Kind.IsDir() {
		out.Mode = syscall.S_IFDIR | 0o755
		out.Nlink = 2
		out.Size = 4096
	} else {
		// The Linux SMB client's default file_mode (no Unix extensions);
		// ReadOnly takes the write bits away.
		out.Mode = syscall.S_IFREG | 0o755
		if a.Attributes&fs.AttrReadOnly != 0 {
			out.Mode = syscall.S_IFREG | 0o555
		}
		out.Nlink = 1
		if a.Unlinked {
			out.Nlink = 0
		}
	}
	mtime, ctime := a.LastWrite, a.Change
	if ctime.IsZero() {
		ctime = mtime
	}
	out.SetTimes(&mtime, &mtime, &ctime)
	out.Owner = fuse.Owner{Uid: st.uid, Gid: st.gid}
}

// entry fills an EntryOut for child a looked up (or created) under name.
func (st *mountState) entry(a fs.Attr, name string, out *fuse.EntryOut) {
	st.fillAttr(a, &out.Attr)
	if name != "" && a.Name != name && a.Kind != fs.KindRoot {
		// Found under another case: never let the kernel keep this alias.
		out.SetEntryTimeout(aliasTTL)
	}
}

// attr returns the attributes of n as this mount sees them: through f when
// it is one of our handles, with the largest size any of our open handles
// sees (their unflushed writes included): the kernel keeps one size and one
// page cache for all descriptors and must not see the size go backwards.
func (n *node) attr(ctx context.Context, f gofs.FileHandle) (fs.Attr, error) {
	var a fs.Attr
	var err error
	if fh, ok := f.(*fileHandle); ok {
		a, err = fh.h.StatAttr(nc(ctx))
	} else {
		a, err = n.st.fsys.GetAttr(nc(ctx), n.id)
	}
	if err != nil {
		return a, err
	}
	return n.withOpenSizes(a), nil
}

// withOpenSizes gives a, just read, the largest size any of our open
// handles on n sees: a's committed size or a handle's unflushed end.
func (n *node) withOpenSizes(a fs.Attr) fs.Attr {
	for _, fh := range n.openHandles() {
		a.Size = max(a.Size, fh.h.StagedEnd())
	}
	return a
}

// soleHandle returns this mount's only open handle on n, nil if it has
// none or several.
func (n *node) soleHandle() *fileHandle {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.handles) != 1 {
		return nil
	}
	for fh := range n.handles {
		return fh
	}
	return nil
}

func (n *node) openHandles() []*fileHandle {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*fileHandle, 0, len(n.handles))
	for fh := range n.handles {
		out = append(out, fh)
	}
	return out
}

// resetCache records that the kernel's pages of n may be stale.
func (n *node) resetCache() {
	n.mu.Lock()
	n.cacheUnsure = true
	n.mu.Unlock()
}

var _ = (gofs.NodeOnForgetter)((*node)(nil))

// OnForget drops the node from the notification table.
func (n *node) OnForget() { n.st.forget(n) }

var _ = (gofs.NodeGetattrer)((*node)(nil))

// Getattr answers stat and fstat.
func (n *node) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a, err := n.attr(ctx, f)
	if err != nil {
		return toErrno(opOther, err)
	}
	n.st.fillAttr(a, &out.Attr)
	return 0
}

var _ = (gofs.NodeSetattrer)((*node)(nil))

// Setattr handles truncate/ftruncate (also O_TRUNC, which arrives as a
// SETATTR carrying the handle), utimes, and chmod: removing every write bit
// sets the SMB ReadOnly attribute, adding one clears it. chown is accepted
// and ignored (ownership is the mounting user's).
func (n *node) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	defer n.st.enter(n.id)()
	var req fs.SetattrRequest
	if fh, ok := f.(*fileHandle); ok {
		req.Handle = fh.h
	}
	picked := false
	if _, ok := in.GetSize(); !ok && req.Handle == nil {
		// futimens(2) and utimensat(2) name no handle (only ftruncate
		// does). With the mount's only handle on the file named, the core
		// commits its staged writes and the new times in one transaction
		// (tar -x, cp -p: write, set the times, close) instead of a
		// commit and then an update. Not a handle being closed: its
		// RELEASE may end it under us.
		if fh := n.soleHandle(); fh != nil && !fh.flushed.Load() {
			req.Handle, picked = fh.h, true
		}
	}
	if size, ok := in.GetSize(); ok {
		if n.kind.IsDir() {
			return syscall.EISDIR
		}
		s := int64(size)
		req.Size = &s
	}
	if mtime, ok := in.GetMTime(); ok {
		req.LastWrite = &mtime
	}
	if ctime, ok := in.GetCTime(); ok {
		req.Change = &ctime
	}
	var cur *fs.Attr // what a chmod read: the answer when nothing changes
	if mode, ok := in.GetMode(); ok && !n.kind.IsDir() {
		a, err := n.attr(ctx, f)
		if err != nil {
			return toErrno(opOther, err)
		}
		cur = &a
		attrs := cur.Attributes &^ fs.AttrReadOnly
		if mode&0o222 == 0 {
			attrs |= fs.AttrReadOnly
		}
		if attrs != cur.Attributes {
			req.Attributes = &attrs
		}
	}
	if req.Size == nil && req.LastWrite == nil && req.Change == nil && req.Attributes == nil {
		// Nothing for the core to change (chown, a chmod that keeps the
		// ReadOnly state: tar -x sends both for every file): answer the
		// attributes as Getattr does, in one read (a chmod's read).
		if cur == nil {
			a, err := n.attr(ctx, f)
			if err != nil {
				return toErrno(opOther, err)
			}
			cur = &a
		}
		n.st.fillAttr(*cur, &out.Attr)
		return 0
	}
	if req.Size != nil {
		// Writes other descriptors of this mount staged must land before
		// the size changes, or their later commit would undo a truncate.
		for _, fh := range n.openHandles() {
			if fh.h == req.Handle {
				continue // the core commits this one first
			}
			if err := fh.h.Flush(nc(ctx)); err != nil && !errors.Is(err, locks.ErrHandleClosed) {
				return toErrno(opOther, err)
			}
		}
	}
	a, err := n.st.fsys.SetattrMount(nc(ctx), n.id, req)
	if picked && errors.Is(err, locks.ErrHandleClosed) {
		// The handle chosen above was closed meanwhile (a close(2) in
		// another thread, Force Close Handles): set them by path.
		req.Handle = nil
		a, err = n.st.fsys.SetattrMount(nc(ctx), n.id, req)
	}
	if err != nil {
		return toErrno(opOther, err)
	}
	if req.Handle != nil {
		if ha, err := req.Handle.StatAttr(nc(ctx)); err == nil {
			a = ha
		}
	} else if ha, err := n.attr(ctx, nil); err == nil {
		a = ha
	}
	if req.Size != nil {
		n.resetCache()
	}
	n.st.fillAttr(a, &out.Attr)
	return 0
}

var _ = (gofs.NodeLookuper)((*node)(nil))

// Lookup finds a name case-insensitively.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	a, err := n.st.fsys.LookupStat(nc(ctx), n.id, name)
	if err != nil {
		n.st.logRefusedName("lookup", name, err)
		return nil, toErrno(opOther, err)
	}
	return n.childEntry(ctx, a, name, out), 0
}

// childEntry fills out for the child a found under name (by Lookup, or by
// the listing of a READDIRPLUS) and returns its inode.
func (n *node) childEntry(ctx context.Context, a fs.Attr, name string, out *fuse.EntryOut) *gofs.Inode {
	// A lookup of an open file (a revalidation after the entry timeout)
	// must report the size our handles see, like Getattr: the kernel
	// applies the entry's attributes to the inode.
	n.st.mu.Lock()
	known := n.st.nodes[a.ID]
	n.st.mu.Unlock()
	if known != nil && !a.Kind.IsDir() {
		a = known.withOpenSizes(a)
	}
	n.st.entry(a, name, out)
	return n.newChild(ctx, a)
}

var _ = (gofs.NodeMkdirer)((*node)(nil))

// Mkdir creates a directory; at the account root, a share.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	defer n.st.enter(n.id)()
	a, err := n.st.fsys.Mkdir(nc(ctx), n.id, name)
	if err != nil {
		n.st.logRefusedName("mkdir", name, err)
		return nil, toErrno(opOther, err)
	}
	n.st.entry(a, name, out)
	return n.newChild(ctx, a), 0
}

var _ = (gofs.NodeRmdirer)((*node)(nil))

// Rmdir removes an empty directory (at the account root, an empty share).
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	defer n.st.enter(n.id)()
	return toErrno(opOther, n.st.fsys.Rmdir(nc(ctx), n.id, name))
}

var _ = (gofs.NodeUnlinker)((*node)(nil))

// Unlink removes a file name; a file others hold open becomes
// delete-pending and lives on until its last handle closes.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	defer n.st.enter(n.id)()
	return toErrno(opOther, n.st.fsys.Unlink(nc(ctx), n.id, name))
}

var _ = (gofs.NodeRenamer)((*node)(nil))

// Rename moves an entry within one share, replacing an existing file
// (RENAME_NOREPLACE: EEXIST instead; RENAME_EXCHANGE: ENOTSUP).
func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	defer n.st.enter(n.id, np.id)()
	err := n.st.fsys.Rename(nc(ctx), fs.RenameRequest{
		OldParent: n.id,
		OldName:   name,
		NewParent: np.id,
		NewName:   newName,
		NoReplace: flags&renameNoReplace != 0,
		Exchange:  flags&renameExchange != 0,
	})
	n.st.logRefusedName("rename", newName, err)
	return toErrno(opOther, err)
}

// renameat2 flags (linux/fs.h).
const (
	renameNoReplace = 1 << 0
	renameExchange  = 1 << 1
)

var _ = (gofs.NodeCreater)((*node)(nil))

// Create creates and opens a file (open with O_CREAT on a new name).
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	defer n.st.enter(n.id)()
	h, a, err := n.st.fsys.Create(nc(ctx), fs.CreateRequest{
		Parent:    n.id,
		Name:      name,
		Exclusive: flags&syscall.O_EXCL != 0,
		Truncate:  flags&syscall.O_TRUNC != 0,
		Open:      n.st.openOptions(ctx, flags),
	})
	if err != nil {
		n.st.logRefusedName("create", name, err)
		return nil, nil, 0, toErrno(opOther, err)
	}
	n.st.entry(a, name, out)
	ino := n.newChild(ctx, a)
	child := ino.Operations().(*node)
	fh := child.addHandle(h)
	child.mu.Lock()
	child.cachedVer, child.cacheUnsure = a.Version, false
	child.mu.Unlock()
	return ino, fh, fuse.FOPEN_DIRECT_IO, 0
}

var _ = (gofs.NodeOpener)((*node)(nil))

// Open opens an existing file as a handle in the lock table.
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if n.kind.IsDir() {
		return nil, 0, syscall.EISDIR
	}
	h, err := n.st.fsys.Open(nc(ctx), n.id, n.st.openOptions(ctx, flags))
	if errors.Is(err, locks.ErrSharingViolation) && n.awaitClosing() {
		h, err = n.st.fsys.Open(nc(ctx), n.id, n.st.openOptions(ctx, flags))
	}
	if err != nil {
		return nil, 0, toErrno(opOther, err)
	}
	fh := n.addHandle(h)
	// Direct I/O: every read(2) and write(2) reaches the daemon as the
	// range the process asked for, with its lock owner, so byte-range
	// locks fail exactly the I/O that overlaps them and a process's own
	// fcntl locks never block it (doc.go, Locks). The page cache serves
	// only mmap: keep it only if the file is unchanged since the kernel
	// cached it; otherwise drop pages and attributes now, so this open
	// sees what REST or another process wrote.
	fuseFlags := uint32(fuse.FOPEN_DIRECT_IO)
	if a, err := h.StatAttr(nc(ctx)); err == nil {
		n.mu.Lock()
		keep := !n.cacheUnsure && n.cachedVer == a.Version
		stale := !keep && n.cachedVer != 0
		n.cachedVer, n.cacheUnsure = a.Version, false
		n.mu.Unlock()
		if keep {
			fuseFlags |= fuse.FOPEN_KEEP_CACHE
		} else if stale {
			n.NotifyContent(-1, 0) // attributes (size) may be stale too
		}
	}
	return fh, fuseFlags, 0
}

func (n *node) addHandle(h *fs.Handle) *fileHandle {
	fh := &fileHandle{n: n, h: h}
	n.mu.Lock()
	if n.handles == nil {
		n.handles = map[*fileHandle]struct{}{}
	}
	n.handles[fh] = struct{}{}
	n.mu.Unlock()
	return fh
}

func (n *node) removeHandle(fh *fileHandle) {
	n.mu.Lock()
	delete(n.handles, fh)
	n.mu.Unlock()
}

var _ = (gofs.NodeStatfser)((*node)(nil))

// freeInodes is the free-inode count Statfs reports.
const freeInodes = 1 << 32

// Statfs reports the namespace's totals in 4 KiB blocks.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	s, err := n.st.fsys.StatFS(nc(ctx))
	if err != nil {
		return toErrno(opOther, err)
	}
	const bsize = 4096
	total := s.QuotaBytes
	if total < s.UsedBytes {
		total = s.UsedBytes
	}
	out.Bsize = bsize
	out.Frsize = bsize
	out.Blocks = total / bsize
	out.Bfree = (total - s.UsedBytes) / bsize
	out.Bavail = out.Bfree
	// Inode numbers are never reused and not limited: report a fixed
	// supply of free ones on top of those in use, so that df -i shows
	// Inodes = IUsed + IFree with IUsed the number of entries.
	out.Ffree = freeInodes
	out.Files = s.Files + freeInodes
	out.NameLen = 255
	return 0
}

// noteLockOwner records that owner was granted a POSIX lock on n.
func (n *node) noteLockOwner(owner uint64) {
	n.mu.Lock()
	if n.lockOwners == nil {
		n.lockOwners = map[uint64]struct{}{}
	}
	n.lockOwners[owner] = struct{}{}
	n.mu.Unlock()
}

// takeLockOwner reports whether owner may hold POSIX locks on n (taken
// through this mount) and forgets it: close(2) releases them all.
func (n *node) takeLockOwner(owner uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.lockOwners[owner]
	delete(n.lockOwners, owner)
	return ok
}

// closingWait bounds how long an open that conflicts with this mount's own
// closed-but-not-yet-released handles waits for their RELEASE.
const closingWait = time.Second

// awaitClosing waits (bounded) until no handle of n that has seen a
// close(2) is still open, and reports whether there was one. RELEASE comes
// after close(2) has returned: without this, "close then reopen with a
// conflicting share mode" would fail at random.
func (n *node) awaitClosing() bool {
	closing := func() bool {
		for _, fh := range n.openHandles() {
			if fh.flushed.Load() {
				return true
			}
		}
		return false
	}
	if !closing() {
		return false
	}
	deadline := time.Now().Add(closingWait)
	for d := time.Millisecond; closing() && time.Now().Before(deadline); d = min(2*d, 20*time.Millisecond) {
		time.Sleep(d)
	}
	return true
}

// flushWriters commits what this mount's other writable handles on n have
// staged, so that a read or write through reader comes after every write
// made through the mount before it, as POSIX promises across descriptors
// (staging is per handle). Flushing a handle with nothing staged costs
// nothing. A failed
// commit is the writer's to report (at its flush or close); here it is only
// logged.
func (n *node) flushWriters(ctx context.Context, reader *fileHandle) {
	for _, fh := range n.openHandles() {
		if fh == reader || fh.h.Access()&(locks.AccessWrite|locks.AccessAppend) == 0 {
			continue
		}
		if err := fh.h.Flush(nc(ctx)); err != nil && !errors.Is(err, locks.ErrHandleClosed) {
			n.st.logger.Warn("fusefs: commit of another descriptor's writes before a read", "file", n.id, "handle", fh.h.ID(), "err", err)
		}
	}
}
