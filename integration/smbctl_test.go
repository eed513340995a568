package integration

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

// smbctl is a real SMB client with full control of access masks, share
// access and byte-range locks, which go-smb2 does not give (its opens
// always share read and write): impacket driven a line at a time through
// ../smb/testdata/smbctl.py (its doc string lists the commands), as the
// smb package's tests drive it.
type smbctl struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// systemPython is Debian's interpreter, where python3-impacket lives.
const systemPython = "/usr/bin/python3"

// dialSmbctl starts the helper logged on to share at addr (user = the
// account name, password = its key). Under BLOBSHARE_REQUIRE_ALL=1 a
// missing impacket fails the test.
func dialSmbctl(t *testing.T, addr, share string) *smbctl {
	t.Helper()
	if err := exec.Command(systemPython, "-c", "import impacket.smbconnection").Run(); err != nil {
		if requireAll() {
			t.Fatalf("python3-impacket is required (BLOBSHARE_REQUIRE_ALL=1): %v", err)
		}
		t.Skipf("python3-impacket unavailable: %v", err)
	}
	// The timeout kills a wedged helper, so a read of its answer ends.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, systemPython, "../smb/testdata/smbctl.py")
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
	c.expect("ok", "connect %s %s %s %s %s", host, port, filerest.DevAccount, filerest.DevKey, share)
	return c
}

// do sends one command and returns its answer line.
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

// expect sends a command and checks its answer.
func (c *smbctl) expect(want, format string, args ...any) {
	c.t.Helper()
	if got := c.do(format, args...); got != want {
		c.t.Fatalf("smbctl %q = %q, want %q", fmt.Sprintf(format, args...), got, want)
	}
}
