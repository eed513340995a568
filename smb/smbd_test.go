package smb_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smbdServer is Samba's smbd serving one directory as share "share", the
// oracle and the peer the smbtorture list and the benchmarks compare with.
type smbdServer struct {
	addr, share, user, password string
}

// startSmbd runs smbd as root in the foreground with a private smb.conf
// (every state directory under a temp dir, one port on 127.0.0.1, no
// NetBIOS, no system service touched), serving shareDir, and stops it at
// the test's end. Each of globals is one more line of its [global]
// section ("oplocks = no").
func startSmbd(t testing.TB, shareDir string, globals ...string) *smbdServer {
	t.Helper()
	smbd, err := exec.LookPath("smbd")
	if err != nil {
		smbd = "/usr/sbin/smbd"
	}
	if _, err := os.Stat(smbd); err != nil {
		requireTool(t, "smbd (Debian samba)", err)
	}
	smbpasswd, err := exec.LookPath("smbpasswd")
	requireTool(t, "smbpasswd (Debian samba-common-bin)", err)
	if os.Geteuid() != 0 {
		requireTool(t, "root (smbd maps logons to Unix users)", fmt.Errorf("euid %d", os.Geteuid()))
	}
	dir := t.TempDir()
	for _, d := range []string{"private", "lock", "state", "cache", "pid", "ncalrpc"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	conf := filepath.Join(dir, "smb.conf")
	text := fmt.Sprintf(`[global]
  workgroup = WORKGROUP
  server role = standalone server
  smb ports = %d
  interfaces = 127.0.0.1
  bind interfaces only = yes
  private dir = %[2]s/private
  binddns dir = %[2]s/private
  lock directory = %[2]s/lock
  state directory = %[2]s/state
  cache directory = %[2]s/cache
  pid directory = %[2]s/pid
  ncalrpc dir = %[2]s/ncalrpc
  log file = %[2]s/log.%%m
  passdb backend = tdbsam:%[2]s/private/passdb.tdb
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  server min protocol = SMB2_02
%[4]s
[share]
  path = %[3]s
  read only = no
`, port, dir, shareDir, strings.Join(globals, "\n"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	const user, password = "root", "smbd-oracle-pass"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	add := exec.CommandContext(ctx, smbpasswd, "-c", conf, "-s", "-a", user)
	add.Stdin = strings.NewReader(password + "\n" + password + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("smbpasswd: %v\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(dir, "smbd.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(smbd, "--foreground", "--no-process-group", "--debug-stdout", "-d", "0", "-s", conf)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that stopping it stops the children it
	// forks per connection too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start smbd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		log.Close()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// smbd forks and binds after it starts: wait (bounded) until it accepts.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("smbd exited: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("smbd does not accept on %s: %v\n%s", addr, err, out)
		}
	}
	return &smbdServer{addr: addr, share: "share", user: user, password: password}
}

// freePort returns a TCP port on 127.0.0.1 free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
