package fusefs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// DefaultShareMode is the share mode of mount opens when --share-mode is not
// given: what Linux SMB clients send.
const DefaultShareMode = locks.ShareRead | locks.ShareWrite | locks.ShareDelete

// Options configure Mount.
type Options struct {
	// Share mounts one share at the mount point; "" mounts the whole
	// account (shares are the top-level directories).
	Share string
	// ShareMode is given to every open through the mount. The zero value
	// is locks.ShareNone (deny everything to others): callers normally pass
	// DefaultShareMode or locks.ParseShareMode's result.
	ShareMode locks.ShareMode
	// Logger receives errors that have no caller to go to (RELEASE) and,
	// at debug level, go-fuse's messages. Nil discards.
	Logger *slog.Logger
	// Debug logs every FUSE request (very verbose).
	Debug bool
	// ClientName is reported by List Handles for mount opens ("" means
	// "fuse:<hostname>"); each open adds the calling program and its pid
	// (locks.WithProgram), which `blobshare status` shows.
	ClientName string

	// notify replaces the attribute invalidation sent for changes made
	// outside the mount (tests).
	notify func(n *node)
}

// Mount mounts fsys at dir and returns once the kernel serves it. The mount
// ends with Unmount, with umount(8), or when ctx is cancelled. A missing or
// unusable mount point wraps ErrMount; a missing share wraps the core's
// lookup error (fs.ErrNotFound).
func Mount(ctx context.Context, dir string, fsys *fs.FileSystem, opts Options) (*Mounted, error) {
	if fsys == nil {
		return nil, fmt.Errorf("fusefs: mount %s: nil file system", dir)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := opts.ClientName
	if client == "" {
		host, _ := os.Hostname()
		client = "fuse:" + host
	}
	st := &mountState{
		fsys:      fsys,
		shareMode: opts.ShareMode,
		logger:    logger,
		client:    client,
		uid:       uint32(os.Getuid()),
		gid:       uint32(os.Getgid()),
		nodes:     map[fs.FileID]*node{},
		busy:      map[fs.FileID]int{},
		notify:    func(n *node) { n.NotifyContent(-1, 0) },
	}
	if opts.notify != nil {
		st.notify = opts.notify
	}
	rootAttr, err := fsys.GetAttr(ctx, fs.RootID)
	if err != nil {
		return nil, fmt.Errorf("fusefs: mount %s: account root: %w", dir, err)
	}
	if opts.Share != "" {
		rootAttr, err = fsys.LookupStat(ctx, fs.RootID, opts.Share)
		if err != nil {
			return nil, fmt.Errorf("fusefs: mount %s: share %q: %w", dir, opts.Share, err)
		}
	}
	root := &node{st: st, id: rootAttr.ID, kind: rootAttr.Kind}
	st.nodes[root.id] = root
	st.raw = &rawFS{} // filled by mountNode before the first request
	unsubscribe := fsys.Subscribe(st.onChange)
	stop := sync.OnceFunc(func() {
		// No new notifier starts once the serving loop has ended; the
		// running ones are waited for before Wait and Unmount return.
		unsubscribe()
		st.mu.Lock()
		st.stopped = true
		st.mu.Unlock()
		st.notifiers.Wait()
	})
	m, err := mountNode(ctx, dir, root, mountConfig{Logger: logger, Debug: opts.Debug, FsName: "blobshare:" + opts.Share, RootIno: uint64(rootAttr.ID), raw: st.raw, afterServe: stop})
	if err != nil {
		stop()
		return nil, err
	}
	logger.Debug("fusefs: mounted", "dir", dir, "share", opts.Share, "share_mode", opts.ShareMode)
	return m, nil
}

// mountState is what every node of one mount shares.
type mountState struct {
	fsys      *fs.FileSystem
	raw       *rawFS
	shareMode locks.ShareMode
	logger    *slog.Logger
	client    string
	uid, gid  uint32

	// notify tells the kernel that a node's attributes changed
	// (node.NotifyContent with offset -1; tests replace it).
	notify func(n *node)

	mu        sync.Mutex
	nodes     map[fs.FileID]*node // live nodes (until FORGET), for change notifications
	busy      map[fs.FileID]int   // entries with a mount operation in flight
	stopped   bool                // the mount has ended: no new notifiers
	notifiers sync.WaitGroup      // running notify goroutines
}

// enter marks ids as changed by the mount itself until the returned func
// runs: their change notifications are not echoed back to the kernel,
// which already knows (it made the change).
func (st *mountState) enter(ids ...fs.FileID) func() {
	st.mu.Lock()
	for _, id := range ids {
		st.busy[id]++
	}
	st.mu.Unlock()
	return func() {
		st.mu.Lock()
		for _, id := range ids {
			if st.busy[id]--; st.busy[id] <= 0 {
				delete(st.busy, id)
			}
		}
		st.mu.Unlock()
	}
}

// onChange makes a change made outside this mount (REST, a session in this
// process) visible to the kernel. It runs on the changer's goroutine, maybe
// inside a FUSE request of ours, so it never waits for the kernel.
//
// Only attribute invalidation is sent (NotifyContent with offset -1): the
// kernel serves it without taking page or directory locks. Entry
// invalidation (NotifyEntry) and page invalidation wait, uninterruptibly,
// for the directory lock or page locks that a request still pending in this
// daemon may hold; if the daemon is SIGKILLed at that moment the kernel
// thread never returns and the process can never exit, keeping its handles
// alive in the lock table. So data coherence is close-to-open: the next open
// drops stale pages (no FOPEN_KEEP_CACHE once the file's version moved), and
// a name removed or renamed over REST leaves the kernel's dentry cache within
// the 1 s entry timeout.
func (st *mountState) onChange(c fs.Change) {
	if c.Kind != fs.ChangeData && c.Kind != fs.ChangeAttr {
		return
	}
	st.mu.Lock()
	if st.busy[c.File] > 0 {
		st.mu.Unlock()
		return
	}
	file := st.nodes[c.File]
	if file == nil || st.stopped {
		st.mu.Unlock()
		return
	}
	st.notifiers.Add(1)
	st.mu.Unlock()
	if c.Kind == fs.ChangeData {
		file.resetCache()
	}
	go func() {
		defer st.notifiers.Done()
		st.notify(file)
	}()
}

// remember registers a node for notifications; forget drops it.
func (st *mountState) remember(n *node) {
	st.mu.Lock()
	if st.nodes[n.id] == nil {
		st.nodes[n.id] = n
	}
	st.mu.Unlock()
}

func (st *mountState) forget(n *node) {
	st.mu.Lock()
	if st.nodes[n.id] == n {
		delete(st.nodes, n.id)
	}
	st.mu.Unlock()
}

// openOptions are the lock-table side of an open with these flags, by the
// caller of the FUSE request in ctx.
func (st *mountState) openOptions(ctx context.Context, flags uint32) fs.OpenOptions {
	var access locks.Access
	switch flags & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		access = locks.AccessRead
	case syscall.O_WRONLY:
		access = locks.AccessWrite
	default:
		access = locks.AccessRead | locks.AccessWrite
	}
	return fs.OpenOptions{Access: access, Share: st.shareMode, ClientName: st.clientName(ctx), POSIX: true}
}

// clientName is the ClientName of an open by the caller of the FUSE
// request in ctx: the mount's client with the calling program's name and
// pid (locks.WithProgram), so `blobshare status` names the program that
// holds a file rather than the blobshare process serving the mount. The
// name is the kernel's comm (/proc/PID/comm: at most 15 bytes, no
// allocation of the whole command line); a caller that exited already or
// a request without one (pid 0) is recorded as the mount alone.
func (st *mountState) clientName(ctx context.Context) string {
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller.Pid == 0 {
		return st.client
	}
	return locks.WithProgram(st.client, processName(caller.Pid), int(caller.Pid))
}

// processName is /proc/PID/comm without its newline, "" if it cannot be
// read. Raw system calls into a stack buffer (comm is at most 16 bytes):
// every open pays for it, about 6 µs here against 9.5 µs with os.ReadFile
// (its fstat and allocations).
func processName(pid uint32) string {
	fd, err := syscall.Open("/proc/"+strconv.FormatUint(uint64(pid), 10)+"/comm", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var buf [64]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return ""
	}
	return strings.TrimSuffix(string(buf[:n]), "\n")
}

// logRefusedName logs, at debug, why a name was refused (fs.ErrInvalidName
// and its ErrNameTooLong): the mount can only answer EINVAL or
// ENAMETOOLONG, which say nothing of the rule — a share name of two
// characters, a colon, a device name. Other errors are not logged here.
func (st *mountState) logRefusedName(op, name string, err error) {
	if errors.Is(err, fs.ErrInvalidName) {
		st.logger.Debug("fusefs: name refused", "op", op, "name", name, "reason", err, "rules", "docs/names.md")
	}
}

// releaseTimeout bounds the work of a RELEASE (commit + close), which no
// caller waits for.
const releaseTimeout = 5 * time.Minute
