package reliability

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	_ "modernc.org/sqlite"
)

// blobshareBin is the binary TestMain builds once for every test.
var blobshareBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "blobshare-rel-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	blobshareBin = filepath.Join(dir, "blobshare")
	build := exec.Command("go", "build", "-o", blobshareBin, "../../cmd/blobshare")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building blobshare:", err)
		return 2
	}
	return m.Run()
}

const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// requireAll reports whether a missing dependency must fail tests (CI).
func requireAll() bool { return os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" }

// requireMountable skips (or, under BLOBSHARE_REQUIRE_ALL=1, fails) a test
// that needs root and /dev/fuse (FUSE mounts, tmpfs mounts).
func requireMountable(t *testing.T) {
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

// envInt reads an integer setting from the environment.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
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
	Addr    string // 127.0.0.1:PORT
	stderr  *lockedBuffer
	done    chan struct{}
	waitErr error
}

var servingLine = regexp.MustCompile(`msg="blobshare serving" rest=(\S+) mount=(\S+)`)

// startServe starts `blobshare serve` on a free port and waits for its
// serving line. Cleanup stops it (SIGTERM, then SIGKILL) and detaches a
// mount it leaves behind.
func startServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	s, err := launchServe(data, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop() })
	return s
}

func launchServe(data string, extra ...string) (*server, error) {
	args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, extra...)
	s := &server{Data: data, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(blobshareBin, args...)
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	s.cmd.Stdout = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
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
		s.Addr = strings.SplitN(strings.TrimPrefix(s.RESTURL, "http://"), "/", 2)[0]
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("serve exited before serving: %v\n%s", s.waitErr, s.stderr)
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("serve did not log its serving line in 60s:\n%s", s.stderr)
	}
}

// Pid is the server's process id.
func (s *server) Pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM and waits up to 30 s, then kills. It returns the exit
// error (nil on a clean exit 0).
func (s *server) stop() error {
	select {
	case <-s.done:
		s.detach()
		return s.waitErr
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.detach()
		return fmt.Errorf("serve did not stop within 30s of SIGTERM")
	}
	s.detach()
	return s.waitErr
}

// kill ends the server with SIGKILL, as a crash would, and detaches the
// dead FUSE mount it leaves behind. A FUSE server killed while the kernel
// holds one of its threads in an uninterruptible wait on its own mount
// (a reverse invalidation needing a directory lock that a client holds
// while it waits for a reply that will never come) cannot exit: after
// 10 s kill aborts the mount's FUSE connection through fusectl, which
// fails the pending requests and lets the process go. wedged reports that,
// with the kernel stacks of the threads that were stuck.
func (s *server) kill() (wedged string, err error) {
	s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		wedged = stuckThreads(s.Pid())
		if s.Mount == "" {
			return wedged, fmt.Errorf("serve (pid %d) did not exit 10 s after SIGKILL", s.Pid())
		}
		if err = abortFUSE(s.Mount); err != nil {
			return wedged, err
		}
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			return wedged, fmt.Errorf("serve (pid %d) did not exit 30 s after its FUSE connection was aborted", s.Pid())
		}
	}
	s.detach()
	return wedged, nil
}

// stuckThreads describes the threads of pid in uninterruptible sleep (D)
// with their kernel stacks.
func stuckThreads(pid int) string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	var b strings.Builder
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join(task, "stat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) == 0 || f[0] != "D" {
			continue
		}
		stack, _ := os.ReadFile(filepath.Join(task, "stack"))
		fmt.Fprintf(&b, "thread %s in D:\n%s", filepath.Base(task), stack)
	}
	if b.Len() == 0 {
		return "no thread in D state"
	}
	return b.String()
}

// abortFUSE aborts the FUSE connection of the file system mounted at dir
// (echo 1 > /sys/fs/fuse/connections/<device minor>/abort), mounting
// fusectl first if needed.
func abortFUSE(dir string) error {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	dev := ""
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			dev = f[2] // major:minor; the last mount at dir wins
		}
	}
	_, minor, ok := strings.Cut(dev, ":")
	if !ok {
		return fmt.Errorf("abort FUSE connection of %s: not in /proc/self/mountinfo", dir)
	}
	ctl := "/sys/fs/fuse/connections"
	abort := filepath.Join(ctl, minor, "abort")
	if _, err := os.Stat(abort); err != nil {
		if err := syscall.Mount("none", ctl, "fusectl", 0, ""); err != nil && err != syscall.EBUSY {
			return fmt.Errorf("mount fusectl: %w", err)
		}
	}
	if err := os.WriteFile(abort, []byte("1"), 0o200); err != nil {
		return fmt.Errorf("abort FUSE connection of %s: %w", dir, err)
	}
	return nil
}

// detach lazily unmounts the server's mount point if something is still
// mounted there (a killed server leaves a dead FUSE mount).
func (s *server) detach() {
	if s.Mount == "" {
		return
	}
	if err := syscall.Unmount(s.Mount, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
		fmt.Fprintf(os.Stderr, "detach %s: %v\n", s.Mount, err)
	}
}

// vmHWM returns the peak resident set size of a process in KiB.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// serviceClient is an azfile client authorised by SharedKey through the
// connection string. retries < 0 disables the SDK's retries, so a refused
// request is seen as it is.
func serviceClient(t *testing.T, restURL string, retries int32) *service.Client {
	t.Helper()
	conn := "DefaultEndpointsProtocol=http;AccountName=" + devAccount + ";AccountKey=" + devKey +
		";FileEndpoint=" + restURL + ";"
	opts := &service.ClientOptions{}
	opts.Retry = policy.RetryOptions{MaxRetries: retries, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 500 * time.Millisecond}
	opts.Transport = &http.Client{Timeout: 60 * time.Second}
	c, err := service.NewClientFromConnectionString(conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openDB opens <data>/blobshare.db read-only, beside a running server.
func openDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "blobshare.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// queryInt runs a one-integer query.
func queryInt(ctx context.Context, db *sql.DB, query string, args ...any) (int64, error) {
	var n int64
	if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return n, nil
}

// integrityCheck runs PRAGMA integrity_check and returns its report ("ok"
// when the database is sound).
func integrityCheck(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "; "), rows.Err()
}
