package integration

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/blobshare/blobshare/integration/servetest"
)

// TestServeEndpointFailure: an endpoint whose listening socket fails while
// serve runs (shut down under it from outside, as a kernel or an
// administrator's `ss -K` can: accept then fails with EINVAL for good)
// stops every endpoint, and serve exits non-zero with one line naming
// that endpoint (cli-contract.md, "Exit status and errors"). Before the
// supervisor an SMB failure was only logged and serve went on looking
// healthy. The directory is left as a clean stop leaves it: a new serve
// starts on it.
func TestServeEndpointFailure(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		addr     func(s *server) string
	}{
		{"smb", func(s *server) string { return s.SMBAddr }},
		{"queue", func(s *server) string { return hostOf(s.QueueURL) }},
		{"rest", func(s *server) string { return s.Addr }},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			data := t.TempDir()
			s, err := servetest.Start(blobshareBin, data)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Kill() })
			addr := tc.addr(s)
			if err := shutdownListener(s.Pid(), addr); err != nil {
				if requireAll() {
					t.Fatalf("cannot fail the %s listener from outside: %v", tc.endpoint, err)
				}
				t.Skipf("cannot fail the %s listener from outside: %v", tc.endpoint, err)
			}
			select {
			case <-s.Done:
			case <-time.After(30 * time.Second):
				t.Fatalf("serve still running 30 s after its %s listener failed:\n%s", tc.endpoint, s.Stderr)
			}
			var ee *exec.ExitError
			if !errors.As(s.WaitErr, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("serve exited with %v, want a non-zero status:\n%s", s.WaitErr, s.Stderr)
			}
			var last []string
			for l := range strings.Lines(s.Stderr.String()) {
				if strings.HasPrefix(l, "blobshare:") {
					last = append(last, strings.TrimRight(l, "\n"))
				}
			}
			want := fmt.Sprintf("blobshare: the %s endpoint failed, every endpoint stopped: accept tcp %s: accept4: invalid argument", tc.endpoint, addr)
			if len(last) != 1 || last[0] != want {
				t.Fatalf("error lines %q, want exactly %q:\n%s", last, want, s.Stderr)
			}
			again, err := servetest.Start(blobshareBin, data)
			if err != nil {
				t.Fatalf("a new serve on the directory: %v", err)
			}
			if err := again.Stop(); err != nil {
				t.Fatalf("the new serve after SIGTERM: %v\n%s", err, again.Stderr)
			}
		})
	}
}

// hostOf is HOST:PORT of http://HOST:PORT/ACCOUNT.
func hostOf(url string) string {
	return strings.SplitN(strings.TrimPrefix(url, "http://"), "/", 2)[0]
}

// shutdownListener shuts down, with shutdown(2), the TCP socket that
// process pid listens on at addr: it takes a copy of the process's file
// descriptor (pidfd_getfd, as a debugger could) and shuts the shared
// socket down, so the process's accept fails.
func shutdownListener(pid int, addr string) error {
	inode, err := listeningInode(pid, addr)
	if err != nil {
		return err
	}
	fd, err := socketFD(pid, inode)
	if err != nil {
		return err
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	mine, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd %d fd %d: %w", pid, fd, err)
	}
	defer unix.Close(mine)
	if err := unix.Shutdown(mine, syscall.SHUT_RDWR); err != nil {
		return fmt.Errorf("shutdown of the listener at %s: %w", addr, err)
	}
	return nil
}

// listeningInode is the socket inode of pid's TCP listener at addr
// (/proc/PID/net/tcp: local address in hex, state 0A = LISTEN).
func listeningInode(pid int, addr string) (string, error) {
	tcpAddr, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return "", err
	}
	ip := tcpAddr.IP.To4()
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], tcpAddr.Port)
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == want && fields[3] == "0A" {
			return fields[9], nil
		}
	}
	return "", fmt.Errorf("no listener at %s in /proc/%d/net/tcp", addr, pid)
}

// socketFD is pid's file descriptor of the socket inode.
func socketFD(pid int, inode string) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && link == "socket:["+inode+"]" {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, fmt.Errorf("no descriptor of socket %s in %s", inode, dir)
}
