package smb_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"testing"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/ntstatus"
)

// TestGoSMB2FileOps drives a share made over REST through go-smb2 with
// signing required: mkdir, create, write 64 MiB, read back, rename, list,
// stat, remove; REST then sees what SMB wrote.
func TestGoSMB2FileOps(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	sh := e.dial("data")

	if err := sh.Mkdir("dir", 0o755); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	want := make([]byte, 64<<20)
	if _, err := rand.Read(want); err != nil {
		t.Fatal(err)
	}
	f, err := sh.Create(`dir\big.bin`)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if n, err := f.Write(want); err != nil || n != len(want) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	got, err := sh.ReadFile(`dir\big.bin`)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, differ from the %d written", len(got), len(want))
	}

	if err := sh.Rename(`dir\big.bin`, `dir\renamed.bin`); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if err := sh.WriteFile(`dir\small.txt`, []byte("hello"), 0o644); err != nil {
		t.Fatalf("write small: %v", err)
	}
	infos, err := sh.ReadDir("dir")
	if err != nil {
		t.Fatalf("readdir: %v", err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	sort.Strings(names)
	if len(names) != 2 || names[0] != "renamed.bin" || names[1] != "small.txt" {
		t.Fatalf("listing = %v, want [renamed.bin small.txt]", names)
	}
	fi, err := sh.Stat(`dir\renamed.bin`)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if fi.Size() != int64(len(want)) || fi.IsDir() {
		t.Fatalf("stat: size %d dir %v", fi.Size(), fi.IsDir())
	}
	if _, err := sh.Stat(`dir\big.bin`); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of the old name: %v, want not exist", err)
	}

	// REST reads what SMB wrote.
	resp, err := e.file("data", "dir/small.txt").DownloadStream(context.Background(), nil)
	if err != nil {
		t.Fatalf("REST download: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("REST read %q, want hello", body)
	}

	for _, p := range []string{`dir\renamed.bin`, `dir\small.txt`, "dir"} {
		if err := sh.Remove(p); err != nil {
			t.Fatalf("remove %s: %v", p, err)
		}
	}
	if _, err := sh.Stat("dir"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of the removed directory: %v, want not exist", err)
	}
}

// TestGoSMB2Dialects: go-smb2 with signing required on each dialect (the
// signing algorithm and key derivation differ per dialect; 3.1.1 adds the
// preauth integrity hash).
func TestGoSMB2Dialects(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	for _, tt := range []struct {
		name    string
		dialect uint16
	}{{"2.0.2", 0x0202}, {"2.1", 0x0210}, {"3.0", 0x0300}, {"3.0.2", 0x0302}, {"3.1.1", 0x0311}} {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", e.smbAddr)
			if err != nil {
				t.Fatal(err)
			}
			d := &smb2.Dialer{
				Negotiator: smb2.Negotiator{RequireMessageSigning: true, SpecifiedDialect: tt.dialect},
				Initiator:  &smb2.NTLMInitiator{User: filerest.DevAccount, Password: filerest.DevKey, Domain: "ANYDOMAIN"},
			}
			s, err := d.Dial(nc)
			if err != nil {
				nc.Close()
				t.Fatalf("dial: %v", err)
			}
			defer s.Logoff()
			sh, err := s.Mount("data")
			if err != nil {
				t.Fatalf("mount: %v", err)
			}
			defer sh.Umount()
			name := "d" + tt.name + ".txt"
			want := bytes.Repeat([]byte(tt.name), 100000) // more than one 64 KiB credit
			if err := sh.WriteFile(name, want, 0o644); err != nil {
				t.Fatalf("write: %v", err)
			}
			got, err := sh.ReadFile(name)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
			}
			if _, err := sh.ReadDir(""); err != nil {
				t.Fatalf("readdir: %v", err)
			}
		})
	}
}

// TestGoSMB2WrongKey: a wrong key is STATUS_LOGON_FAILURE; the right key
// in another domain is accepted.
func TestGoSMB2WrongKey(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	for _, c := range []struct{ user, key string }{{filerest.DevAccount, "not the key"}, {"someone-else", filerest.DevKey}} {
		_, err := e.session(c.user, c.key)
		var re *smb2.ResponseError
		if !errors.As(err, &re) || ntstatus.Status(re.Code) != ntstatus.LogonFailure {
			t.Fatalf("user %q, key %q: %v, want STATUS_LOGON_FAILURE", c.user, c.key, err)
		}
	}
	if _, err := e.session(strings.ToUpper(filerest.DevAccount), filerest.DevKey); err != nil {
		t.Fatalf("user name in capitals: %v", err)
	}
}

// TestGoSMB2WritesSeenByOtherHandle: what one SMB open writes, another
// open of the file (another session) reads at once, before any FLUSH or
// CLOSE, with the new size, as on a Windows server.
func TestGoSMB2WritesSeenByOtherHandle(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	writer := e.dial("data")
	reader := e.dial("data")
	w, err := writer.OpenFile("shared.txt", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := reader.Open("shared.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, chunk := range []string{"first write, ", "second write"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		want := "first write, second write"[:len("first write, ")+i*len("second write")]
		got := make([]byte, 64)
		n, err := r.ReadAt(got, 0)
		if string(got[:n]) != want {
			t.Fatalf("after write %d the other handle reads %q (%v), want %q", i, got[:n], err, want)
		}
		st, err := r.Stat()
		if err != nil || st.Size() != int64(len(want)) {
			t.Fatalf("after write %d the other handle's stat: size %v, %v; want %d", i, st, err, len(want))
		}
	}
}

// TestGoSMB2RenameDirWithOpenFile: a directory with a file open below it
// does not move (STATUS_ACCESS_DENIED, which go-smb2 reports as
// os.ErrPermission); once the file is closed it does.
func TestGoSMB2RenameDirWithOpenFile(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	sh := e.dial("data")
	if err := sh.MkdirAll(`outer\inner`, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := sh.Create(`outer\inner\open.txt`)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Rename("outer", "moved"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("rename with a file open two levels below: %v, want STATUS_ACCESS_DENIED", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sh.Rename("outer", "moved"); err != nil {
		t.Fatalf("rename once the file is closed: %v", err)
	}
	if _, err := sh.Stat(`moved\inner\open.txt`); err != nil {
		t.Fatalf("the file after the rename: %v", err)
	}
}

// TestGoSMB2RenameOutOfDirOpenForDelete: while another session holds the
// parent directory open with DELETE access, a file in it does not move
// (STATUS_SHARING_VIOLATION); once that open closes, it does.
func TestGoSMB2RenameOutOfDirOpenForDelete(t *testing.T) {
	e := newEnv(t)
	e.mustShare("data")
	sh := e.dial("data")
	if err := sh.Mkdir("dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sh.WriteFile(`dir\a.txt`, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.smbctl(t, "data")
	// DELETE | FILE_LIST_DIRECTORY, share all, FILE_OPEN, FILE_DIRECTORY_FILE.
	c.expect("ok", "open d dir 0x00010001 7 1 1")
	var re *smb2.ResponseError
	if err := sh.Rename(`dir\a.txt`, `dir\b.txt`); !errors.As(err, &re) || re.Code != 0xC0000043 {
		t.Fatalf("rename while the parent is open with DELETE: %v, want STATUS_SHARING_VIOLATION", err)
	}
	c.expect("ok", "close d")
	if err := sh.Rename(`dir\a.txt`, `dir\b.txt`); err != nil {
		t.Fatalf("rename once the parent's open closed: %v", err)
	}
}
