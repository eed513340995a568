package fusefs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The plumbing alone, over go-fuse's loopback: mount, I/O, unmount.
func TestMountPlumbingLoopback(t *testing.T) {
	m := mountLoopback(t)
	var st syscall.Statfs_t
	if err := syscall.Statfs(m.Dir(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != 0x65735546 {
		t.Fatalf("statfs type %#x, want FUSE 0x65735546", st.Type)
	}
	p := filepath.Join(m.Dir(), "f")
	want := bytes.Repeat([]byte("blobshare"), 1000)
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, err %v", len(got), err)
	}
}

func TestMountMissingMountPoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "does-not-exist")
	_, err := mountNode(context.Background(), dir, nil, mountConfig{})
	if !errors.Is(err, ErrMount) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrMount wrapping ErrNotExist", err)
	}
}

func TestUnmountOnContextCancel(t *testing.T) {
	needFUSE(t)
	orig := t.TempDir()
	dir := t.TempDir()
	root, err := newLoopbackForTest(orig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, err := mountNode(ctx, dir, root, mountConfig{})
	if err != nil {
		skipOrFail(t, "mount: %v", err)
	}
	cancel()
	m.Wait()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == 0x65735546 {
		t.Fatal("still a FUSE mount after cancel")
	}
	if err := m.Unmount(); err != nil {
		t.Fatalf("second Unmount: %v", err)
	}
}

// TestUnmountBusyDetachesLazily: a file held open inside the mount makes
// umount(2) busy; Unmount then detaches lazily and says so.
func TestUnmountBusyDetachesLazily(t *testing.T) {
	needFUSE(t)
	orig, dir := t.TempDir(), t.TempDir()
	root, err := newLoopbackForTest(orig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mountNode(context.Background(), dir, root, mountConfig{})
	if err != nil {
		skipOrFail(t, "mount: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, "held"))
	if err != nil {
		m.Unmount()
		t.Fatal(err)
	}
	err = m.Unmount()
	if !errors.Is(err, ErrDetached) {
		t.Errorf("Unmount with a file open inside: %v, want ErrDetached", err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type == 0x65735546 {
		t.Errorf("mount point still a FUSE mount after lazy detach (type %#x, %v)", st.Type, err)
	}
	// The held file still works until closed; then the loop ends.
	if _, err := f.Write([]byte("still reachable")); err != nil {
		t.Errorf("write to the held file after detach: %v", err)
	}
	f.Close()
	select {
	case <-m.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("serving loop did not end after the last file closed")
	}
}
