package integration

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/blobshare/blobshare/integration/servetest"
)

// startMountProcess runs `blobshare mount` as its own process over data and
// waits for its "mounted" log line; Cleanup sends SIGTERM and expects exit 0
// with the mount point released.
func startMountProcess(t *testing.T, data, mnt string, extra ...string) {
	t.Helper()
	args := append(append([]string{"mount", "--data", data}, extra...), mnt)
	cmd := exec.Command(blobshareBin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &servetest.Buffer{}
	mounted := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), `msg="blobshare mounted"`) {
				mounted <- true
			}
		}
		mounted <- false
		io.Copy(io.Discard, stderr)
	}()
	select {
	case ok := <-mounted:
		if !ok {
			cmd.Wait()
			t.Fatalf("blobshare mount exited before mounting:\n%s", log)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("blobshare mount did not mount in 60s:\n%s", log)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		if !timer.Stop() {
			t.Errorf("blobshare mount did not stop within 30s of SIGTERM:\n%s", log)
		} else if err != nil {
			t.Errorf("blobshare mount exited with %v after SIGTERM:\n%s", err, log)
		}
		if b, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(b), " "+mnt+" ") {
			t.Errorf("%s is still mounted after blobshare mount stopped", mnt)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
}

// `blobshare mount` in its own process and `blobshare serve` in another, on
// one data directory: the lock table is shared, and REST changes reach the
// other process's mount at the next open.
func TestSeparateMountProcessSharesLocksWithServe(t *testing.T) {
	requireFUSE(t)
	data := t.TempDir()
	s := startServe(t, data)
	m := &mixed{srv: s, share: serviceClient(t, s).NewShareClient("apart")}
	if _, err := m.share.Create(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	m.putFile(t, "f.txt", []byte("version 1"))

	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	startMountProcess(t, data, mnt, "--share", "apart")
	path := filepath.Join(mnt, "f.txt")

	if got, err := os.ReadFile(path); err != nil || string(got) != "version 1" {
		t.Fatalf("the mount process reads %q, %v", got, err)
	}
	// A REST write in the serve process: the next open on the other
	// process's mount must see it.
	if err := uploadAt(testCtx(t), m.file("f.txt"), 8, []byte("2")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the REST write seen through the other process's mount", func() error {
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if string(got) != "version 2" {
			return errors.New("reads " + string(got))
		}
		return nil
	})

	// A flock -x through the mount process blocks REST in the serve process.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("flock: %v", err)
	}
	if err := uploadAt(testCtx(t), m.file("f.txt"), 0, []byte("V")); !fileerror.HasCode(err, fileerror.FileLockConflict) {
		t.Fatalf("REST write under the other process's flock: %v; want FileLockConflict", err)
	}
	f.Close()
	eventually(t, "REST write after the flock holder closed", func() error {
		return uploadAt(testCtx(t), m.file("f.txt"), 0, []byte("V"))
	})
}
