package fusefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/posixtest"
	"golang.org/x/sys/unix"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// posixUnsupported names the posixtest cases blobshare deliberately does not
// support, with the reason.
var posixUnsupported = map[string]string{
	"Link":             "hard links: Azure Files has none",
	"LinkUnlinkRename": "hard links: Azure Files has none",
	"SymlinkReadlink":  "symlinks: not in FileREST",
	"SetattrSymlink":   "symlinks: not in FileREST",
	"OpenSymlinkRace":  "symlinks: not in FileREST",
	"XAttr":            "extended attributes are disabled (DisableXAttrs)",
	"XAttrLarge":       "extended attributes are disabled (DisableXAttrs)",
	// Two descriptors of one process share one POSIX lock owner, so their
	// fcntl locks never conflict (POSIX); the test expects the per-descriptor
	// (OFD) behaviour of the loopback's backing locks.
	"FcntlFlockLocksFile": "expects per-descriptor (OFD) fcntl semantics; POSIX locks of one process never conflict",
}

func TestPosix(t *testing.T) {
	names := make([]string, 0, len(posixtest.All))
	for name := range posixtest.All {
		names = append(names, name)
	}
	sort.Strings(names)
	_, share := mountShare(t)
	for _, name := range names {
		fn := posixtest.All[name]
		t.Run(name, func(t *testing.T) {
			if why, ok := posixUnsupported[name]; ok {
				t.Skip("not supported by blobshare: " + why)
			}
			dir := filepath.Join(share, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, dir)
		})
	}
}

func TestCaseInsensitiveLookup(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "Report.TXT")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"report.txt", "REPORT.TXT", "rEpOrT.tXt"} {
		got, err := os.ReadFile(filepath.Join(share, alias))
		if err != nil || string(got) != "hello" {
			t.Errorf("read %s: %q, %v", alias, got, err)
		}
	}
	// Creating under another case is the same file.
	if _, err := os.OpenFile(filepath.Join(share, "REPORT.txt"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); !errors.Is(err, os.ErrExist) {
		t.Errorf("O_EXCL create under another case: %v, want EEXIST", err)
	}
	// readdir shows the name as created.
	ents, err := os.ReadDir(share)
	if err != nil || len(ents) != 1 || ents[0].Name() != "Report.TXT" {
		t.Fatalf("readdir: %v %v", ents, err)
	}
	// After a rename the old aliases are gone at once (no alias dentry).
	if err := os.Rename(p, filepath.Join(share, "other")); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"Report.TXT", "report.txt", "REPORT.TXT"} {
		if _, err := os.Stat(filepath.Join(share, alias)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat %s after rename: %v, want ENOENT", alias, err)
		}
	}
}

// TestReaddirDots: getdents lists "." and ".." first, with the
// directory's own inode number and its parent's, then the entries; at
// the account root ".." is the root itself.
func TestReaddirDots(t *testing.T) {
	_, share := mountShare(t)
	if err := os.Mkdir(filepath.Join(share, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(share, "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) uint64 {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	mnt := filepath.Dir(share)
	tests := []struct {
		dir       string
		self, up  uint64
		wantNames []string
	}{
		{filepath.Join(share, "d"), ino(filepath.Join(share, "d")), ino(share), []string{".", "..", "f"}},
		{share, ino(share), ino(mnt), []string{".", "..", "d"}},
		{mnt, ino(mnt), ino(mnt), []string{".", "..", filepath.Base(share)}},
	}
	for _, tt := range tests {
		names, inos := getdents(t, tt.dir)
		if strings.Join(names, " ") != strings.Join(tt.wantNames, " ") {
			t.Errorf("%s: getdents names %q, want %q", tt.dir, names, tt.wantNames)
			continue
		}
		if inos[0] != tt.self || inos[1] != tt.up {
			t.Errorf("%s: . and .. inodes %d %d, want %d %d", tt.dir, inos[0], inos[1], tt.self, tt.up)
		}
	}
}

// getdents lists dir with getdents64 itself: os.ReadDir and
// unix.ParseDirent leave out "." and "..".
func getdents(t *testing.T, dir string) (names []string, inos []uint64) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			t.Fatalf("getdents %s: %v", dir, err)
		}
		if n == 0 {
			return names, inos
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		for b := buf[:n]; len(b) > 0; {
			reclen := int(b[16]) | int(b[17])<<8
			name := b[19:reclen]
			if i := strings.IndexByte(string(name), 0); i >= 0 {
				name = name[:i]
			}
			names = append(names, string(name))
			inos = append(inos, *(*uint64)(unsafe.Pointer(&b[0])))
			b = b[reclen:]
		}
	}
}

// TestFallocate: fallocate(2) through the mount. Punching a hole zeroes
// the range and leaves it out of REST's List Ranges, keeping the size;
// ZERO_RANGE zeroes, and extends the file unless KEEP_SIZE; mode 0
// extends; KEEP_SIZE alone changes nothing; COLLAPSE_RANGE is refused.
func TestFallocate(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	const size = 3 * fs.BlockSize / 2 // a whole block and a partial one
	orig := make([]byte, size)
	for i := range orig {
		orig[i] = byte(i%251 + 1)
	}
	const (
		keepSize  = unix.FALLOC_FL_KEEP_SIZE
		punchHole = unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE
		zeroRange = unix.FALLOC_FL_ZERO_RANGE
	)
	tests := []struct {
		name      string
		mode      uint32
		off, n    int64
		wantSize  int64
		zeroed    [2]int64 // [from, to) expected zero, the rest as written
		wantErr   error
		wantHoles bool // List Ranges no longer covers the zeroed range
	}{
		{"punch hole inside a block", punchHole, 1000, 5000, size, [2]int64{1000, 6000}, nil, true},
		{"punch hole over a whole block and past the end", punchHole, 0, 2 * size, size, [2]int64{0, size}, nil, true},
		{"zero range, keep size", zeroRange | keepSize, 4096, 8192, size, [2]int64{4096, 12288}, nil, true},
		{"zero range past the end extends", zeroRange, size - 10, 100, size + 90, [2]int64{size - 10, size + 90}, nil, false},
		{"mode 0 extends", 0, size, 50, size + 50, [2]int64{size, size + 50}, nil, false},
		{"keep size alone", keepSize, 0, 2 * size, size, [2]int64{}, nil, false},
		{"collapse range", unix.FALLOC_FL_COLLAPSE_RANGE, 0, 4096, size, [2]int64{}, syscall.EOPNOTSUPP, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("f%d", i)
			p := filepath.Join(share, name)
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = unix.Fallocate(int(f.Fd()), tt.mode, tt.off, tt.n)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if !errors.Is(err, tt.wantErr) && (tt.wantErr != nil || err != nil) {
				t.Fatalf("fallocate: %v, want %v", err, tt.wantErr)
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != tt.wantSize {
				t.Fatalf("size %d, want %d", len(got), tt.wantSize)
			}
			for j, c := range got {
				want := byte(0)
				if int64(j) < size && (int64(j) < tt.zeroed[0] || int64(j) >= tt.zeroed[1]) {
					want = orig[j]
				}
				if c != want {
					t.Fatalf("byte %d: %d, want %d", j, c, want)
				}
			}
			if !tt.wantHoles {
				return
			}
			rs, _, err := tfs.fsys.ListRanges(ctx, "share/"+name, locks.Range{}, "")
			if err != nil {
				t.Fatal(err)
			}
			// Clears drop the 512-aligned interior of the range.
			lo, hi := (tt.zeroed[0]+511)/512*512, tt.zeroed[1]/512*512
			for _, r := range rs {
				if r.Start < hi && r.End >= lo {
					t.Fatalf("List Ranges %v still covers [%d, %d)", rs, lo, hi)
				}
			}
		})
	}
}

func TestUnlinkWhileOpen(t *testing.T) {
	tfs, share := mountShare(t)
	p := filepath.Join(share, "doomed")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatalf("unlink while open: %v", err)
	}
	// The name leaves the mount at once...
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat after unlink: %v, want ENOENT", err)
	}
	// ...REST/SMB sees it delete-pending...
	ctx := context.Background()
	if _, _, err := tfs.fsys.Stat(ctx, "share/doomed", ""); !errors.Is(err, locks.ErrDeletePending) {
		t.Errorf("SMB view while open: %v, want ErrDeletePending", err)
	}
	// ...the descriptor keeps working...
	buf := make([]byte, 10)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "still here" {
		t.Fatalf("read after unlink: %q %v", buf, err)
	}
	if _, err := f.WriteAt([]byte("STILL"), 0); err != nil {
		t.Fatalf("write after unlink: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink != 0 {
		t.Fatalf("fstat after unlink: nlink %d, %v", st.Nlink, err)
	}
	// ...and the name can be created again meanwhile.
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatalf("re-create the name: %v", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	// The file goes when the last handle closes (RELEASE is asynchronous).
	f.Close()
	waitFor(t, "file removed after last close", func() bool {
		_, _, err := tfs.fsys.Stat(ctx, "share/doomed", "")
		return errors.Is(err, fs.ErrNotFound)
	})
}

func TestRenameOverOpenFile(t *testing.T) {
	_, share := mountShare(t)
	src, dst := filepath.Join(share, "src"), filepath.Join(share, "dst")
	if err := os.WriteFile(src, []byte("new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("old content"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Rename(src, dst); err != nil {
		t.Fatalf("rename over an open file: %v", err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != "new content" {
		t.Fatalf("dst after rename: %q %v", got, err)
	}
	buf := make([]byte, 11)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "old content" {
		t.Fatalf("old descriptor after rename: %q %v", buf, err)
	}
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("src after rename: %v", err)
	}
	// RENAME_NOREPLACE refuses an existing destination.
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = renameat2(src, dst, renameNoReplace)
	if !errors.Is(err, syscall.EEXIST) {
		t.Fatalf("RENAME_NOREPLACE over existing: %v, want EEXIST", err)
	}
}

func renameat2(oldpath, newpath string, flags uint) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, flags)
}

// TestSessionBlocksMount: a handle taken through the core (as `blobshare
// session` takes it) without shared write blocks a write open on the mount,
// and the reverse.
func TestSessionAndMountHandles(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "shared.txt")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitReleased := func() {
		waitFor(t, "mount handles released", func() bool {
			hs, err := tfs.fsys.ListHandles(ctx, "share/shared.txt", false)
			return err == nil && len(hs) == 0
		})
	}
	waitReleased()

	tests := []struct {
		name      string
		access    locks.Access
		share     locks.ShareMode
		flags     int
		wantErrno syscall.Errno // 0: open succeeds
	}{
		{"session read, share read: mount write open refused", locks.AccessRead, locks.ShareRead, os.O_WRONLY, syscall.EBUSY},
		{"session read, share read: mount read open ok", locks.AccessRead, locks.ShareRead, os.O_RDONLY, 0},
		{"session write, share none: mount read open refused", locks.AccessWrite, locks.ShareNone, os.O_RDONLY, syscall.EBUSY},
		{"session read, share all: mount rdwr ok", locks.AccessRead, locks.ShareAll, os.O_RDWR, 0},
		{"session write, share read+delete: mount rdwr refused (mount shares write, session lacks write share)", locks.AccessWrite, locks.ShareRead | locks.ShareDelete, os.O_RDWR, syscall.EBUSY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, err := tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/shared.txt", Open: fs.OpenOptions{Access: tt.access, Share: tt.share, ClientName: "session"}})
			if err != nil {
				t.Fatalf("session open: %v", err)
			}
			f, err := os.OpenFile(p, tt.flags, 0)
			if tt.wantErrno == 0 {
				if err != nil {
					t.Errorf("mount open: %v, want success", err)
				} else {
					f.Close()
				}
			} else if !errors.Is(err, tt.wantErrno) {
				if err == nil {
					f.Close()
				}
				t.Errorf("mount open: %v, want %v", err, tt.wantErrno)
			}
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
			waitReleased()
			// Once the session handle is gone the open succeeds.
			f, err = os.OpenFile(p, tt.flags, 0)
			if err != nil {
				t.Fatalf("mount open after session close: %v", err)
			}
			f.Close()
			waitReleased()
		})
	}

	// The reverse: a mount handle (share read,write,delete) blocks a
	// session open that does not share what the mount handle has.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/shared.txt", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareRead}})
	if !errors.Is(err, locks.ErrSharingViolation) {
		t.Errorf("session open (share read) while mount has it rdwr: %v, want ErrSharingViolation", err)
	}
	h, _, err := tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/shared.txt", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareAll}})
	if err != nil {
		t.Errorf("session open (share all) while mount has it rdwr: %v", err)
	} else {
		h.Close(ctx)
	}
	f.Close()
	waitReleased()
	h, _, err = tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/shared.txt", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareRead}})
	if err != nil {
		t.Errorf("session open after mount close: %v", err)
	} else {
		h.Close(ctx)
	}
}

// flockRetry retries on EINTR (the Go runtime's SIGURG interrupts FUSE
// requests).
func flockRetry(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// TestFcntlBetweenProcesses re-executes the test binary as the second
// process (see TestMain).
func TestFcntlBetweenProcesses(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "ranges")
	if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 10, Len: 10}
	if err := fcntlRetry(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatalf("F_SETLK: %v", err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"overlapping write lock refused", []string{"setlk", p, "w", "15", "10"}, "EAGAIN"},
		{"overlapping read lock refused", []string{"setlk", p, "r", "0", "11"}, "EAGAIN"},
		{"disjoint write lock granted", []string{"setlk", p, "w", "20", "10"}, "ok"},
		{"getlk reports the holder", []string{"getlk", p, "w", "0", "0"}, "F_WRLCK 10 19"},
		{"getlk on a free range", []string{"getlk", p, "w", "50", "10"}, "F_UNLCK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runHelper(t, tt.args...); got != tt.want {
				t.Errorf("helper %v: %q, want %q", tt.args, got, tt.want)
			}
		})
	}
	// close(2) of any descriptor of the file drops this process's locks.
	g, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if got := runHelper(t, "setlk", p, "w", "15", "10"); got != "ok" {
		t.Errorf("after close of another descriptor: %q, want ok", got)
	}
}

func fcntlRetry(fd uintptr, cmd int, lk *syscall.Flock_t) error {
	for {
		err := syscall.FcntlFlock(fd, cmd, lk)
		if err != syscall.EINTR {
			return err
		}
	}
}

// waitFor polls cond (RELEASE arrives after close(2) returns).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTruncateByPathWithStagedWrites: truncate(2) by path commits what an
// open descriptor of the mount has staged first, so the truncate is not
// undone by that descriptor's later flush.
func TestTruncateByPathWithStagedWrites(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "trunc")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 10000)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Size() != 100 {
		t.Fatalf("size after truncate by path and close: %v, %v; want 100", st.Size(), err)
	}
}

// TestSharedMmapWrite: stores through a shared writable mapping reach the
// file (the kernel writes the dirty pages back before FLUSH).
func TestSharedMmapWrite(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "mapped")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8192); err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	copy(mem[4090:], "mapped!")
	if err := unix.Msync(mem, unix.MS_SYNC); err != nil {
		t.Fatalf("msync: %v", err)
	}
	if err := syscall.Munmap(mem); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	got, err := os.ReadFile(p)
	if err != nil || len(got) != 8192 || string(got[4090:4097]) != "mapped!" {
		t.Fatalf("after mmap write: %d bytes %q, %v", len(got), got[4088:4100], err)
	}
}

// TestReadSeesOtherDescriptorsWrites: a read through one descriptor sees
// what another descriptor on the mount wrote before, without a close.
func TestReadSeesOtherDescriptorsWrites(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "log")
	w, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var all []byte
	for i := 0; i < 5; i++ {
		line := []byte(strings.Repeat(string(rune('a'+i)), 100) + "\n")
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
		all = append(all, line...)
		got := make([]byte, len(all)+10)
		n, err := r.ReadAt(got, 0)
		if n != len(all) || string(got[:n]) != string(all) {
			t.Fatalf("after write %d: read %d bytes (%v), want %d", i, n, err, len(all))
		}
	}
}

// TestLookupOfOpenFileKeepsStagedSize: when the entry times out and the
// kernel looks the name up again, the size includes unflushed writes.
func TestLookupOfOpenFileKeepsStagedSize(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "growing")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("tail"), 1<<20); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past the 1 s entry and attribute timeouts
	st, err := os.Stat(p)
	if err != nil || st.Size() != 1<<20+4 {
		t.Fatalf("stat by path after the timeout: %v, %v; want %d", st.Size(), err, 1<<20+4)
	}
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 1<<20); n != 4 || string(buf) != "tail" {
		t.Fatalf("read the unflushed tail: %q %v", buf[:n], err)
	}
}
