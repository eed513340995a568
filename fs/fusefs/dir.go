package fusefs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/blobshare/blobshare/fs"
)

// An open directory: one listing, with every entry's attributes, read
// from the namespace at the first READDIR(PLUS) after OPENDIR or a rewind.
// READDIRPLUS asks for each entry's attributes right after the entry
// (go-fuse calls dirHandle.Lookup): they come from the listing, not from
// a query per entry, which made `ls -l` of a large directory cost a
// database read per file. The attributes are as fresh as a lookup made
// at the moment of the listing.
type dirHandle struct {
	n      *node
	loaded bool
	list   []fs.Attr       // the directory's entries
	ents   []fuse.DirEntry // ".", ".." and list's entries
	next   int             // index into ents of the next entry to hand out
}

var (
	_ = (gofs.NodeOpendirHandler)((*node)(nil))
	_ = (gofs.FileReaddirenter)((*dirHandle)(nil))
	_ = (gofs.FileSeekdirer)((*dirHandle)(nil))
	_ = (gofs.FileLookuper)((*dirHandle)(nil))
	_ = (gofs.FileReleasedirer)((*dirHandle)(nil))
)

// OpendirHandle opens a directory for listing.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return &dirHandle{n: n}, 0, 0
}

// load reads the listing. "." and ".." lead it, as on a local disk or a
// Linux SMB mount (ls -a shows them); go-fuse does not add them itself.
// Offsets count from 1, one per entry, so a seek lands on an index.
func (d *dirHandle) load(ctx context.Context) syscall.Errno {
	list, err := d.n.st.fsys.ReadDir(nc(ctx), d.n.id)
	if err != nil {
		return toErrno(opOther, err)
	}
	self := d.n.StableAttr().Ino
	up := self // the mount's root: its parent lies outside the mount
	if _, parent := d.n.Parent(); parent != nil {
		up = parent.StableAttr().Ino
	}
	ents := make([]fuse.DirEntry, 0, 2+len(list))
	ents = append(ents,
		fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR, Ino: self},
		fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR, Ino: up})
	for _, a := range list {
		mode := uint32(syscall.S_IFREG)
		if a.Kind.IsDir() {
			mode = syscall.S_IFDIR
		}
		ents = append(ents, fuse.DirEntry{Name: a.Name, Mode: mode, Ino: uint64(a.ID)})
	}
	for i := range ents {
		ents[i].Off = uint64(i + 1)
	}
	d.list, d.ents, d.next, d.loaded = list, ents, 0, true
	return 0
}

// Readdirent hands out the next entry (go-fuse serialises calls on one
// handle).
func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if !d.loaded {
		if errno := d.load(ctx); errno != 0 {
			return nil, errno
		}
	}
	if d.next >= len(d.ents) {
		return nil, 0
	}
	de := d.ents[d.next]
	d.next++
	return &de, 0
}

// Seekdir moves to offset off: 0 is a rewind (rewinddir), which lists
// the directory again, as POSIX lets a rewind see later changes.
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if off == 0 {
		return d.load(ctx)
	}
	if !d.loaded {
		if errno := d.load(ctx); errno != 0 {
			return errno
		}
	}
	d.next = int(min(off, uint64(len(d.ents))))
	return 0
}

// Lookup answers READDIRPLUS for the entry Readdirent produced last, from
// the listing.
func (d *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	i := d.next - 1 - 2 // the last entry handed out, in list (after . and ..)
	if i < 0 || i >= len(d.list) || d.list[i].Name != name {
		return d.n.Lookup(ctx, name, out) // not the entry just listed: ask the namespace
	}
	return d.n.childEntry(ctx, d.list[i], name, out), 0
}

// Releasedir drops the listing.
func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {
	d.list, d.ents, d.loaded = nil, nil, false
}
