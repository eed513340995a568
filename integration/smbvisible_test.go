package integration

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/filerest"
)

// TestServeSMBWriteSeenByOtherProcesses: a WRITE `blobshare serve` answered
// over SMB, with no FLUSH and the handle still open, is in the file for a
// `blobshare session` process and a `blobshare mount` process over the
// same data directory (issue 26): their reads ask serve to commit the
// staged writes and wait for it.
func TestServeSMBWriteSeenByOtherProcesses(t *testing.T) {
	requireFUSE(t)
	data := t.TempDir()
	s := startServe(t, data)
	ctx := context.Background()
	m := &mixed{srv: s, share: serviceClient(t, s).NewShareClient("visible")}
	if _, err := m.share.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	m.putFile(t, "log.txt", []byte("old!"))
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
	sh, err := sess.Mount("visible")
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	w, err := sh.OpenFile("log.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	if _, err := w.WriteAt([]byte("new!"), 0); err != nil {
		t.Fatal(err)
	}
	ss := startSession(t, data)
	if a := ss.do(t, "open h1 visible/log.txt access=read share=read,write,delete"); !strings.HasPrefix(a, "ok ") {
		t.Fatalf("session open: %q", a)
	}
	if a, want := ss.do(t, "read h1 0 100"), "ok "+hex.EncodeToString([]byte("new!")); a != want {
		t.Errorf("the session process reads %q right after the SMB write, want %q", a, want)
	}

	if _, err := w.WriteAt([]byte("+more"), 4); err != nil {
		t.Fatal(err)
	}
	if a, want := ss.do(t, "read h1 0 100"), "ok "+hex.EncodeToString([]byte("new!+more")); a != want {
		t.Errorf("the session process's open handle reads %q after the next SMB write, want %q", a, want)
	}
	if a := ss.do(t, "close h1"); a != "ok" {
		t.Fatalf("session close: %q", a)
	}

	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	startMountProcess(t, data, mnt, "--share", "visible")
	if _, err := w.WriteAt([]byte(" and more"), 9); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "log.txt")); err != nil || string(got) != "new!+more and more" {
		t.Errorf("the mount process reads %q (%v) right after the SMB write, want %q", got, err, "new!+more and more")
	}
}
