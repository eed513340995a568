package fusefs

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestUnmountWaitsForNotifiers: the goroutine that tells the kernel about a
// change made outside the mount belongs to the mount: Done (and so Wait
// and Unmount) comes only after it has finished.
func TestUnmountWaitsForNotifiers(t *testing.T) {
	needFUSE(t)
	tfs := openTestFS(t, t.TempDir())
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var finished atomic.Bool
	hook := func(n *node) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		finished.Store(true)
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := Mount(context.Background(), dir, tfs.fsys, Options{ShareMode: DefaultShareMode, Logger: testLogger(t), notify: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
		m.Unmount()
	}()
	if err := os.Mkdir(filepath.Join(dir, "share"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "share", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A change from outside the mount (as REST would make it).
	if _, err := tfs.fsys.SetMetadata(context.Background(), "share/f", map[string]string{"k": "v"}, ""); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := syscall.Unmount(dir, 0); err != nil {
		t.Fatalf("umount: %v", err)
	}
	m.srv.Wait() // the serving loop has ended
	select {
	case <-m.Done():
		if !finished.Load() {
			t.Fatal("the mount ended while its notifier goroutine was still running")
		}
	case <-time.After(500 * time.Millisecond):
		// Held back by the running notifier, as it must be.
	}
	close(release)
	<-m.Done()
	if !finished.Load() {
		t.Fatal("Done closed before the notifier finished")
	}
}
