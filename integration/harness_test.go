package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/integration/servetest"
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
	bin, err := servetest.Build("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(filepath.Dir(bin))
	blobshareBin = bin
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

// server is a running `blobshare serve`.
type server = servetest.Server

// startServe starts `blobshare serve` on a free port with the given extra
// flags and waits for its "serving" log line. Cleanup stops it with SIGTERM
// and fails the test unless it exits 0.
func startServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	s, err := servetest.Start(blobshareBin, data, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServe(t, s) })
	return s
}

// stopServe sends SIGTERM and expects a clean exit 0 within 30 s; a server
// the test already stopped or killed is left alone.
func stopServe(t *testing.T, s *server) {
	t.Helper()
	select {
	case <-s.Done:
		return
	default:
	}
	if err := s.Stop(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, s.Stderr)
	}
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
