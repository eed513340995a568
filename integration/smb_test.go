package integration

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/rest"
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
		Initiator:  &smb2.NTLMInitiator{User: rest.DevAccount, Password: rest.DevKey},
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
