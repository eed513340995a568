package fusefs

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// TestFlockBetweenProcesses uses flock(1) as the other process. flock
// behaves as on a local disk between processes on the mount: a flock
// conflicts with other open file descriptions' flocks only (never with
// opens, reads or writes), LOCK_NB fails with EWOULDBLOCK, a blocking
// flock waits its turn.
func TestFlockBetweenProcesses(t *testing.T) {
	flockBin := needTool(t, "flock")
	_, share := mountShare(t)
	p := filepath.Join(share, "lockme")
	if err := os.WriteFile(p, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	// other runs flock(1) -n once: nil or EWOULDBLOCK (exit 75).
	other := func(mode string) error {
		out, err := exec.Command(flockBin, mode, "-n", "-E", "75", p, "cat", p).CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil && string(out) == "content":
			return nil
		case errors.As(err, &ee) && ee.ExitCode() == 75:
			return syscall.EWOULDBLOCK
		}
		return errors.New(strings.TrimSpace(string(out)) + ": " + errString(err))
	}
	lockMine := func(how int) (*os.File, error) {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f, flockRetry(int(f.Fd()), how|syscall.LOCK_NB)
	}

	t.Run("LOCK_EX held: other flocks refused, I/O goes on", func(t *testing.T) {
		f, err := lockMine(syscall.LOCK_EX)
		if err != nil {
			t.Fatalf("LOCK_EX: %v", err)
		}
		defer f.Close()
		for _, mode := range []string{"-s", "-x"} {
			if got := other(mode); !errors.Is(got, syscall.EWOULDBLOCK) {
				t.Errorf("other flock %s: %v, want EWOULDBLOCK", mode, got)
			}
		}
		if out, err := exec.Command("cat", p).CombinedOutput(); err != nil || string(out) != "content" {
			t.Errorf("another process reads under LOCK_EX: %q, %v (flock is advisory between processes)", out, err)
		}
		if err := flockRetry(int(f.Fd()), syscall.LOCK_UN); err != nil {
			t.Fatal(err)
		}
		// Unlocked, the descriptor still open: nothing refuses others.
		if got := other("-x"); got != nil {
			t.Errorf("other flock -x after LOCK_UN: %v", got)
		}
	})
	t.Run("LOCK_SH held: shared ok, exclusive refused", func(t *testing.T) {
		f, err := lockMine(syscall.LOCK_SH)
		if err != nil {
			t.Fatalf("LOCK_SH: %v", err)
		}
		defer f.Close()
		if got := other("-s"); got != nil {
			t.Errorf("other flock -s: %v", got)
		}
		if got := other("-x"); !errors.Is(got, syscall.EWOULDBLOCK) {
			t.Errorf("other flock -x: %v, want EWOULDBLOCK", got)
		}
	})
	t.Run("flock -x FILE cmd run twice: the second waits its turn", func(t *testing.T) {
		first := exec.Command(flockBin, "-x", p, "-c", "echo locked; read line || true")
		stdin, err := first.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := first.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		defer first.Process.Kill()
		line := make([]byte, 7)
		if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "locked\n" {
			t.Fatalf("first flock -x: %q %v", line, err)
		}
		second := exec.Command(flockBin, "-x", p, "echo", "second")
		var out strings.Builder
		second.Stdout, second.Stderr = &out, &out
		if err := second.Start(); err != nil {
			t.Fatal(err)
		}
		secondDone := make(chan error, 1)
		go func() { secondDone <- second.Wait() }()
		select {
		case err := <-secondDone:
			t.Fatalf("second flock -x ended while the first held the lock: %v %q", err, out.String())
		case <-time.After(300 * time.Millisecond):
			// Still waiting, as it must.
		}
		stdin.Close() // the first exits, unlocking
		if err := first.Wait(); err != nil {
			t.Fatalf("first flock -x: %v", err)
		}
		if err := <-secondDone; err != nil || out.String() != "second\n" {
			t.Fatalf("second flock -x after the first: %v %q", err, out.String())
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// TestFlockOpenThenLockTakeTurns: two open file descriptions of the file
// (as two processes that each opened it), then flock on both: the second
// LOCK_EX waits until the first unlocks, instead of both hanging.
func TestFlockOpenThenLockTakeTurns(t *testing.T) {
	_, share := mountShare(t)
	p := filepath.Join(share, "turns")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := flockRetry(int(a.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("first LOCK_EX with another descriptor open: %v", err)
	}
	if err := flockRetry(int(b.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
		t.Fatalf("second LOCK_EX|LOCK_NB: %v, want EWOULDBLOCK", err)
	}
	got := make(chan error, 1)
	go func() { got <- flockRetry(int(b.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		t.Fatalf("second LOCK_EX returned while the first held it: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := flockRetry(int(a.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("second LOCK_EX after the first unlocked: %v", err)
	}
	// And back: the first now waits for the second.
	if err := flockRetry(int(a.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
		t.Fatalf("first LOCK_SH|LOCK_NB under the second's LOCK_EX: %v, want EWOULDBLOCK", err)
	}
}

// TestFlockSeenByRESTAndSMB: to REST and SMB handles a flock is a
// whole-file byte-range lock (what the Linux SMB client turns flock into):
// LOCK_EX fails their reads and writes anywhere in the file
// (FileLockConflict, STATUS_FILE_LOCK_CONFLICT) and their lock requests
// (STATUS_LOCK_NOT_GRANTED); LOCK_SH only their writes. None of them
// blocks the flock, which meets only other flocks: no deadlock either way.
func TestFlockSeenByRESTAndSMB(t *testing.T) {
	tfs, share := mountShare(t)
	ctx := context.Background()
	p := filepath.Join(share, "held")
	if err := os.WriteFile(p, make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	// An SMB-style handle (a session): opened and byte-range locked
	// before the flock, which it does not block.
	smb, _, err := tfs.fsys.OpenByPath(ctx, fs.OpenPathRequest{Path: "share/held", Open: fs.OpenOptions{Access: locks.AccessRead | locks.AccessWrite, Share: locks.ShareAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer smb.Close(ctx)
	if err := smb.Lock(ctx, locks.Range{Offset: 9000, Length: 10}, locks.LockExclusive); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flockRetry(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("LOCK_EX beside an SMB byte-range lock: %v", err)
	}
	restRead := func() error {
		r, err := tfs.fsys.GetFile(ctx, fs.GetFileRequest{Path: "share/held", Offset: 5000, Length: 10, Ranged: true})
		if err == nil {
			r.Close()
		}
		return err
	}
	restWrite := func() error {
		_, err := tfs.fsys.PutRange(ctx, fs.PutRangeRequest{Path: "share/held", Offset: 5000, Length: 1, Body: strings.NewReader("y")})
		return err
	}
	smbRead := func() error { _, err := smb.ReadAt(ctx, make([]byte, 10), 5000); return err }
	smbLock := func() error { return smb.Lock(ctx, locks.Range{Offset: 0, Length: 1}, locks.LockShared) }
	for name, call := range map[string]func() error{"REST read": restRead, "REST write": restWrite, "SMB read": smbRead} {
		if err := call(); !errors.Is(err, locks.ErrLockConflict) {
			t.Errorf("%s under LOCK_EX: %v, want ErrLockConflict", name, err)
		}
	}
	if err := smbLock(); !errors.Is(err, locks.ErrLockNotGranted) {
		t.Errorf("SMB lock under LOCK_EX: %v, want ErrLockNotGranted", err)
	}
	// The flock holder's own I/O, and another descriptor's, go on.
	if _, err := f.WriteAt([]byte("z"), 5000); err != nil {
		t.Errorf("write through the flock holder: %v", err)
	}
	if err := flockRetry(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if err := restRead(); err != nil {
		t.Errorf("REST read under LOCK_SH: %v", err)
	}
	if err := restWrite(); !errors.Is(err, locks.ErrLockConflict) {
		t.Errorf("REST write under LOCK_SH: %v, want ErrLockConflict", err)
	}
	if err := flockRetry(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{"REST read": restRead, "REST write": restWrite, "SMB read": smbRead, "SMB lock": smbLock} {
		if err := call(); err != nil {
			t.Errorf("%s after LOCK_UN: %v", name, err)
		}
	}
}
