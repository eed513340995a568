package smb_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// requireTool skips a test whose external client is missing, or fails it
// under BLOBSHARE_REQUIRE_ALL=1 (CI), where every client must be installed
// (make test installs them).
func requireTool(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
		t.Fatalf("%s is required (BLOBSHARE_REQUIRE_ALL=1): %v", what, err)
	}
	t.Skipf("%s not available: %v", what, err)
}

// toolTimeout bounds every external client a test runs (smbclient, the
// impacket helper): a wedged one is killed and the test fails.
const toolTimeout = 5 * time.Minute

// systemPython is Debian's interpreter, where python3-impacket lives
// (a pyenv python3 earlier in PATH would not see it).
const systemPython = "/usr/bin/python3"

// smbctl is a real SMB client with full control of access masks, share
// access, create options and locks: impacket driven line by line through
// testdata/smbctl.py.
type smbctl struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func (e *env) smbctl(t *testing.T, share string) *smbctl {
	t.Helper()
	return dialSmbctl(t, e.smbAddr, filerest.DevAccount, filerest.DevKey, share)
}

// dialSmbctl starts the impacket helper logged on to share at addr (any
// SMB server: blobshare, or Samba's smbd as an oracle).
func dialSmbctl(t *testing.T, addr, user, password, share string) *smbctl {
	t.Helper()
	probe, cancelProbe := context.WithTimeout(context.Background(), toolTimeout)
	defer cancelProbe()
	requireTool(t, "python3-impacket", exec.CommandContext(probe, systemPython, "-c", "import impacket.smbconnection").Run())
	// The helper lives for the test; the timeout kills it if it wedges, so
	// a read of its answer ends instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, systemPython, "testdata/smbctl.py")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &smbctl{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	host, port, _ := strings.Cut(addr, ":")
	c.expect("ok", "connect %s %s %s %s %s", host, port, user, password, share)
	return c
}

// do sends one command and returns the answer line.
func (c *smbctl) do(format string, args ...any) string {
	c.t.Helper()
	line := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		c.t.Fatalf("smbctl %q: %v", line, err)
	}
	if !c.out.Scan() {
		c.t.Fatalf("smbctl %q: no answer (%v)", line, c.out.Err())
	}
	return c.out.Text()
}

// expect sends a command and checks the answer.
func (c *smbctl) expect(want, format string, args ...any) {
	c.t.Helper()
	if got := c.do(format, args...); got != want {
		c.t.Fatalf("smbctl %q = %q, want %q", fmt.Sprintf(format, args...), got, want)
	}
}
