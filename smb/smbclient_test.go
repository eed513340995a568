package smb_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/fs"
)

// smbclient runs Debian's smbclient against the env's share with the
// account key (from an authentication file) and the given commands.
func (e *env) smbclient(t *testing.T, share string, extra []string, commands ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("smbclient")
	requireTool(t, "smbclient", err)
	auth := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(auth, []byte("username = "+filerest.DevAccount+"\npassword = "+filerest.DevKey+"\ndomain = WORKGROUP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(e.smbAddr, ":")
	args := append([]string{"//" + host + "/" + share, "-p", port, "-A", auth, "--option=client signing=required"}, extra...)
	args = append(args, "-c", strings.Join(commands, "; "))
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("smbclient %v: killed after %v\n%s", commands, toolTimeout, out)
	}
	return string(out), err
}

// randomFile writes n random bytes to a temp file and returns its path and
// SHA-256, streaming (n may be large).
func randomFile(t testing.TB, n int64) (string, [32]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "up.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, n); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, [32]byte(h.Sum(nil))
}

func fileSHA256(t testing.TB, path string) [32]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// TestSmbclient drives smbclient, signing required, through put/get of
// 256 MiB with a checksum, ls, mkdir, rename, del and allinfo.
func TestSmbclient(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	const size = 256 << 20
	up, sum := randomFile(t, size)
	down := filepath.Join(t.TempDir(), "down.bin")

	out, err := e.smbclient(t, "data", nil,
		"mkdir dir",
		`put `+up+` dir\big.bin`,
		`rename dir\big.bin dir\moved.bin`,
		`get dir\moved.bin `+down,
		`allinfo dir\moved.bin`,
		`ls dir\*`)
	if err != nil {
		t.Fatalf("smbclient: %v\n%s", err, out)
	}
	if got := fileSHA256(t, down); got != sum {
		t.Fatalf("get returned different bytes (sha256 %x, put %x)\n%s", got, sum, out)
	}
	for _, want := range []string{
		fmt.Sprintf("stream: [::$DATA], %d bytes", size), // allinfo
		"attributes: A",
		fmt.Sprintf("moved.bin                           A %d", size), // ls
	} {
		if !strings.Contains(out, want) {
			t.Errorf("smbclient output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "big.bin") && !strings.Contains(out, `as \dir\big.bin`) {
		t.Errorf("the old name is still listed:\n%s", out)
	}

	out, err = e.smbclient(t, "data", nil, `del dir\moved.bin`, "rmdir dir", "ls")
	if err != nil {
		t.Fatalf("smbclient del/rmdir: %v\n%s", err, out)
	}
	entries, err := e.fs.ListDirectory(t.Context(), "data", fs.ListRequest{})
	if err != nil || len(entries.Entries) != 0 {
		t.Fatalf("share after del and rmdir: %+v, %v", entries.Entries, err)
	}
}

// TestSmbclientDialects: smbclient logs on and lists with each dialect,
// and wrong or anonymous credentials fail with STATUS_LOGON_FAILURE.
func TestSmbclientDialects(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	for _, p := range []string{"NT1", "SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11"} {
		t.Run(p, func(t *testing.T) {
			// NT1 as the minimum makes smbclient start with the SMB1
			// multi-protocol NEGOTIATE, which is answered with SMB2.
			max := p
			if p == "NT1" {
				max = "SMB3_11"
			}
			out, err := e.smbclient(t, "data", []string{"--option=client min protocol=" + p, "--option=client max protocol=" + max}, "ls")
			if err != nil || !strings.Contains(out, "blocks available") {
				t.Fatalf("smbclient %s: %v\n%s", p, err, out)
			}
		})
	}
	bin, err := exec.LookPath("smbclient")
	requireTool(t, "smbclient", err)
	host, port, _ := strings.Cut(e.smbAddr, ":")
	for name, args := range map[string][]string{
		"wrong key": {"-U", filerest.DevAccount + "%not-the-key"},
		"anonymous": {"-N"},
		"guest":     {"-U", "guest%"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
		out, _ := exec.CommandContext(ctx, bin, append([]string{"//" + host + "/data", "-p", port, "-c", "ls"}, args...)...).CombinedOutput()
		cancel()
		if !strings.Contains(string(out), "NT_STATUS_LOGON_FAILURE") {
			t.Errorf("%s: want NT_STATUS_LOGON_FAILURE, got:\n%s", name, out)
		}
	}
}
