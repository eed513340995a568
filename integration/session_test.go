package integration

import (
	"bufio"
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

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
)

// session is a running `blobshare session` process.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	killed bool
}

// startSession starts `blobshare session`; Cleanup closes its standard input
// and expects exit status 0 (end of input closes every handle and exits).
func startSession(t *testing.T, data string) *session {
	t.Helper()
	cmd := exec.Command(blobshareBin, "session", "--data", data)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		stdin.Close()
		go io.Copy(io.Discard, stdout)
		timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		if !timer.Stop() {
			t.Errorf("session did not exit within 10s of end of input")
		} else if err != nil && !s.killed {
			t.Errorf("session exited with %v at end of input; want 0", err)
		}
	})
	return s
}

// kill ends the session with SIGKILL, as a crash would.
func (s *session) kill() {
	s.killed = true
	s.cmd.Process.Kill()
}

// do sends one command line and returns the one answer line.
func (s *session) do(t *testing.T, line string) string {
	t.Helper()
	if _, err := fmt.Fprintln(s.stdin, line); err != nil {
		t.Fatalf("session: write %q: %v", line, err)
	}
	answer := make(chan string, 1)
	go func() {
		if s.out.Scan() {
			answer <- s.out.Text()
		} else {
			answer <- "<no answer: " + fmt.Sprint(s.out.Err()) + ">"
		}
	}()
	select {
	case a := <-answer:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("session: no answer to %q in 30s", line)
		return ""
	}
}

// 6. A `blobshare session` handle (access=write share=read) blocks a mount
// open for write, and the reverse.
func TestSessionAndMountBlockEachOther(t *testing.T) {
	m := startMixed(t)
	m.putFile(t, "contract.doc", []byte("terms"))
	path := filepath.Join(m.dir, "contract.doc")
	s := startSession(t, m.srv.Data)

	if a := s.do(t, "open h1 mixed/contract.doc access=write share=read"); !strings.HasPrefix(a, "ok ") {
		t.Fatalf("session open: %q", a)
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); !errors.Is(err, syscall.EBUSY) {
		if err == nil {
			f.Close()
		}
		t.Fatalf("mount open for write while the session writes sharing read: %v; want EBUSY", err)
	}
	// Reading is shared, but the mount's own share mode (read,write,delete)
	// lets the session keep writing, so a read open succeeds.
	if f, err := os.Open(path); err != nil {
		t.Fatalf("mount open for read: %v", err)
	} else {
		f.Close()
	}
	// REST sees the same handle: a write is a sharing violation.
	if err := uploadAt(testCtx(t), m.file("contract.doc"), 0, []byte("T")); errorCode(err) != "SharingViolation" {
		t.Fatalf("REST write while the session holds the file: %v", err)
	}
	if a := s.do(t, "close h1"); a != "ok" {
		t.Fatalf("session close: %q", a)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("mount open for write after the session closed: %v", err)
	}

	// The reverse: the mount holds it open for write (sharing read, write
	// and delete); a session that wants to write but share only read must
	// be refused, because it would deny the write the mount already has.
	if a := s.do(t, "open h2 mixed/contract.doc access=write share=read"); a != "err STATUS_SHARING_VIOLATION" {
		t.Fatalf("session open against the mount's writer: %q; want err STATUS_SHARING_VIOLATION", a)
	}
	if a := s.do(t, "open h3 mixed/contract.doc access=read share=read,write,delete"); !strings.HasPrefix(a, "ok ") {
		t.Fatalf("compatible session open: %q", a)
	}
	f.Close()
	eventually(t, "session open after the mount's writer closed", func() error {
		a := s.do(t, "open h4 mixed/contract.doc access=write share=read,write,delete")
		if !strings.HasPrefix(a, "ok ") {
			return errors.New(a)
		}
		return nil
	})
	if a := s.do(t, "quit"); a != "" && a != "ok" {
		t.Fatalf("quit: %q", a)
	}
}

// A SIGKILLed session's handles are removed by the next process that opens
// the data directory, and by a running server when it meets them.
func TestKilledSessionHandlesAreReaped(t *testing.T) {
	data := t.TempDir()
	s := startServe(t, data)
	m := &mixed{srv: s, share: serviceClient(t, s).NewShareClient("reap")}
	if _, err := m.share.Create(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	m.putFile(t, "held.txt", []byte("held"))

	sess := startSession(t, data)
	if a := sess.do(t, "open h mixed/../reap/held.txt access=read share=none"); !strings.HasPrefix(a, "err ") {
		t.Fatalf("a path with .. was accepted: %q", a)
	}
	if a := sess.do(t, "open h reap/held.txt access=read share=none"); !strings.HasPrefix(a, "ok ") {
		t.Fatalf("session open: %q", a)
	}
	if _, err := m.download(t, "held.txt", fileRangeAll); errorCode(err) != "SharingViolation" {
		t.Fatalf("REST read while a session denies read: %v", err)
	}
	sess.kill()
	eventually(t, "REST read after the session was killed", func() error {
		_, err := m.download(t, "held.txt", fileRangeAll)
		return err
	})
}

var fileRangeAll = file.HTTPRange{}
