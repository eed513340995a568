// Package servetest runs `blobshare serve` as a child process for the
// end-to-end tests (packages integration, integration/reliability and the
// rclone module): build it once, start it on a free port and read where it serves from its log line, stop it with
// SIGTERM, or kill it as a crash would and clean up the FUSE mount it leaves.
package servetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build builds blobshare's command, running go build in root (the main
// module's directory, relative to the caller's), into a new temporary
// directory, and returns the binary's path; the caller removes
// filepath.Dir(bin) when done. The compiler's output goes to stderr.
func Build(root string) (bin string, err error) {
	dir, err := os.MkdirTemp("", "blobshare-bin-")
	if err != nil {
		return "", fmt.Errorf("building blobshare: %w", err)
	}
	bin = filepath.Join(dir, "blobshare")
	build := exec.Command("go", "build", "-C", root, "-o", bin, "./cmd/blobshare")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building blobshare: %w", err)
	}
	return bin, nil
}

// Buffer collects a process's output while a test reads it.
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed (and replaced) at each Write
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// WaitFor waits until the output holds s, woken by each write, for at
// most timeout; it reports whether s came.
func (b *Buffer) WaitFor(s string, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if strings.Contains(b.buf.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.written == nil {
			b.written = make(chan struct{})
		}
		w := b.written
		b.mu.Unlock()
		select {
		case <-w:
		case <-deadline.C:
			return false
		}
	}
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Server is a running `blobshare serve`.
type Server struct {
	Cmd     *exec.Cmd
	Data    string // --data
	Mount   string // --mount, "" without
	RESTURL string // http://127.0.0.1:PORT/devstoreaccount1 (https:// with --tls-cert)
	// QueueURL is the Queue service, http://127.0.0.1:PORT/devstoreaccount1
	// ("off" if extra turned it off).
	QueueURL string
	// BlobURL is the Blob service, http://127.0.0.1:PORT/devstoreaccount1
	// ("off" if extra turned it off).
	BlobURL string
	// TableURL is the Table service, http://127.0.0.1:PORT/devstoreaccount1
	// ("off" if extra turned it off).
	TableURL string
	Addr     string // 127.0.0.1:PORT
	SMBAddr  string // 127.0.0.1:PORT of the SMB endpoint, "" when --smb off
	Stderr   *Buffer
	Done     chan struct{}
	WaitErr  error
}

var (
	servingLine = regexp.MustCompile(`msg="blobshare serving" rest=(\S+) mount=(\S+)`)
	servingKey  = regexp.MustCompile(` (smb|queue|blob|table)=(\S+)`)
)

// Start starts bin (a blobshare binary) as `serve --data data --addr
// 127.0.0.1:0 --smb 127.0.0.1:0 --queue-addr 127.0.0.1:0 --blob-addr
// 127.0.0.1:0 --table-addr 127.0.0.1:0` plus extra flags
// (which may override those: a later flag wins) and waits up to 60 s for
// its serving line.
func Start(bin, data string, extra ...string) (*Server, error) {
	return StartEnv(bin, data, nil, extra...)
}

// StartEnv is Start with env ("NAME=value" entries) added to the
// environment serve inherits.
func StartEnv(bin, data string, env []string, extra ...string) (*Server, error) {
	args := append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--smb", "127.0.0.1:0", "--queue-addr", "127.0.0.1:0", "--blob-addr", "127.0.0.1:0", "--table-addr", "127.0.0.1:0"}, extra...)
	s := &Server{Data: data, Stderr: &Buffer{}, Done: make(chan struct{})}
	s.Cmd = exec.Command(bin, args...)
	if env != nil {
		s.Cmd.Env = append(os.Environ(), env...)
	}
	pr, pw := io.Pipe()
	s.Cmd.Stderr = io.MultiWriter(s.Stderr, pw)
	s.Cmd.Stdout = s.Stderr
	if err := s.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
	}
	go func() {
		s.WaitErr = s.Cmd.Wait()
		pw.Close()
		close(s.Done)
	}()
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				keys := map[string]string{}
				for _, k := range servingKey.FindAllStringSubmatch(sc.Text(), -1) {
					keys[k[1]] = k[2]
				}
				if keys["smb"] == "off" {
					keys["smb"] = ""
				}
				found <- append(m, keys["smb"], keys["queue"], keys["blob"], keys["table"])
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
		s.Addr = strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(s.RESTURL, "http://"), "https://"), "/", 2)[0] // https with --tls-cert
		s.SMBAddr, s.QueueURL, s.BlobURL, s.TableURL = m[3], m[4], m[5], m[6]
		return s, nil
	case <-s.Done:
		return nil, fmt.Errorf("serve exited before serving: %v\n%s", s.WaitErr, s.Stderr)
	case <-time.After(60 * time.Second):
		s.Cmd.Process.Kill()
		<-s.Done
		return nil, fmt.Errorf("serve did not log its serving line in 60s:\n%s", s.Stderr)
	}
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Stop sends SIGTERM and waits up to 30 s, then kills. It returns the exit
// error (nil on a clean exit 0).
func (s *Server) Stop() error {
	select {
	case <-s.Done:
		s.Detach()
		return s.WaitErr
	default:
	}
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Done:
	case <-time.After(30 * time.Second):
		s.Cmd.Process.Kill()
		<-s.Done
		s.Detach()
		return fmt.Errorf("serve did not stop within 30s of SIGTERM")
	}
	s.Detach()
	return s.WaitErr
}

// Kill ends the server with SIGKILL, as a crash would, and detaches the
// dead FUSE mount it leaves behind. A FUSE server killed while the kernel
// holds one of its threads in an uninterruptible wait on its own mount
// (a reverse invalidation needing a directory lock that a client holds
// while it waits for a reply that will never come) cannot exit: after
// 10 s Kill aborts the mount's FUSE connection through fusectl, which
// fails the pending requests and lets the process go. wedged reports that,
// with the kernel stacks of the threads that were stuck.
func (s *Server) Kill() (wedged string, err error) {
	s.Cmd.Process.Kill()
	select {
	case <-s.Done:
	case <-time.After(10 * time.Second):
		wedged = stuckThreads(s.Pid())
		if s.Mount == "" {
			return wedged, fmt.Errorf("serve (pid %d) did not exit 10 s after SIGKILL", s.Pid())
		}
		if err = abortFUSE(s.Mount); err != nil {
			return wedged, err
		}
		select {
		case <-s.Done:
		case <-time.After(30 * time.Second):
			return wedged, fmt.Errorf("serve (pid %d) did not exit 30 s after its FUSE connection was aborted", s.Pid())
		}
	}
	s.Detach()
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

// Detach lazily unmounts the server's mount point if something is still
// mounted there (a killed server leaves a dead FUSE mount).
func (s *Server) Detach() {
	if s.Mount == "" {
		return
	}
	if err := syscall.Unmount(s.Mount, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
		fmt.Fprintf(os.Stderr, "detach %s: %v\n", s.Mount, err)
	}
}
