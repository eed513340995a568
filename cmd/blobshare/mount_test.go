package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

const fuseSuperMagic = 0x65735546

func TestMountUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing mount point", []string{"mount", "--data", dir, filepath.Join(dir, "nope")}, "does not exist"},
		{"mount point is a file", []string{"mount", "--data", dir, file}, "not a directory"},
		{"no mount point", []string{"mount", "--data", dir}, "expected one MOUNTPOINT"},
		{"bad share mode", []string{"mount", "--data", dir, "--share-mode", "exclusive", dir}, "share-mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp()
			var out, errOut bytes.Buffer
			app.Writer, app.ErrWriter = &out, &errOut
			err := app.Run(append([]string{"blobshare"}, tt.args...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

// TestMountServesAndUnmounts runs the command in-process, uses the mount,
// then cancels (as SIGINT would) and expects a clean exit.
func TestMountServesAndUnmounts(t *testing.T) {
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil || os.Geteuid() != 0 {
		if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
			t.Fatalf("BLOBSHARE_REQUIRE_ALL=1: FUSE unavailable (%v, euid %d)", err, os.Geteuid())
		}
		t.Skipf("FUSE unavailable (%v, euid %d)", err, os.Geteuid())
	} else {
		f.Close()
	}
	data, mnt := t.TempDir(), t.TempDir()
	newDataDir(t, data) // mount refuses a directory serve never made
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app := newApp()
	// Wait for the log line, not merely for the mount to appear: only
	// then has go-fuse answered its first POLL with ENOSYS. Opening a file
	// on a mount served by this very process before that deadlocks: the
	// opening thread holds the Go runtime's epoll mutex while the kernel
	// waits for the POLL answer, and the server's goroutines need that
	// mutex to open files of their own.
	errOut := newLineSignal(`msg="blobshare mounted"`)
	app.ErrWriter = errOut
	done := make(chan error, 1)
	go func() { done <- app.RunContext(ctx, []string{"blobshare", "mount", "--data", data, mnt}) }()
	errOut.wait(t, done)
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil || st.Type != fuseSuperMagic {
		t.Fatalf("logged as mounted, but %s is not a FUSE mount (type %#x, %v)", mnt, st.Type, err)
	}
	share := filepath.Join(mnt, "myshare")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatalf("mkdir at the root (creates a share): %v", err)
	}
	p := filepath.Join(share, "hello.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "hello" {
		t.Fatalf("read back: %q %v", got, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mount exited with %v\n%s", err, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("mount did not exit after cancel")
	}
	if err := syscall.Statfs(mnt, &st); err != nil || st.Type == fuseSuperMagic {
		t.Fatalf("still mounted after exit (type %#x, %v)", st.Type, err)
	}
}

// TestMountHelperProcess is not a test: TestMountAcrossProcesses runs the
// test binary through it as a separate `blobshare mount` process.
func TestMountHelperProcess(t *testing.T) {
	args := os.Getenv("BLOBSHARE_MOUNT_HELPER_ARGS")
	if args == "" {
		return // only a helper process does something here
	}
	if err := Main(append([]string{"blobshare"}, strings.Split(args, "\x1f")...)); err != nil {
		fmt.Fprintln(os.Stderr, "blobshare:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestMountAcrossProcesses runs `blobshare mount` as its own process over a
// data directory that this process also opens (as `serve` or `session`
// would): files and share modes are shared both ways, and SIGTERM unmounts
// and exits 0.
func TestMountAcrossProcesses(t *testing.T) {
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil || os.Geteuid() != 0 {
		if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
			t.Fatalf("BLOBSHARE_REQUIRE_ALL=1: FUSE unavailable (%v, euid %d)", err, os.Geteuid())
		}
		t.Skipf("FUSE unavailable (%v, euid %d)", err, os.Geteuid())
	} else {
		f.Close()
	}
	ctx := context.Background()
	data, mnt := t.TempDir(), t.TempDir()
	d, err := openDataDir(ctx, dataDirOptions{Path: data, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	if _, err := d.FS.CreateShare(ctx, fs.ShareRequest{Name: "docs"}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestMountHelperProcess$")
	cmd.Env = append(os.Environ(), "BLOBSHARE_MOUNT_HELPER_ARGS="+strings.Join([]string{"mount", "--data", data, "--share", "docs", mnt}, "\x1f"))
	errOut := newLineSignal(`msg="blobshare mounted"`)
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = syscall.Unmount(mnt, unix.MNT_DETACH)
	}()
	errOut.wait(t, exited)
	if err := syscall.Statfs(mnt, new(syscall.Statfs_t)); err != nil {
		t.Fatalf("logged as mounted, but statfs %s: %v", mnt, err)
	}

	// Written through the other process's mount, read here.
	p := filepath.Join(mnt, "report.txt")
	if err := os.WriteFile(p, []byte("from the mount"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := d.FS.GetFile(ctx, fs.GetFileRequest{Path: "docs/report.txt", Length: -1})
	if err != nil {
		t.Fatalf("read here what the mount wrote: %v", err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "from the mount" {
		t.Fatalf("content seen here: %q", got)
	}
	// RELEASE reaches the mount process after close(2) returned.
	waitNoHandles := func() {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			hs, err := d.FS.ListHandles(ctx, "docs/report.txt", false)
			if err == nil && len(hs) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("mount handles not released: %v %v", hs, err)
			}
		}
	}
	waitNoHandles()
	// A handle here sharing nothing blocks an open on the mount...
	h, _, err := d.FS.OpenByPath(ctx, fs.OpenPathRequest{Path: "docs/report.txt", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareNone}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(p); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("mount open while another process shares nothing: %v, want EBUSY", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// ...and a descriptor open on the mount blocks a handle here that does
	// not share what the mount's handle has.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("mount open after the other handle closed: %v", err)
	}
	if _, _, err := d.FS.OpenByPath(ctx, fs.OpenPathRequest{Path: "docs/report.txt", Open: fs.OpenOptions{Access: locks.AccessRead, Share: locks.ShareRead}}); !errors.Is(err, locks.ErrSharingViolation) {
		t.Errorf("open here while the mount has it read-write: %v, want ErrSharingViolation", err)
	}
	f.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred cleanup
		if err != nil {
			t.Fatalf("mount process after SIGTERM: %v\n%s", err, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("mount process did not exit after SIGTERM\n%s", errOut.String())
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil || st.Type == fuseSuperMagic {
		t.Fatalf("still mounted after exit (type %#x, %v)", st.Type, err)
	}
}

// mountsAt counts the entries of /proc/self/mountinfo whose mount point is
// dir.
func mountsAt(t *testing.T, dir string) int {
	t.Helper()
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			n++
		}
	}
	return n
}

// TestMountRefusesMountedMountPoint: with `blobshare mount` running on a
// mount point, a second `blobshare mount` and a `serve --mount` on the same
// mount point exit non-zero with one line saying it is already mounted,
// and stack nothing: one entry in mountinfo, the first mount still serves.
func TestMountRefusesMountedMountPoint(t *testing.T) {
	requireFUSE(t)
	data, mnt := t.TempDir(), t.TempDir()
	newDataDir(t, data)
	startMount(t, data, mnt)
	for name, args := range map[string][]string{
		"mount": {"mount", "--data", data, mnt},
		"serve": {"serve", "--data", data, "--mount", mnt, "--addr", "127.0.0.1:0", "--smb", "off",
			"--queue-addr", "off", "--blob-addr", "off"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := exec.Command(blobshareBinary(t), args...)
			c.Stdout, c.Stderr = &stdout, &stderr
			if err := c.Run(); err == nil {
				t.Fatalf("%s on a mounted mount point exited 0:\n%s", name, stderr.String())
			}
			// serve may log at start (its data directory's recovery); the
			// error is its last line, and the only one from mount.
			msg := stderr.String()
			lines := strings.Split(strings.TrimSuffix(msg, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "blobshare: ") || !strings.Contains(last, mnt+" is already mounted") {
				t.Errorf("last line %q, want one saying %s is already mounted", last, mnt)
			}
			if name == "mount" && len(lines) != 1 {
				t.Errorf("mount printed %d lines, want one:\n%s", len(lines), msg)
			}
			if n := mountsAt(t, mnt); n != 1 {
				t.Errorf("%d mounts at %s after the refused %s, want 1", n, mnt, name)
			}
		})
	}
	if err := os.Mkdir(filepath.Join(mnt, "still"), 0o755); err != nil {
		t.Errorf("the first mount after the refusals: %v", err)
	}
}
