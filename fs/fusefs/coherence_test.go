package fusefs

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// TestRESTChangesVisibleOnNextOpen: a change made through REST — in this
// process (the change hook) or by another process on the same data
// directory (no hook: the version check at open) — is what the next open
// on the mount reads, although the kernel cached the old pages and size.
func TestRESTChangesVisibleOnNextOpen(t *testing.T) {
	tfs, share := mountShare(t)
	// A second file system on the same data directory stands for another
	// process (its own owner in the lock table, no change hook to us).
	other := openTestFS(t, tfs.data)
	ctx := context.Background()

	tests := []struct {
		name string
		fsys *fs.FileSystem
	}{
		{"same process", tfs.fsys},
		{"other process", other.fsys},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "coherent" + string(rune('a'+i))
			p := filepath.Join(share, name)
			old := bytes.Repeat([]byte("o"), 8192)
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
			// Read twice: the second open may keep the page cache.
			for j := 0; j < 2; j++ {
				if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, old) {
					t.Fatalf("read %d: %d bytes, %v", j, len(got), err)
				}
			}
			waitNoHandles(t, tfs, "share/"+name)
			// REST: grow the file and overwrite a range.
			size := int64(12288)
			if _, err := tt.fsys.SetProperties(ctx, fs.SetPropertiesRequest{Path: "share/" + name, Size: &size}); err != nil {
				t.Fatalf("REST resize: %v", err)
			}
			patch := bytes.Repeat([]byte("R"), 4096)
			if _, err := tt.fsys.PutRange(ctx, fs.PutRangeRequest{Path: "share/" + name, Offset: 4096, Length: 4096, Body: bytes.NewReader(patch)}); err != nil {
				t.Fatalf("REST put range: %v", err)
			}
			want := append(append(bytes.Repeat([]byte("o"), 4096), patch...), make([]byte, 4096)...)
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("next open reads %d bytes (err %v), want %d; first diff at %d", len(got), err, len(want), firstDiff(got, want))
			}
		})
	}
}

// TestMountWriteAndRESTPutRangeBothSurvive: a FUSE write staged in an open
// handle and a REST Put Range on another range of the same file, committed
// in between, both survive the handle's flush.
func TestMountWriteAndRESTPutRangeBothSurvive(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "merge")
	if err := os.WriteFile(p, make([]byte, 3*4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine := bytes.Repeat([]byte("F"), 4096)
	if _, err := f.WriteAt(mine, 0); err != nil {
		t.Fatal(err)
	}
	theirs := bytes.Repeat([]byte("R"), 4096)
	if _, err := tfs.fsys.PutRange(ctx, fs.PutRangeRequest{Path: "share/merge", Offset: 8192, Length: 4096, Body: bytes.NewReader(theirs)}); err != nil {
		t.Fatalf("REST put range while the mount has the file open: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close (flush): %v", err)
	}
	got, err := os.ReadFile(p)
	want := append(append(append([]byte{}, mine...), make([]byte, 4096)...), theirs...)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("content: %d bytes (err %v), first diff at %d", len(got), err, firstDiff(got, want))
	}
}

// TestForceClosedHandleIsEIO: Force Close Handles through REST makes the
// mount's descriptor answer EIO.
func TestForceClosedHandleIsEIO(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "victim")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The kernel sends the writer's RELEASE after close(2) returns.
	waitNoHandles(t, tfs, "share/victim")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := tfs.fsys.ForceCloseHandles(ctx, "share/victim", 0, true, false)
	if err != nil || n != 1 {
		t.Fatalf("force close: %d, %v", n, err)
	}
	buf := make([]byte, 4)
	if _, err := f.ReadAt(buf, 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("read through a force-closed handle: %v, want EIO", err)
	}
}

// TestReadOnlyAttribute: chmod a-w sets the SMB ReadOnly attribute (REST
// sees it); the file then opens for reading but not for writing,
// appending or truncating (EACCES, the Linux SMB client's answer to
// STATUS_ACCESS_DENIED), and its data stays; chmod u+w clears it. rm and
// mv over it remove a ReadOnly file, as the Linux SMB client does by
// clearing the attribute and deleting again.
func TestReadOnlyAttribute(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "ro")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := func() bool {
		t.Helper()
		a, _, err := tfs.fsys.Stat(ctx, "share/ro", "")
		if err != nil {
			t.Fatal(err)
		}
		return a.Attributes&fs.AttrReadOnly != 0
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if !readOnly() {
		t.Fatal("REST attributes after chmod 0444: no ReadOnly")
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o555 {
		t.Fatalf("mode after chmod 0444: %v, %v", st.Mode(), err)
	}
	for _, flags := range []int{os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_APPEND, os.O_WRONLY | os.O_TRUNC} {
		f, err := os.OpenFile(p, flags, 0)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, syscall.EACCES) {
			t.Fatalf("open(0x%x) of a ReadOnly file: %v, want EACCES", flags, err)
		}
	}
	if err := os.Truncate(p, 1); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("truncate(2) of a ReadOnly file: %v, want EACCES", err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "keep" {
		t.Fatalf("read of a ReadOnly file: %q, %v", got, err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if readOnly() {
		t.Fatal("REST attributes after chmod 0644: still ReadOnly")
	}
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatalf("write after clearing ReadOnly: %v", err)
	}
	// mv over a ReadOnly file replaces it (the client unlinks the target
	// the same way).
	src := filepath.Join(share, "src")
	if err := os.WriteFile(src, []byte("moved"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, p); err != nil {
		t.Fatalf("mv over a ReadOnly file: %v", err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "moved" {
		t.Fatalf("after mv over a ReadOnly file: %q, %v", got, err)
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatalf("rm of a ReadOnly file: %v", err)
	}
	if _, _, err := tfs.fsys.Stat(ctx, "share/ro", ""); !errors.Is(err, fs.ErrNotFound) {
		t.Fatalf("REST stat after rm: %v, want ErrNotFound", err)
	}
}

// TestSetlkwWaitsForRelease: F_SETLKW in another process blocks until this
// process unlocks, then succeeds.
func TestSetlkwWaitsForRelease(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "wait")
	if err := os.WriteFile(p, make([]byte, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: 0, Len: 0}
	if err := fcntlRetry(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	start := time.Now()
	go func() { done <- runHelper(t, "setlkw", p, "w", "0", "0") }()
	time.Sleep(300 * time.Millisecond)
	select {
	case got := <-done:
		t.Fatalf("F_SETLKW returned %q while the lock was held", got)
	default:
	}
	unlk := syscall.Flock_t{Type: syscall.F_UNLCK, Start: 0, Len: 0}
	if err := fcntlRetry(f.Fd(), syscall.F_SETLK, &unlk); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got != "ok" {
			t.Fatalf("F_SETLKW after unlock: %q", got)
		}
		t.Logf("F_SETLKW granted %v after the request", time.Since(start).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("F_SETLKW not granted after unlock")
	}
}

// TestShareModeOption: a mount with --share-mode none refuses a second
// open of a file the mount already has open (EBUSY), and a session sees
// the mount's opens as sharing nothing.
func TestShareModeOption(t *testing.T) {
	needFUSE(t)
	tfs := openTestFS(t, t.TempDir())
	m := mountTestFS(t, tfs, Options{ShareMode: locks.ShareNone})
	share := filepath.Join(m.Dir(), "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(share, "excl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := os.Open(p); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("second open under share mode none: %v, want EBUSY", err)
	}
	_, _, err = tfs.fsys.OpenByPath(context.Background(), fs.OpenPathRequest{Path: "share/excl", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareAll}})
	if !errors.Is(err, locks.ErrSharingViolation) {
		t.Fatalf("session open: %v, want ErrSharingViolation", err)
	}
	// Close then reopen at once: the reopen must not meet the handle whose
	// RELEASE is still on its way.
	f.Close()
	for i := 0; i < 20; i++ {
		g, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("reopen %d right after close: %v", i, err)
		}
		g.Close()
	}
}

// TestSingleShareMount mounts one share at the mount point.
func TestSingleShareMount(t *testing.T) {
	needFUSE(t)
	tfs := openTestFS(t, t.TempDir())
	ctx := context.Background()
	if _, err := tfs.fsys.CreateShare(ctx, fs.ShareRequest{Name: "only"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tfs.fsys.CreateFile(ctx, fs.CreateFileRequest{Path: "only/rest.txt", Size: 3}); err != nil {
		t.Fatal(err)
	}
	m := mountTestFS(t, tfs, Options{Share: "only", ShareMode: DefaultShareMode})
	got, err := os.ReadFile(filepath.Join(m.Dir(), "rest.txt"))
	if err != nil || !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Fatalf("REST-created file on the share mount: %q %v", got, err)
	}
	// A missing share is a clear error.
	dir := t.TempDir()
	_, err = Mount(ctx, dir, tfs.fsys, Options{Share: "missing"})
	if !errors.Is(err, fs.ErrNotFound) && !errors.Is(err, fs.ErrShareNotFound) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("mount of a missing share: %v", err)
	}
}

func waitNoHandles(t *testing.T, tfs *testFS, path string) {
	t.Helper()
	waitFor(t, "handles of "+path+" released", func() bool {
		hs, err := tfs.fsys.ListHandles(context.Background(), path, false)
		return err == nil && len(hs) == 0
	})
}

// TestSetlkwInterrupted: an interrupted F_SETLKW wait (the request's
// context is cancelled when the kernel sends INTERRUPT) answers EINTR; the
// kernel turns that into a restart for SA_RESTART handlers, so this is
// checked at the handle, without a signal.
func TestSetlkwInterrupted(t *testing.T) {
	tfs := openTestFS(t, t.TempDir())
	ctx := context.Background()
	sh, err := tfs.fsys.Mkdir(ctx, fs.RootID, "share")
	if err != nil {
		t.Fatal(err)
	}
	open := func() *fileHandle {
		h, _, err := tfs.fsys.Create(ctx, fs.CreateRequest{Parent: sh.ID, Name: "f", Open: fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareAll}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(ctx) })
		return &fileHandle{n: &node{id: h.File()}, h: h}
	}
	a, b := open(), open()
	whole := &fuse.FileLock{Start: 0, End: math.MaxInt64, Typ: syscall.F_WRLCK}
	if errno := a.Setlk(ctx, 1, whole, 0); errno != 0 {
		t.Fatalf("holder F_SETLK: %v", errno)
	}
	if errno := a.Setlk(ctx, 1, whole, fuse.FUSE_LK_FLOCK); errno != 0 { // only flocks refuse flocks
		t.Fatalf("holder flock LOCK_EX|LOCK_NB: %v", errno)
	}
	tests := []struct {
		name string
		call func(ctx context.Context) syscall.Errno
	}{
		{"fcntl F_SETLKW", func(ctx context.Context) syscall.Errno { return b.Setlkw(ctx, 2, whole, 0) }},
		{"flock LOCK_EX", func(ctx context.Context) syscall.Errno { return b.Setlkw(ctx, 2, whole, fuse.FUSE_LK_FLOCK) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if errno := tt.call(cctx); errno != syscall.EINTR {
				t.Fatalf("interrupted wait: %v, want EINTR", errno)
			}
		})
	}
	// Non-blocking: the POSIX answers.
	if errno := b.Setlk(ctx, 2, whole, 0); errno != syscall.EAGAIN {
		t.Fatalf("F_SETLK conflict: %v, want EAGAIN", errno)
	}
	if errno := b.Setlk(ctx, 2, whole, fuse.FUSE_LK_FLOCK); errno != syscall.EWOULDBLOCK {
		t.Fatalf("flock LOCK_EX|LOCK_NB conflict: %v, want EWOULDBLOCK", errno)
	}
}

// TestChownAndSameChmodOnOpenFile: fchown and an fchmod that keeps the
// write bits (tar -x sends both before close) change nothing and answer
// the attributes the descriptor sees, unflushed writes included; the data
// commits at close as usual.
func TestChownAndSameChmodOnOpenFile(t *testing.T) {
	tfs, share := mountShare(t)
	p := filepath.Join(share, "owned")
	fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	open := true
	defer func() {
		if open {
			syscall.Close(fd)
		}
	}()
	if _, err := syscall.Write(fd, []byte("staged")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fchown(fd, 0, 0); err != nil {
		t.Fatalf("fchown: %v", err)
	}
	if err := syscall.Fchmod(fd, 0o644); err != nil {
		t.Fatalf("fchmod 0644: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 6 || st.Mode&0o777 != 0o755 {
		t.Fatalf("fstat after fchown and fchmod: size %d mode %o, want 6 and 755", st.Size, st.Mode&0o777)
	}
	open = false
	if err := syscall.Close(fd); err != nil {
		t.Fatal(err)
	}
	a, _, err := tfs.fsys.Stat(context.Background(), "share/owned", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Size != 6 || a.Attributes&fs.AttrReadOnly != 0 {
		t.Fatalf("REST view after close: size %d attributes %v", a.Size, a.Attributes)
	}
}
