package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const fuseSuperMagic = 0x65735546

func TestMountUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing mount point", []string{"mount", "--data", dir, filepath.Join(dir, "nope")}, "does not exist"},
		{"mount point is a file", []string{"mount", "--data", dir, file}, "not a directory"},
		{"no mount point", []string{"mount", "--data", dir}, "expected one MOUNTPOINT"},
		{"bad share mode", []string{"mount", "--data", dir, "--share-mode", "exclusive", dir}, "share-mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp()
			var out, errOut bytes.Buffer
			app.Writer, app.ErrWriter = &out, &errOut
			err := app.Run(append([]string{"blobshare"}, tt.args...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

// TestMountServesAndUnmounts runs the command in-process, uses the mount,
// then cancels (as SIGINT would) and expects a clean exit.
func TestMountServesAndUnmounts(t *testing.T) {
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil || os.Geteuid() != 0 {
		if os.Getenv("BLOBSHARE_REQUIRE_ALL") == "1" {
			t.Fatalf("BLOBSHARE_REQUIRE_ALL=1: FUSE unavailable (%v, euid %d)", err, os.Geteuid())
		}
		t.Skipf("FUSE unavailable (%v, euid %d)", err, os.Geteuid())
	} else {
		f.Close()
	}
	data, mnt := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app := newApp()
	var errOut bytes.Buffer
	app.ErrWriter = &errOut
	done := make(chan error, 1)
	go func() { done <- app.RunContext(ctx, []string{"blobshare", "mount", "--data", data, mnt}) }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err == nil && st.Type == fuseSuperMagic {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("mount exited early: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mount did not appear\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	share := filepath.Join(mnt, "myshare")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatalf("mkdir at the root (creates a share): %v", err)
	}
	p := filepath.Join(share, "hello.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "hello" {
		t.Fatalf("read back: %q %v", got, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mount exited with %v\n%s", err, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("mount did not exit after cancel")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil || st.Type == fuseSuperMagic {
		t.Fatalf("still mounted after exit (type %#x, %v)", st.Type, err)
	}
	if !strings.Contains(errOut.String(), "blobshare mounted") {
		t.Errorf("no mount log line: %q", errOut.String())
	}
}
