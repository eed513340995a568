package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

var (
	sessionBinOnce sync.Once
	sessionBinPath string
	sessionBinErr  error
)

// blobshareBinary builds the real binary once per test run.
func blobshareBinary(t *testing.T) string {
	t.Helper()
	sessionBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "blobshare-session-test-")
		if err != nil {
			sessionBinErr = err
			return
		}
		sessionBinPath = filepath.Join(dir, "blobshare")
		out, err := exec.Command("go", "build", "-o", sessionBinPath, ".").CombinedOutput()
		if err != nil {
			sessionBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if sessionBinErr != nil {
		t.Fatal(sessionBinErr)
	}
	return sessionBinPath
}

// sessionProc is one running `blobshare session` child process.
type sessionProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb *bytes.Buffer
}

func startSession(t *testing.T, data string) *sessionProc {
	t.Helper()
	cmd := exec.Command(blobshareBinary(t), "session", "--data", data)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &sessionProc{t: t, cmd: cmd, in: in, out: bufio.NewReader(outPipe), errb: &errb}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// do sends one command line and returns the answer line.
func (p *sessionProc) do(line string) string {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v (stderr: %s)", line, err, p.errb.String())
	}
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := p.out.ReadString('\n')
		ch <- res{strings.TrimRight(s, "\n"), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("answer to %q: %v (stderr: %s)", line, r.err, p.errb.String())
		}
		return r.s
	case <-time.After(20 * time.Second):
		p.t.Fatalf("no answer to %q (stderr: %s)", line, p.errb.String())
	}
	return ""
}

// expect sends a line and checks the answer (a prefix match for "ok " answers
// ending in a space, exact otherwise).
func (p *sessionProc) expect(line, want string) string {
	p.t.Helper()
	got := p.do(line)
	if strings.HasSuffix(want, " ") && strings.HasPrefix(got, want) || got == want {
		return got
	}
	p.t.Fatalf("%q answered %q, want %q", line, got, want)
	return got
}

// wait closes stdin and waits for the exit status.
func (p *sessionProc) wait() error {
	p.t.Helper()
	p.in.Close()
	ch := make(chan error, 1)
	go func() { ch <- p.cmd.Wait() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		p.t.Fatal("session did not exit")
	}
	return nil
}

// newDataDir makes an empty data directory at data, as serve's first start
// does.
func newDataDir(t *testing.T, data string) {
	t.Helper()
	dd, err := openDataDir(context.Background(), dataDirOptions{Path: data, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := dd.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// seed opens the data directory in this process to create shares and files.
func seed(t *testing.T, data string) *dataDir {
	t.Helper()
	dd, err := openDataDir(context.Background(), dataDirOptions{Path: data, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dd.Close(context.Background()) })
	if _, err := dd.FS.CreateShare(context.Background(), fs.ShareRequest{Name: "share"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dd.FS.CreateDirectory(context.Background(), fs.CreateDirectoryRequest{Path: "share/dir"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dd.FS.CreateFile(context.Background(), fs.CreateFileRequest{Path: "share/dir/file", Size: 4}); err != nil {
		t.Fatal(err)
	}
	return dd
}

func TestSessionBasics(t *testing.T) {
	data := t.TempDir()
	dd := seed(t, data)
	s := startSession(t, data)
	steps := []struct{ line, want string }{
		{"open a share/dir/file access=read,write share=read,write,delete", "ok "},
		{"write a 0 68656c6c6f", "ok"},
		{"read a 0 5", "ok 68656c6c6f"},
		{"read a 3 100", "ok 6c6f"},
		{"read a 100 1", "err STATUS_END_OF_FILE"},
		{"lock a 0 10 exclusive", "ok"},
		{"unlock a 0 10", "ok"},
		{"unlock a 0 10", "err STATUS_RANGE_NOT_LOCKED"},
		{"open b share/dir/missing access=read share=read", "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"open b share/nodir/x access=read share=read disposition=open_if", "err STATUS_OBJECT_PATH_NOT_FOUND"},
		{"open b share/dir/file access=read share=read disposition=create", "err STATUS_OBJECT_NAME_COLLISION"},
		{"open b share/dir/new access=read,write share=none disposition=create", "ok "},
		{"open a share/dir/new access=read share=read", "err STATUS_INVALID_PARAMETER"}, // id in use
		{"close b", "ok"},
		{"close b", "err STATUS_INVALID_HANDLE"},
		{"bogus", "err STATUS_INVALID_PARAMETER"},
		{"open c share/dir/file access=nope share=read", "err STATUS_INVALID_PARAMETER"},
		{"open c share/dir/file access=read", "err STATUS_INVALID_PARAMETER"},
		{"open c share/dir/file access=read share=read disposition=sometimes", "err STATUS_INVALID_PARAMETER"},
		{"read a x 1", "err STATUS_INVALID_PARAMETER"},
		{"write a 0 zz", "err STATUS_INVALID_PARAMETER"},
		{"lock a 0 1 sometimes", "err STATUS_INVALID_PARAMETER"},
		{"dispose a maybe", "err STATUS_INVALID_PARAMETER"},
		{"dispose a true", "err STATUS_ACCESS_DENIED"}, // no DELETE access
		{"attrs share/dir/file ReadOnly,Hidden", "ok"},
		{"attrs share/dir/file Bogus", "err STATUS_INVALID_PARAMETER"},
		// A ReadOnly file opens for reading, not for writing, appending,
		// overwriting or deleting on close (MS-FSA 2.1.5.1.2.1).
		{"open e share/dir/file access=write share=read,write,delete", "err STATUS_ACCESS_DENIED"},
		{"open e share/dir/file access=append share=read,write,delete", "err STATUS_ACCESS_DENIED"},
		{"open e share/dir/file access=read share=read,write,delete disposition=overwrite_if", "err STATUS_ACCESS_DENIED"},
		{"open e share/dir/file access=read,delete share=read,write,delete delete_on_close", "err STATUS_CANNOT_DELETE"},
		{"open d share/dir/file access=read,delete share=read,write,delete", "ok "},
		{"dispose d true", "err STATUS_CANNOT_DELETE"},
		{"attrs share/dir/file None", "ok"},
		{"close d", "ok"},
		{"quit", "ok"},
	}
	for _, st := range steps {
		s.expect(st.line, st.want)
	}
	if err := s.wait(); err != nil {
		t.Fatalf("exit: %v (stderr %s)", err, s.errb.String())
	}
	// The session's write landed and its handles are gone.
	hs, err := dd.FS.ListHandles(context.Background(), "share", true)
	if err != nil || len(hs) != 0 {
		t.Fatalf("handles left after quit: %v %v", hs, err)
	}
	fr, err := dd.FS.GetFile(context.Background(), fs.GetFileRequest{Path: "share/dir/file", Length: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(fr)
	fr.Close()
	if string(got) != "hello" {
		t.Fatalf("file holds %q", got)
	}
}

func TestSessionTwoSessionsConflict(t *testing.T) {
	data := t.TempDir()
	seed(t, data)
	s1 := startSession(t, data)
	s2 := startSession(t, data)
	s1.expect("open a share/dir/file access=write share=read", "ok ")
	// B wants write; A does not share it (row 2).
	s2.expect("open b share/dir/file access=write share=read,write,delete", "err STATUS_SHARING_VIOLATION")
	// B does not share write while A writes (row 5).
	s2.expect("open b share/dir/file access=read share=read", "err STATUS_SHARING_VIOLATION")
	s2.expect("open b share/dir/file access=read share=read,write,delete", "ok ")
	// Byte-range locks across processes.
	s1.expect("lock a 0 2 exclusive", "ok")
	s2.expect("read b 0 1", "err STATUS_FILE_LOCK_CONFLICT")
	s2.expect("read b 2 2", "ok 0000")
	s2.expect("lock b 1 1 shared", "err STATUS_LOCK_NOT_GRANTED")
	s1.expect("close a", "ok")
	s2.expect("read b 0 1", "ok 00")
	// Delete-pending through a disposition.
	s1.expect("open d share/dir/file access=read,delete share=read,write,delete", "ok ")
	s1.expect("dispose d true", "ok")
	s2.expect("open c share/dir/file access=read share=read,write,delete", "err STATUS_DELETE_PENDING")
	s1.expect("dispose d false", "ok")
	s2.expect("open c share/dir/file access=read share=read,write,delete", "ok ")
	s2.expect("close c", "ok")
	s1.expect("dispose d true", "ok")
	s1.expect("close d", "ok")
	// b still holds it open: still pending; when b closes it is gone.
	s1.expect("open e share/dir/file access=read share=read,write,delete", "err STATUS_DELETE_PENDING")
	s2.expect("close b", "ok")
	s1.expect("open e share/dir/file access=read share=read,write,delete", "err STATUS_OBJECT_NAME_NOT_FOUND")
	if err := s1.wait(); err != nil {
		t.Fatal(err)
	}
	if err := s2.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestSessionEOFRunsDeleteOnClose(t *testing.T) {
	data := t.TempDir()
	dd := seed(t, data)
	s := startSession(t, data)
	s.expect("open t share/dir/tmp access=read,write,delete share=read disposition=create delete_on_close", "ok ")
	s.expect("write t 0 00ff", "ok")
	if _, _, err := dd.FS.Stat(context.Background(), "share/dir/tmp", ""); err != nil {
		t.Fatalf("file while open: %v", err)
	}
	if err := s.wait(); err != nil { // EOF, no quit
		t.Fatalf("exit status: %v", err)
	}
	if _, _, err := dd.FS.Stat(context.Background(), "share/dir/tmp", ""); !errors.Is(err, fs.ErrNotFound) {
		t.Fatalf("delete-on-close file after EOF: %v", err)
	}
}

func TestSessionKilledHandlesAreReaped(t *testing.T) {
	data := t.TempDir()
	seed(t, data)
	s1 := startSession(t, data)
	s1.expect("open a share/dir/file access=read,write share=none", "ok ")
	s1.expect("lock a 0 4 exclusive", "ok")
	s2 := startSession(t, data)
	s2.expect("open b share/dir/file access=read share=read,write,delete", "err STATUS_SHARING_VIOLATION")
	if err := s1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s1.cmd.Wait()
	// The next process that opens the database (or meets the dead owner's
	// handle) cleans up.
	s3 := startSession(t, data)
	s3.expect("open c share/dir/file access=read,write share=read,write,delete", "ok ")
	s3.expect("read c 0 4", "ok 00000000")
	s2.expect("open b share/dir/file access=read share=read,write,delete", "ok ")
	if err := s3.wait(); err != nil {
		t.Fatal(err)
	}
	if err := s2.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestSessionForceClosedHandle(t *testing.T) {
	data := t.TempDir()
	dd := seed(t, data)
	s := startSession(t, data)
	s.expect("open a share/dir/file access=read share=read,write,delete", "ok ")
	n, err := dd.FS.ForceCloseHandles(context.Background(), "share/dir/file", 0, true, false)
	if err != nil || n != 1 {
		t.Fatalf("force close: %d %v", n, err)
	}
	s.expect("read a 0 1", "err STATUS_FILE_CLOSED")
	s.expect("close a", "err STATUS_FILE_CLOSED")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestNTStatusMapping(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", locks.ErrSharingViolation), "STATUS_SHARING_VIOLATION"},
		{&locks.LeaseError{Code: locks.LeaseIDMissing}, "STATUS_SHARING_VIOLATION"},
		{locks.ErrDeletePending, "STATUS_DELETE_PENDING"},
		{locks.ErrLockConflict, "STATUS_FILE_LOCK_CONFLICT"},
		{locks.ErrLockNotGranted, "STATUS_LOCK_NOT_GRANTED"},
		{locks.ErrRangeNotLocked, "STATUS_RANGE_NOT_LOCKED"},
		{locks.ErrInvalidLockRange, "STATUS_INVALID_LOCK_RANGE"},
		{locks.ErrCannotDelete, "STATUS_CANNOT_DELETE"},
		{locks.ErrAccessDenied, "STATUS_ACCESS_DENIED"},
		{locks.ErrReadOnly, "STATUS_ACCESS_DENIED"},
		{fs.ErrNotEmpty, "STATUS_DIRECTORY_NOT_EMPTY"},
		{locks.ErrHandleClosed, "STATUS_FILE_CLOSED"},
		{locks.ErrInvalidParameter, "STATUS_INVALID_PARAMETER"},
		{locks.ErrHandleLimit, "STATUS_TOO_MANY_OPENED_FILES"},
		{&fs.Error{Op: "open", Path: "a/b", Err: fs.ErrNotFound}, "STATUS_OBJECT_NAME_NOT_FOUND"},
		{fs.ErrParentNotFound, "STATUS_OBJECT_PATH_NOT_FOUND"},
		{fs.ErrShareNotFound, "STATUS_BAD_NETWORK_NAME"},
		{fs.ErrExist, "STATUS_OBJECT_NAME_COLLISION"},
		{fs.ErrIsDir, "STATUS_FILE_IS_A_DIRECTORY"},
		{fs.ErrNotDir, "STATUS_NOT_A_DIRECTORY"},
		{fs.ErrInvalidName, "STATUS_OBJECT_NAME_INVALID"},
		{io.EOF, "STATUS_END_OF_FILE"},
		{errBadLine, "STATUS_INVALID_PARAMETER"},
		{errors.New("disk on fire"), "STATUS_UNSUCCESSFUL"},
	}
	for _, tt := range tests {
		if got := ntStatus(tt.err); got != tt.want {
			t.Errorf("ntStatus(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// requireFUSE skips (or, under BLOBSHARE_REQUIRE_ALL=1, fails) without FUSE.
func requireFUSE(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err == nil {
		f.Close()
	}
	if err != nil || os.Geteuid() != 0 {
		if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
			t.Fatalf("BLOBSHARE_REQUIRE_ALL=1: FUSE unavailable (%v, euid %d)", err, os.Geteuid())
		}
		t.Skipf("FUSE unavailable (%v, euid %d)", err, os.Geteuid())
	}
}

// startMount runs `blobshare mount` as a separate process and waits for it.
func startMount(t *testing.T, data, mnt string) {
	t.Helper()
	cmd := exec.Command(blobshareBinary(t), "mount", "--data", data, mnt)
	errb := newLineSignal(`msg="blobshare mounted"`)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	errb.wait(t, exited)
}

// TestSessionVersusMount: a session handle blocks an open through a mount
// served by another process, and a mount open blocks a session open.
func TestSessionVersusMount(t *testing.T) {
	requireFUSE(t)
	data, mnt := t.TempDir(), t.TempDir()
	seed(t, data)
	startMount(t, data, mnt)
	path := filepath.Join(mnt, "share", "dir", "file")
	s := startSession(t, data)

	// Session first: share=none denies every data open through the mount.
	s.expect("open a share/dir/file access=read,write share=none", "ok ")
	if f, err := os.Open(path); !errors.Is(err, syscall.EBUSY) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("mount open under a share=none session handle: %v, want EBUSY", err)
	}
	s.expect("close a", "ok")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("mount open after the session closed: %v", err)
	}
	f.Close()

	// Mount first: a writer through the mount (share read,write,delete)
	// blocks a session open that does not share write.
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.expect("open b share/dir/file access=read share=read", "err STATUS_SHARING_VIOLATION")
	s.expect("open c share/dir/file access=read share=read,write,delete", "ok ")
	s.expect("close c", "ok")
	w.Close()
	// RELEASE reaches the daemon after close(2) returns: poll briefly.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := s.do("open b share/dir/file access=read share=read")
		if strings.HasPrefix(got, "ok ") {
			break
		}
		if got != "err STATUS_SHARING_VIOLATION" || time.Now().After(deadline) {
			t.Fatalf("session open after the mount closed: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.expect("quit", "ok")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestSessionMalformedLines: every malformed line gets one clear answer,
// never a panic (in-process, over a real data directory).
func TestSessionMalformedLines(t *testing.T) {
	dd := seed(t, t.TempDir())
	s := newSession(dd.FS, slog.New(slog.NewTextHandler(io.Discard, nil)))
	lines := []string{
		"open", "open a", "open a share/dir/file", "open a share/dir/file access=read",
		"open a share/dir/file access= share=", "open a share/dir/file access=read share=none,read",
		"open a /share/x access=read share=read", "open a share//x access=read share=read",
		"open a share/dir/file access=read share=read delete_on_close=1",
		"close", "close a b", "dispose", "dispose a", "lock a", "lock a 1 2", "lock a -1 2 shared",
		"lock a 18446744073709551615 2 shared", "unlock a 1", "read a 1", "read a 1 99999999999",
		"write a", "write a 0", "write a -1 00", "attrs", "attrs share/dir/file", "quit now",
		"\x00\x01", "ÿÿ open", strings.Repeat("x ", 1000),
	}
	for _, l := range lines {
		ans, quit := s.exec(context.Background(), l)
		if quit || !strings.HasPrefix(ans, "err STATUS_") {
			t.Errorf("%q answered %q (quit %v)", l, ans, quit)
		}
	}
	// With a handle open, range errors come from the lock table.
	if ans, _ := s.exec(context.Background(), "open a share/dir/file access=read,write share=read"); !strings.HasPrefix(ans, "ok ") {
		t.Fatalf("open: %s", ans)
	}
	for l, want := range map[string]string{
		"lock a 18446744073709551615 2 shared": "err STATUS_INVALID_LOCK_RANGE",
		"read a 0 0":                           "ok",
		"write a 0 ":                           "err STATUS_INVALID_PARAMETER",
	} {
		if ans, _ := s.exec(context.Background(), l); ans != want {
			t.Errorf("%q answered %q, want %q", l, ans, want)
		}
	}
	if err := s.closeAll(context.Background()); err != nil {
		t.Fatal(err)
	}
}
