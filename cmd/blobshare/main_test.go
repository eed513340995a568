package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blobshare/blobshare/integration/servetest"
)

// runApp runs the app in-process with its output discarded.
func runApp(t *testing.T, args ...string) error {
	t.Helper()
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	return app.Run(append([]string{"blobshare"}, args...))
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, err := exec.Command(blobshareBinary(t), args...).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "blobshare ") || strings.Count(string(out), "\n") != 1 {
			t.Errorf("blobshare %v printed %q, %v; want one line starting with \"blobshare \"", args, out, err)
		}
	}
}

// TestHelpCommand: `blobshare help session` prints the session command's
// help (its grammar words) and exits 0, as `session --help` does.
func TestHelpCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "session"}, {"session", "--help"}, {"help", "status"}} {
		out, err := exec.Command(blobshareBinary(t), args...).CombinedOutput()
		if err != nil {
			t.Errorf("blobshare %v: %v\n%s", args, err, out)
			continue
		}
		if !strings.Contains(string(out), "blobshare "+args[len(args)-1]) && !strings.Contains(string(out), "blobshare "+args[0]) {
			t.Errorf("blobshare %v printed no usage line:\n%s", args, out)
		}
	}
	out, _ := exec.Command(blobshareBinary(t), "help", "session").CombinedOutput()
	for _, word := range []string{"open", "dispose", "unlock", "STATUS_"} {
		if !strings.Contains(string(out), word) {
			t.Errorf("help session lacks %q:\n%s", word, out)
		}
	}
}

func TestUnknownCommandIsAnError(t *testing.T) {
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	if err := app.Run([]string{"blobshare", "no-such-command"}); err == nil {
		t.Fatal("unknown command succeeded")
	}
}

// TestMissingDataIsRefused: mount, session and status refuse a --data
// that does not exist (or holds no database) with one line and create
// nothing; serve creates it.
func TestMissingDataIsRefused(t *testing.T) {
	for _, cmd := range []string{"session", "mount", "status"} {
		t.Run(cmd, func(t *testing.T) {
			parent := t.TempDir()
			missing := filepath.Join(parent, "typo")
			args := []string{cmd, "--data", missing}
			if cmd == "mount" {
				args = append(args, t.TempDir())
			}
			c := exec.Command(blobshareBinary(t), args...)
			c.Stdin = strings.NewReader("quit\n")
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			if err == nil {
				t.Fatalf("%s over a missing --data succeeded: %s", cmd, stdout.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, "does not exist") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one line saying the directory does not exist", msg)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("%s created %s (%v)", cmd, missing, err)
			}
			// An existing directory that is not a data directory.
			empty := t.TempDir()
			args[2] = empty
			if err := runApp(t, args...); err == nil || !strings.Contains(err.Error(), "holds no blobshare database") {
				t.Errorf("%s over an empty directory: %v", cmd, err)
			}
			if ents, _ := os.ReadDir(empty); len(ents) != 0 {
				t.Errorf("%s wrote into the empty directory: %v", cmd, ents)
			}
		})
	}
}

// TestMountArgumentErrors: a flag after the mount point says flags come
// first; an unknown --share says "no such share". One line each.
func TestMountArgumentErrors(t *testing.T) {
	requireFUSE(t)
	data, mnt := t.TempDir(), t.TempDir()
	newDataDir(t, data)
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"flags after the mount point": {[]string{"mount", mnt, "--data", data}, "flags come first"},
		"no such share":               {[]string{"mount", "--data", data, "--share", "nosuch", mnt}, "no such share"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(blobshareBinary(t), tt.args...).CombinedOutput()
			if err == nil {
				t.Fatalf("succeeded: %s", out)
			}
			if !strings.Contains(string(out), tt.want) || strings.Count(string(out), "\n") != 1 {
				t.Errorf("printed %q, want one line with %q", out, tt.want)
			}
		})
	}
}

// TestSessionExplainsBadLines: an unparsable line is answered on stdout
// as always (err STATUS_INVALID_PARAMETER) and the reason goes to stderr,
// naming the line; the session goes on.
func TestSessionExplainsBadLines(t *testing.T) {
	data := t.TempDir()
	seed(t, data)
	c := exec.Command(blobshareBinary(t), "session", "--data", data)
	c.Stdin = strings.NewReader("open a share/dir/file access=raed share=read\nopen b share/dir/file access=READ share=Read\nquit\n")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("session: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || lines[0] != "err STATUS_INVALID_PARAMETER" || !strings.HasPrefix(lines[1], "ok ") || lines[2] != "ok" {
		t.Errorf("answers %q; want INVALID_PARAMETER, then ok (words are case-insensitive), then ok", lines)
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "cannot parse line") || !strings.Contains(msg, `raed`) {
		t.Errorf("stderr %q; want one log line naming the bad word", msg)
	}
	if !logLine.MatchString(strings.TrimSpace(msg)) {
		t.Errorf("stderr %q is not in the log format", msg)
	}
}

// logLine is slog's text format, the one format of every log line.
var logLine = regexp.MustCompile(`^time=\S+ level=(DEBUG|INFO|WARN|ERROR) msg=`)

// TestServeLogsOneFormatAndFailedRequests: every line serve writes is in
// slog's text format — including the lock table's line about a killed
// process it reaped at start — and with --debug each failed request is
// logged with its status and Azure error code.
func TestServeLogsOneFormatAndFailedRequests(t *testing.T) {
	data := t.TempDir()
	seed(t, data).Close(context.Background())
	// A killed session leaves a dead owner for serve to reap at start.
	s := startSession(t, data)
	s.expect("open a share/dir/file access=read share=read", "ok ")
	s.cmd.Process.Kill()
	s.cmd.Wait()

	srv, err := servetest.Start(blobshareBinary(t), data, "--debug")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.RESTURL + "/share/dir/nosuchfile")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("an unauthenticated GET succeeded")
	}
	code := resp.Header.Get("x-ms-error-code")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	var sawReap, sawFailure bool
	sc := bufio.NewScanner(strings.NewReader(srv.Stderr.String()))
	for sc.Scan() {
		line := sc.Text()
		if !logLine.MatchString(line) {
			t.Errorf("log line not in slog's text format: %q", line)
		}
		sawReap = sawReap || strings.Contains(line, "reaped dead owners")
		if strings.Contains(line, `msg="request failed"`) && strings.Contains(line, "status="+strconv.Itoa(resp.StatusCode)) &&
			strings.Contains(line, "code="+code) && strings.Contains(line, "path=/devstoreaccount1/share/dir/nosuchfile") {
			sawFailure = true
		}
	}
	if !sawReap {
		t.Errorf("serve did not log reaping the killed session:\n%s", srv.Stderr)
	}
	if !sawFailure {
		t.Errorf("serve --debug did not log the failed request (%d %s):\n%s", resp.StatusCode, code, srv.Stderr)
	}
}

// lineSignal is an io.Writer that keeps what a process logs and closes
// seen once the log holds want: tests wait for that event instead of
// polling the mount point.
type lineSignal struct {
	want string
	seen chan struct{}
	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func newLineSignal(want string) *lineSignal {
	return &lineSignal{want: want, seen: make(chan struct{})}
}

func (w *lineSignal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineSignal) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait returns once the line was logged; it fails the test when the
// process exits first (exited) or after 20 s.
func (w *lineSignal) wait(t *testing.T, exited <-chan error) {
	t.Helper()
	select {
	case <-w.seen:
	case err := <-exited:
		t.Fatalf("exited before logging %q: %v\n%s", w.want, err, w.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("did not log %q in 20 s\n%s", w.want, w.String())
	}
}
