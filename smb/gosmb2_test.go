package smb_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"sort"
	"testing"
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
