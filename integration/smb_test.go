package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/filerest"
)

// TestServeSMB: `blobshare serve` answers go-smb2 (signing required) on
// its --smb address, over the same data as its FileREST endpoint.
func TestServeSMB(t *testing.T) {
	s := startServe(t, t.TempDir())
	if s.SMBAddr == "" {
		t.Fatalf("no smb= address in the serving line:\n%s", s.Stderr)
	}
	ctx := context.Background()
	svc := serviceClient(t, s)
	if _, err := svc.NewShareClient("data").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", s.SMBAddr)
	if err != nil {
		t.Fatal(err)
	}
	d := &smb2.Dialer{
		Negotiator: smb2.Negotiator{RequireMessageSigning: true},
		Initiator:  &smb2.NTLMInitiator{User: filerest.DevAccount, Password: filerest.DevKey},
	}
	sess, err := d.Dial(nc)
	if err != nil {
		t.Fatalf("SMB logon: %v", err)
	}
	defer sess.Logoff()
	sh, err := sess.Mount("data")
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	defer sh.Umount()
	want := bytes.Repeat([]byte("smb"), 1<<20)
	if err := sh.WriteFile("f.bin", want, 0o644); err != nil {
		t.Fatalf("SMB write: %v", err)
	}
	resp, err := svc.NewShareClient("data").NewRootDirectoryClient().NewFileClient("f.bin").DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("REST read: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, want) {
		t.Fatalf("REST read %d bytes, want the %d SMB wrote", len(got), len(want))
	}
}

// TestServeSMBFlag: --smb off serves no SMB; a busy --smb port is one line
// naming the flag.
func TestServeSMBFlag(t *testing.T) {
	s := startServe(t, t.TempDir(), "--smb", "off")
	if s.SMBAddr != "" || !strings.Contains(s.Stderr.String(), "smb=off") {
		t.Fatalf("--smb off: smb address %q, log:\n%s", s.SMBAddr, s.Stderr)
	}
	code, _, stderr := runBlobshare(t, 30*time.Second, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--smb", busyPort(t))
	if code == 0 {
		t.Fatalf("serve on a busy --smb port exited 0:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(stderr, "--smb") || !strings.Contains(stderr, "address already in use") {
		t.Fatalf("busy --smb port: want one line naming --smb, got:\n%s", stderr)
	}
}

// TestServeSMBEncrypt: with --smb-encrypt, go-smb2 on 3.1.1 is told to
// encrypt (the session flag) and writes through; on 2.1, which cannot
// encrypt, its logon is refused.
func TestServeSMBEncrypt(t *testing.T) {
	s := startServe(t, t.TempDir(), "--smb-encrypt")
	if _, err := serviceClient(t, s).NewShareClient("data").Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	dial := func(dialect uint16) (*smb2.Session, error) {
		nc, err := net.Dial("tcp", s.SMBAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		d := &smb2.Dialer{
			Negotiator: smb2.Negotiator{RequireMessageSigning: true, SpecifiedDialect: dialect},
			Initiator:  &smb2.NTLMInitiator{User: filerest.DevAccount, Password: filerest.DevKey},
		}
		return d.Dial(nc)
	}
	sess, err := dial(0x0311)
	if err != nil {
		t.Fatalf("3.1.1 logon with --smb-encrypt: %v", err)
	}
	defer sess.Logoff()
	sh, err := sess.Mount("data")
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	defer sh.Umount()
	if err := sh.WriteFile("sealed.txt", []byte("encrypted on the wire"), 0o644); err != nil {
		t.Fatalf("write: %v", err)
	}
	if got, err := sh.ReadFile("sealed.txt"); err != nil || string(got) != "encrypted on the wire" {
		t.Fatalf("read back %q, %v", got, err)
	}
	// go-smb2 reports STATUS_ACCESS_DENIED at logon as os.ErrPermission.
	if _, err := dial(0x0210); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("2.1 logon with --smb-encrypt: %v, want STATUS_ACCESS_DENIED", err)
	}
}
