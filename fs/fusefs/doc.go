// Package fusefs is blobshare's FUSE binding: it mounts the share file
// system of package fs on Linux with go-fuse v2, as one share or as the
// whole account (shares are the top-level directories; mkdir at the root
// creates a share). It only translates requests and replies: the namespace,
// the data path and every sharing rule live in package fs and package locks.
//
// # Mounting
//
// Mount uses go-fuse's DirectMount (mount(2) as root, no fusermount),
// DisableXAttrs (otherwise the kernel asks for security.capability on every
// write), EnableLocks (flock and fcntl reach the daemon instead of staying
// in the kernel), 1 MiB MaxWrite, MaxBackground 64, and passthrough
// disabled (READ and WRITE must reach the daemon: staging and lock checks
// happen there). The kernel read-ahead window is raised to 1 MiB through
// the mount's bdi in sysfs (FUSE INIT can only lower the kernel's 128 KiB);
// it serves mmap only, since files are opened in direct I/O (see Locks).
//
// A mount point still holding the dead mount of a blobshare process killed
// with SIGKILL ("Transport endpoint is not connected") is detached lazily
// before mounting (ClearDeadMount; the CLI calls it before its own checks):
// statfs(2) tells a dead mount, as it fails with ENOTCONN where stat(2) may
// still answer from the kernel's cache. So a restart mounts once, neither
// refusing nor stacking on the dead mount. A live mount point — anything
// mounted there, found in /proc/self/mountinfo — is refused with
// ErrAlreadyMounted: a second mount would hide the first, and unmounting
// one would leave the other.
//
// Entry and attribute timeouts are 1 s; the negative-entry timeout is 0,
// because names are case-insensitive: after creating "foo" a cached
// negative entry for "FOO" would hide it. For the same reason a lookup that
// finds an entry under a different case is answered with entry timeout 0
// (marked in the node, set on the wire by rawFS.Lookup: go-fuse would
// replace 0 with the default and the kernel rounds 1 ns up to a jiffy), so
// the kernel never keeps an alias dentry that would survive a rename or
// unlink of the real name.
//
// # Benchmarks
//
// bench_test.go compares the mount with go-fuse's loopback over a directory
// on the same disk, same mount options, back to back in one run, and
// reports ratios; BenchmarkPeakRSS measures the peak RSS (VmHWM) of a mount
// server running as a child process while a large file is written through
// it. BenchmarkTools times tar -x, ls -lR and rm -rf of a tree of small
// files on the plain disk, the loopback and the mount, taking turns;
// BenchmarkFlatness runs the small-files loop in a share already holding
// many files with many handles open on them against an empty share.
// BLOBSHARE_BENCH_FULL=1 gives the full sizes (1 GiB, 10,000 files,
// 2 GiB, a 5,000-file tree, 100,000 files and 10,000 handles).
//
// Mount returns a *Mounted; Unmount (or cancelling the context given to
// Mount) unmounts with umount(2) and waits for the serving loop. The
// serving goroutines run each request on its own goroutine: every node
// method is safe for concurrent use.
//
// # Requests the node API loses: the raw wrapper
//
// go-fuse's fs API drops FLUSH's lock owner and RELEASE's flags. close(2)
// of a descriptor sends FLUSH with the process's POSIX lock owner and no
// unlock request: the locks of that owner on the file must go right there.
// rawFS wraps the node file system, overrides Flush and Release, and keeps
// the raw request under its cancel channel while the bridge calls our
// node-level Flush/Release with a *fuse.Context carrying that same channel
// (each in-flight request has its own). Thread ids are not pids and are
// never used to identify anyone: POSIX locks are keyed by the kernel's
// lock owner, share modes and flocks by the file handle.
//
// # Handles
//
// Every open (OPEN or CREATE) takes a handle in the lock table through the
// core: access from the open flags (O_RDONLY → read, O_WRONLY → write,
// O_RDWR → read+write), share mode from the mount's --share-mode (default
// read,write,delete, what Linux SMB clients send). A refused open answers
// EBUSY (STATUS_SHARING_VIOLATION). The handle records the program that
// opened the file, from the request's caller pid (/proc/PID/comm), so
// `blobshare status` names it rather than the process serving the mount.
// The handle is closed at RELEASE, which
// the kernel sends after close(2) has returned, asynchronously: right after
// close() a conflicting open from another process can still see the handle
// for a moment; an open of this mount that conflicts only with such
// closing handles of its own waits (up to a second) for their RELEASE.
// Writes are staged per handle and committed at FLUSH (every close(2)),
// fsync and RELEASE; FLUSH and fsync are where a commit error reaches the
// application, RELEASE errors can only be logged. Within the mount, POSIX
// read-after-write across descriptors holds: a READ first commits what the
// mount's other writable handles on the file staged, and sizes reported to
// the kernel include every open handle's unflushed writes. Other clients
// (REST, sessions, other mounts) see writes once committed.
//
// O_TRUNC arrives as SETATTR(size 0) after OPEN (go-fuse does not negotiate
// ATOMIC_O_TRUNC); truncation goes through the handle when the kernel names
// one, else through the path. The kernel names none when times are set
// (futimens, utimensat): while the mount holds exactly one handle on the
// file, not yet closed, the times go through it, so that its staged writes
// and the times commit in one transaction (tar -x and cp -p write, set the
// times, then close); otherwise through the path, after our handles'
// writes are committed.
//
// # Locks
//
// flock(2) arrives as SETLK/SETLKW with FUSE_LK_FLOCK. It is a lock of
// the handle (the open file description) in the lock table
// (locks.Tx.Flock), and behaves between processes on the mount as on a
// local disk: it conflicts only with other descriptions' flocks — never
// with opens, reads, writes or fcntl locks — LOCK_NB answers EWOULDBLOCK,
// a blocking flock polls with backoff until granted or interrupted
// (EINTR), and it goes when the handle is released. REST and SMB clients
// still see a flock-held file as held: to them it is a whole-file
// byte-range lock (what the Linux SMB client turns flock into), so REST
// reads and writes answer FileLockConflict (LOCK_SH: writes only) and SMB
// lock requests STATUS_LOCK_NOT_GRANTED. Nothing of theirs refuses or
// delays a flock, so no wait can close a cycle.
//
// fcntl(2) F_SETLK/F_SETLKW/F_GETLK are POSIX byte-range locks in the lock
// table, keyed by the kernel's lock owner, so REST clients meet them as
// FileLockConflict. F_SETLK's conflict is EAGAIN (POSIX); F_SETLKW polls
// with backoff (in the core) and answers EINTR when the kernel interrupts
// the request (the kernel restarts lock waits, ERESTARTSYS, so a caller
// whose signal handler has SA_RESTART keeps waiting). Every other request
// ignores interrupts: the Go runtime's SIGURG interrupts Go programs' FUSE
// requests all the time, and a commit must not fail with EINTR at close(2).
// F_GETLK reports the conflicting lock with pid 0 when its holder is not a
// process on this mount (a REST client, a session, another mount). OFD
// locks are not supported (the kernel does not forward them to FUSE).
//
// Regular files are opened with FOPEN_DIRECT_IO (and DIRECT_IO_ALLOW_MMAP
// negotiated, so shared mappings still work through the page cache). Only
// then does the kernel send each read(2) and write(2) as the range the
// process asked for, and with the process's POSIX lock owner: through the
// page cache it would read whole pages and read-ahead windows, and a
// 10-byte read at 600 of a file locked on [0,100) would fail. So a
// byte-range lock fails exactly the I/O that overlaps it, and I/O is
// checked with locks.Tx.CheckIOKey: POSIX locks are per process, and the
// process's own fcntl locks never block its I/O, whichever descriptor took
// them (I/O without a lock owner — writes of shared mappings — counts the
// locks taken through its own handle as its own). The cost is the page
// cache: every read reaches the daemon (no kernel read-ahead; reads come
// at the size the application asks for).
//
// # Unlink and rename of open files
//
// Unlinking a file that others hold open makes it delete-pending in the
// lock table (REST sees SMBDeletePending); the name leaves the mount at
// once, as POSIX expects, and the content stays readable and writable
// through the open descriptors until the last RELEASE, when the file goes.
// A rename over an open file replaces it the same way.
//
// # Coherence with REST
//
// read(2) and write(2) bypass the page cache (direct I/O, see Locks): they
// see every committed change at once. For mmap, coherence is close-to-open,
// as with NFS. The core reports changes made
// outside this mount (REST, sessions in this process) through its change
// hook; the binding only invalidates the file's attributes
// (NotifyContent with offset -1), which the kernel serves without taking
// any lock. The page cache is kept across opens (FOPEN_KEEP_CACHE) only when
// the file's version is unchanged since the kernel last cached it, so the
// next open after a REST write reads the new bytes; changes from other
// processes are found the same way at open. Names removed or renamed over
// REST leave the kernel's dentry cache within the 1 s entry timeout.
//
// Entry and page invalidation (NotifyEntry, NotifyDelete, NotifyContent of a
// range) are deliberately not used: the kernel serves them under the
// directory lock or page locks, which a request still pending in this daemon
// may hold. If the daemon is SIGKILLed at that moment the notifying thread
// never returns, the process cannot exit, and its handles stay in the lock
// table (the reliability crash matrix found this in about 5% of kills).
//
// # Errors
//
// A name the core refuses (Azure's naming rules, docs/names.md) can only be
// EINVAL or ENAMETOOLONG to the caller; the rule it broke is logged at debug
// level ("fusefs: name refused", with the operation and the name).
//
// Errors of the core, the lock table and the blob store become errno in one
// function, toErrno, following the Linux kernel's SMB client
// (fs/smb/client/smb2maperror.c) for the NT status each lock outcome stands
// for, with the exceptions POSIX requires for lock calls:
//
//	locks outcome           NT status                  errno (smb2maperror.c)   exceptions
//	ErrSharingViolation     STATUS_SHARING_VIOLATION   EBUSY                    flock: EWOULDBLOCK
//	ErrDeletePending        STATUS_DELETE_PENDING      ENOENT
//	ErrLockConflict         STATUS_FILE_LOCK_CONFLICT  EACCES                   fcntl: EAGAIN
//	ErrLockNotGranted       STATUS_LOCK_NOT_GRANTED    EACCES                   fcntl: EAGAIN, flock: EWOULDBLOCK
//	ErrRangeNotLocked       STATUS_RANGE_NOT_LOCKED    EIO
//	ErrInvalidLockRange     STATUS_INVALID_LOCK_RANGE  EIO → EINVAL (fcntl(2))
//	ErrReadOnly             STATUS_ACCESS_DENIED       EACCES
//	ErrCannotDelete         STATUS_CANNOT_DELETE       EACCES
//	ErrAccessDenied         STATUS_ACCESS_DENIED       EACCES
//	ErrDirectoryNotEmpty    STATUS_DIRECTORY_NOT_EMPTY ENOTEMPTY
//	ErrHandleClosed         STATUS_FILE_FORCED_CLOSED  EIO (force-closed handle)
//	ErrInvalidParameter     STATUS_INVALID_PARAMETER   EINVAL
//	*LeaseError             STATUS_SHARING_VIOLATION   EBUSY
//	not found               STATUS_OBJECT_NAME_NOT_FOUND ENOENT
//	exists                  STATUS_OBJECT_NAME_COLLISION EEXIST
//	cancelled context       (FUSE INTERRUPT)           EINTR
//	anything else                                      EIO
//
// Newer kernels map STATUS_DELETE_PENDING to EBUSY; on the mount a
// delete-pending name is already gone, so ENOENT is also what POSIX shows.
//
// # Not supported
//
// Hard links, symlinks, device nodes and extended attributes (Azure Files
// has none of them over FileREST): link and symlink answer ENOTSUP (go-fuse's
// default for missing methods), getxattr ENOSYS. Modes are not stored:
// like the Linux SMB client without Unix extensions (file_mode=0755,
// dir_mode=0755) files show 0755, or 0555 with the SMB ReadOnly attribute,
// and chmod only maps the write bits (no write bit left → ReadOnly, any
// write bit → not ReadOnly). A ReadOnly file refuses opens for writing
// (EACCES, root included, as the SMB server refuses them), while rm and mv
// over it work: the Linux SMB client clears the attribute and deletes
// again. uid and gid are those of the mounting process; chown is accepted
// and ignored.
package fusefs
