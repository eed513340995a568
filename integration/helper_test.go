package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv selects a helper mode when the test binary re-executes itself as
// a separate process that holds a file on the mount, as an application would.
const helperEnv = "BLOBSHARE_TEST_HELPER"

// runHelper is the body of a helper process. Modes (extra settings in
// BLOBSHARE_HELPER_* variables):
//
//	hold   open path with BLOBSHARE_HELPER_FLAGS (r, w, rw), answer "ready", then
//	       keep it open until standard input closes
//	fcntl  open path read-write, take an fcntl write lock (F_SETLK) on
//	       BLOBSHARE_HELPER_RANGE "off:len", answer "ready", hold until stdin closes
//
// Failures are written as "error: ..." and exit 1.
func runHelper(mode, path string) int {
	fail := func(err error) int {
		fmt.Println("error:", err)
		return 1
	}
	var f *os.File
	var err error
	switch mode {
	case "hold":
		flag := map[string]int{"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[os.Getenv("BLOBSHARE_HELPER_FLAGS")]
		f, err = os.OpenFile(path, flag, 0)
		if err != nil {
			return fail(err)
		}
	case "fcntl":
		f, err = os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fail(err)
		}
		offLen := strings.SplitN(os.Getenv("BLOBSHARE_HELPER_RANGE"), ":", 2)
		off, _ := strconv.ParseInt(offLen[0], 10, 64)
		n, _ := strconv.ParseInt(offLen[1], 10, 64)
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: off, Len: n}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
			return fail(fmt.Errorf("F_SETLK: %w", err))
		}
	default:
		return fail(fmt.Errorf("unknown helper mode %q", mode))
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return 0
}

// holder is a helper process holding a file.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

// hold starts a helper process in mode on path and waits for it to be ready.
func hold(t *testing.T, mode, path string, env ...string) *holder {
	t.Helper()
	h, err := startHolder(mode, path, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.release() })
	return h
}

// tryHold is hold that returns the helper's failure instead of failing.
func startHolder(mode, path string, env ...string) (*holder, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", path)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &holder{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		} else {
			line <- "error: helper exited"
		}
		io.Copy(io.Discard, stdout)
		h.done <- cmd.Wait()
	}()
	select {
	case l := <-line:
		if l != "ready" {
			stdin.Close()
			<-h.done
			return nil, fmt.Errorf("helper %s %s: %s", mode, path, l)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("helper %s %s: not ready after 30s", mode, path)
	}
	return h, nil
}

// release closes the helper's file and waits for it to exit.
func (h *holder) release() error {
	if h.stdin == nil {
		return nil
	}
	h.stdin.Close()
	h.stdin = nil
	select {
	case err := <-h.done:
		return err
	case <-time.After(30 * time.Second):
		h.cmd.Process.Kill()
		return fmt.Errorf("helper did not exit")
	}
}
