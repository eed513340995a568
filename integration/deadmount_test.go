package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blobshare/blobshare/integration/servetest"
)

// mountEntries counts the entries of /proc/self/mountinfo mounted at dir.
func mountEntries(t *testing.T, dir string) int {
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

// TestServeReplacesDeadMount: after serve --mount is killed with SIGKILL,
// its dead FUSE mount stays ("Transport endpoint is not connected"); the
// next serve on the same mount point detaches it itself and mounts once:
// one entry in mountinfo, and the files are there.
func TestServeReplacesDeadMount(t *testing.T) {
	requireFUSE(t)
	data := t.TempDir()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for mountEntries(t, mnt) > 0 {
			if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
				t.Errorf("detach %s: %v", mnt, err)
				return
			}
		}
	})
	first, err := servetest.Start(blobshareBin, data, "--mount", mnt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mnt, "share"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "share", "kept"), []byte("before the kill"), 0o644); err != nil {
		t.Fatal(err)
	}
	first.Cmd.Process.Kill() // no Detach: the dead mount stays, as after a crash
	<-first.Done
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(mnt, &sfs); err != syscall.ENOTCONN {
		t.Fatalf("statfs of the killed server's mount: %v, want ENOTCONN (a dead mount)", err)
	}

	second := startServe(t, data, "--mount", mnt)
	if second.Mount != mnt {
		t.Fatalf("serve mounted at %q, want %q", second.Mount, mnt)
	}
	if n := mountEntries(t, mnt); n != 1 {
		t.Fatalf("%d entries at %s in /proc/self/mountinfo, want 1", n, mnt)
	}
	got, err := os.ReadFile(filepath.Join(mnt, "share", "kept"))
	if err != nil || string(got) != "before the kill" {
		t.Fatalf("read through the new mount: %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "share", "after"), []byte("after"), 0o644); err != nil {
		t.Fatalf("write through the new mount: %v", err)
	}
}
