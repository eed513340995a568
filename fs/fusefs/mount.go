package fusefs

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Defaults of the mount. They are variables of no one: each mount copies
// them into its own configuration.
const (
	defaultTTL           = time.Second
	defaultMaxWrite      = 1 << 20 // 1 MiB: the kernel's cap (fs.fuse.max_pages_limit × 4 KiB)
	defaultMaxBackground = 64      // go-fuse's default is 12; JuiceFS uses 50
	fsName               = "blobshare"
)

// ErrMount is wrapped by every error Mount returns because the kernel mount
// itself failed (no /dev/fuse, no permission, missing mount point, ...).
var ErrMount = errors.New("fusefs: mount failed")

// mountConfig is what the plumbing needs, whatever file system is behind the
// root node (blobshare's, or go-fuse's loopback in the benchmarks).
type mountConfig struct {
	Logger *slog.Logger
	// Debug logs every FUSE request through Logger.
	Debug bool
	// TTL is the entry and attribute timeout (0: one second).
	TTL time.Duration
	// MaxWrite overrides the maximum WRITE/READ size (0: 1 MiB).
	MaxWrite int
	// FsName is the source shown in /proc/mounts.
	FsName string
	// ReadAheadKB sets the mount's kernel read-ahead window (0: leave the
	// kernel's 128 KiB). FUSE can only lower it at INIT; the bdi's sysfs
	// knob raises it, so sequential READs arrive in 1 MiB pieces.
	ReadAheadKB int
	// RootIno is the root directory's inode number (0: go-fuse's own,
	// which stat shows as 0).
	RootIno uint64

	// raw, when set, is the wrapper to use (its RawFileSystem is set
	// here): nodes that need it hold it before the first request.
	raw *rawFS
	// afterServe, when set, runs once the serving loop has ended, before
	// Wait and Unmount return: it stops and waits for the goroutines the
	// file system started.
	afterServe func()
}

// Mounted is a live mount. Unmount it (or cancel the context given to
// Mount) and Wait for the serving loop to end.
type Mounted struct {
	dir    string
	srv    *fuse.Server
	raw    *rawFS
	logger *slog.Logger

	unmountOnce sync.Once
	unmountErr  error
	done        chan struct{} // closed when Serve returns
	stop        func() bool   // stops the ctx watcher
}

// Dir returns the mount point.
func (m *Mounted) Dir() string { return m.dir }

// ErrDetached is returned (wrapped) by Unmount when files inside the mount
// were still in use: the mount point is detached (MNT_DETACH) and gone
// from the namespace, but processes holding files inside keep the file
// system until they close them (or this process exits).
var ErrDetached = errors.New("fusefs: detached lazily, files inside still in use")

// Unmount detaches the file system from the mount point with umount(2),
// retrying for about half a second while it is busy (a process has its cwd or a
// file inside), then detaching lazily (ErrDetached). It waits for the
// serving loop to end (at most a few seconds after a lazy detach). Calling
// it again returns the first result.
func (m *Mounted) Unmount() error {
	m.unmountOnce.Do(func() {
		m.stop()
		select {
		case <-m.done:
			return // already unmounted (umount(8))
		default:
		}
		var err error
		for d := 5 * time.Millisecond; ; d = min(2*d, 200*time.Millisecond) {
			err = syscall.Unmount(m.dir, 0)
			if err != syscall.EBUSY || d >= 200*time.Millisecond {
				break
			}
			time.Sleep(d)
		}
		lazy := false
		if err == syscall.EBUSY {
			lazy = true
			err = syscall.Unmount(m.dir, unix.MNT_DETACH)
		}
		if err != nil {
			m.unmountErr = fmt.Errorf("fusefs: unmount %s: %w", m.dir, err)
			return
		}
		if lazy {
			select {
			case <-m.done:
			case <-time.After(3 * time.Second):
				m.unmountErr = fmt.Errorf("%w: %s", ErrDetached, m.dir)
				m.logger.Warn("fusefs: mount detached lazily; files inside are still open", "dir", m.dir)
				return
			}
		} else {
			<-m.done
		}
		m.logger.Debug("fusefs: unmounted", "dir", m.dir)
	})
	return m.unmountErr
}

// Done is closed when the serving loop has ended (the file system is
// unmounted).
func (m *Mounted) Done() <-chan struct{} { return m.done }

// Wait blocks until the file system is unmounted (by Unmount, by a cancelled
// context, or by someone running umount on the mount point).
func (m *Mounted) Wait() { <-m.done }

// mountNode mounts root at dir with blobshare's FUSE options. The serving
// loop runs in its own goroutine; the mount is live when mountNode returns.
func mountNode(ctx context.Context, dir string, root gofs.InodeEmbedder, cfg mountConfig) (*Mounted, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TTL == 0 {
		cfg.TTL = defaultTTL
	}
	if cfg.MaxWrite == 0 {
		cfg.MaxWrite = defaultMaxWrite
	}
	if cfg.FsName == "" {
		cfg.FsName = fsName
	}
	if cfg.ReadAheadKB == 0 {
		cfg.ReadAheadKB = defaultMaxWrite >> 10
	}
	if err := prepareMountPoint(dir); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fusefs: mount %s: %w", dir, err)
	}

	ttl := cfg.TTL
	var negative time.Duration // see doc.go: names are case-insensitive
	fsOpts := &gofs.Options{
		// A non-nil Options means zero timeouts unless set (fuse-notes §2.4).
		EntryTimeout:    &ttl,
		AttrTimeout:     &ttl,
		NegativeTimeout: &negative,
		Logger:          log.New(slogWriter{cfg.Logger}, "", 0),
	}
	if cfg.RootIno != 0 {
		fsOpts.RootStableAttr = &gofs.StableAttr{Ino: cfg.RootIno}
	}
	fsOpts.MountOptions = fuse.MountOptions{
		FsName:        cfg.FsName,
		Name:          fsName,
		DirectMount:   true, // fusermount is not installed (fuse-notes §2.8)
		DisableXAttrs: true, // else a GETXATTR on every write (fuse-notes §2.5)
		EnableLocks:   true, // flock and fcntl reach us (fuse-notes §2.1)
		MaxWrite:      cfg.MaxWrite,
		MaxBackground: defaultMaxBackground,
		Debug:         cfg.Debug,
		Logger:        log.New(slogWriter{cfg.Logger}, "", 0),
		// Passthrough would hide READ/WRITE from the daemon (no staging,
		// no lock checks on I/O). blobshare's handles never offer a
		// backing fd; switching it off also keeps the loopback baseline
		// of the benchmarks on the same FUSE data path.
		DisabledCapabilities: fuse.CAP_PASSTHROUGH,
		// Files are opened with FOPEN_DIRECT_IO (node.Open); shared
		// mappings of them still go through the page cache.
		ExtraCapabilities: fuse.CAP_DIRECT_IO_ALLOW_MMAP,
	}
	raw := cfg.raw
	if raw == nil {
		raw = &rawFS{}
	}
	raw.RawFileSystem = gofs.NewNodeFS(root, fsOpts)
	srv, err := fuse.NewServer(raw, dir, &fsOpts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMount, dir, err)
	}
	m := &Mounted{dir: dir, srv: srv, raw: raw, logger: cfg.Logger, done: make(chan struct{})}
	go func() {
		srv.Serve()
		if cfg.afterServe != nil {
			cfg.afterServe()
		}
		close(m.done)
	}()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		<-m.done
		return nil, fmt.Errorf("%w: %s: %w", ErrMount, dir, err)
	}
	if cfg.ReadAheadKB > 0 {
		if err := setReadAhead(dir, cfg.ReadAheadKB); err != nil {
			cfg.Logger.Debug("fusefs: read-ahead left at the kernel default", "dir", dir, "err", err)
		}
	}
	m.stop = context.AfterFunc(ctx, func() {
		if err := m.Unmount(); err != nil {
			m.logger.Error("fusefs: unmount on cancel", "dir", dir, "err", err)
		}
	})
	return m, nil
}

// maxDeadMounts bounds how many dead mounts stacked on one mount point
// ClearDeadMount detaches.
const maxDeadMounts = 16

// ClearDeadMount detaches, lazily, a dead FUSE mount on dir — left by a
// blobshare process killed with SIGKILL: "Transport endpoint is not
// connected" — several if they were stacked, so that a new mount replaces
// it instead of failing or stacking on top of it. A dead mount is told by
// statfs(2), which must reach the vanished server and fails with ENOTCONN
// (ECONNABORTED once the connection was aborted), while stat(2) may still
// answer from the kernel's cached attributes. Anything else on dir is left
// alone. Errors wrap ErrMount.
func ClearDeadMount(dir string) error {
	for range maxDeadMounts {
		var sfs unix.Statfs_t
		err := unix.Statfs(dir, &sfs)
		if err != unix.ENOTCONN && err != unix.ECONNABORTED {
			return nil
		}
		if uerr := unix.Unmount(dir, unix.MNT_DETACH); uerr != nil {
			return fmt.Errorf("%w: mount point %s: dead FUSE mount (%w) that cannot be detached: %w", ErrMount, dir, err, uerr)
		}
	}
	return fmt.Errorf("%w: mount point %s: more than %d dead FUSE mounts stacked", ErrMount, dir, maxDeadMounts)
}

// prepareMountPoint clears a dead mount on dir (ClearDeadMount), refuses a
// live one (ErrAlreadyMounted) and checks that dir is an existing
// directory. Errors wrap ErrMount.
func prepareMountPoint(dir string) error {
	if err := ClearDeadMount(dir); err != nil {
		return err
	}
	if err := refuseMounted(dir); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: mount point %s: %w", ErrMount, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: mount point %s is not a directory", ErrMount, dir)
	}
	return nil
}

// slogWriter adapts go-fuse's *log.Logger output to slog at debug level.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	n := len(p)
	for n > 0 && p[n-1] == '\n' {
		n--
	}
	w.l.Debug(string(p[:n]), "component", "go-fuse")
	return len(p), nil
}

// setReadAhead writes the read-ahead window of the mount at dir to its
// backing device info in sysfs (/sys/class/bdi/MAJ:MIN/read_ahead_kb).
func setReadAhead(dir string, kb int) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err := os.WriteFile(p, []byte(strconv.Itoa(kb)), 0); err != nil {
		return fmt.Errorf("read-ahead: %w", err)
	}
	return nil
}
