package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// blobshareBin is the binary TestMain builds for every test of the package.
var blobshareBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[len(os.Args)-1]))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "blobshare-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	blobshareBin = filepath.Join(dir, "blobshare")
	build := exec.Command("go", "build", "-o", blobshareBin, "../cmd/blobshare")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building blobshare:", err)
		return 2
	}
	return m.Run()
}

// requireAll reports whether missing dependencies must fail tests (CI).
func requireAll() bool { return os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" }

// requireFUSE skips (or, under BLOBSHARE_REQUIRE_ALL=1, fails) a test that
// needs to mount.
func requireFUSE(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err == nil {
		f.Close()
		if os.Geteuid() == 0 {
			return
		}
		err = fmt.Errorf("mounting needs root (euid %d)", os.Geteuid())
	}
	if requireAll() {
		t.Fatalf("FUSE unavailable: %v", err)
	}
	t.Skipf("FUSE unavailable: %v", err)
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running `blobshare serve`.
type server struct {
	cmd     *exec.Cmd
	Data    string // --data
	Mount   string // --mount, "" without
	RESTURL string // http://127.0.0.1:PORT/devstoreaccount1
	Addr    string
	stderr  *lockedBuffer
	done    chan struct{}
	waitErr error
}

var servingLine = regexp.MustCompile(`msg="blobshare serving" rest=(\S+) mount=(\S+)`)

// startServe starts `blobshare serve` on a free port with the given extra
// flags and waits for its "serving" log line. Cleanup stops it with SIGTERM
// and fails the test unless it exits 0.
func startServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, extra...)
	s := &server{Data: data, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(blobshareBin, args...)
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	s.cmd.Stdout = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case m := <-found:
		s.RESTURL = m[1]
		if m[2] != "none" {
			s.Mount = m[2]
		}
		s.Addr = strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(s.RESTURL, "http://"), "/", 2)[0], "")
	case <-s.done:
		t.Fatalf("serve exited before serving: %v\n%s", s.waitErr, s.stderr)
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("serve did not log its serving line in 60s:\n%s", s.stderr)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop sends SIGTERM and expects a clean exit 0 within 30 s.
func (s *server) stop(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		return // already stopped (or killed by the test)
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		t.Errorf("serve did not stop within 30s of SIGTERM:\n%s", s.stderr)
		return
	}
	if s.waitErr != nil {
		t.Errorf("serve exited with %v after SIGTERM:\n%s", s.waitErr, s.stderr)
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// runBlobshare runs the binary to completion and returns its exit code and
// output streams.
func runBlobshare(t *testing.T, timeout time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, blobshareBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("blobshare %v did not finish in %v", args, timeout)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatalf("blobshare %v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// busyPort returns an address some listener holds for the test's lifetime.
func busyPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}
