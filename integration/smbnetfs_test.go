package integration

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/filerest"
)

// TestSMBNetFS: a Linux user without the kernel's SMB client mounts the
// SMB endpoint with smbnetfs (FUSE over libsmbclient) and works on it with
// ordinary tools: tar -x and cp -a of a source tree arrive byte for byte,
// and FileREST reads what they wrote; git init and add store objects that
// git fsck accepts. (git commit fails on smbnetfs against Samba's smbd as
// well: libsmbclient opens .git/logs/HEAD for appending without
// FILE_READ_ATTRIBUTES and then asks for its attributes, which smbd and
// blobshare both refuse.)
//
// libsmbclient reaches SMB on port 445 only, so serve listens there.
func TestSMBNetFS(t *testing.T) {
	requireFUSE(t)
	smbnetfs, err := exec.LookPath("smbnetfs")
	if err != nil {
		if requireAll() {
			t.Fatalf("smbnetfs not installed (make debs): %v", err)
		}
		t.Skipf("smbnetfs not installed (make debs): %v", err)
	}
	s := startServe(t, t.TempDir(), "--smb", "127.0.0.1:445")
	ctx := context.Background()
	if _, err := serviceClient(t, s).NewShareClient("docs").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	conf := filepath.Join(home, ".smb")
	writeFile(t, filepath.Join(conf, "smb.conf"), "[global]\n  client min protocol = SMB2\n")
	writeFile(t, filepath.Join(conf, "smbnetfs.conf"),
		"auth \""+filerest.DevAccount+"\" \""+filerest.DevKey+"\"\nsmb_query_browsers false\n")
	mnt := t.TempDir()
	cmd := exec.CommandContext(ctx, smbnetfs, mnt, "-o", "config="+filepath.Join(conf, "smbnetfs.conf")+",log_file="+filepath.Join(home, "smbnetfs.log"))
	cmd.Env = append(os.Environ(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil { // returns once mounted; the daemon serves on
		t.Fatalf("smbnetfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount smbnetfs: %v", err)
		}
	})
	share := filepath.Join(mnt, "127.0.0.1", "docs")

	// A source tree: two of this repository's packages.
	src := filepath.Join(t.TempDir(), "tree")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"locks", "secdesc"} {
		run(t, "", "cp", "-a", filepath.Join("..", pkg), filepath.Join(src, pkg))
	}
	tarball := filepath.Join(t.TempDir(), "tree.tar")
	run(t, filepath.Dir(src), "tar", "-cf", tarball, "tree")

	run(t, share, "tar", "-xf", tarball)
	sameTree(t, src, filepath.Join(share, "tree"))
	run(t, "", "cp", "-a", src, filepath.Join(share, "copy"))
	sameTree(t, src, filepath.Join(share, "copy"))

	// FileREST reads what tar wrote through SMB.
	want, err := os.ReadFile(filepath.Join(src, "locks", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := serviceClient(t, s).NewShareClient("docs").NewDirectoryClient("tree").NewSubdirectoryClient("locks").
		NewFileClient("doc.go").DownloadStream(ctx, nil)
	if err != nil {
		t.Fatalf("REST read of a file tar wrote over SMB: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, want) {
		t.Fatalf("REST read %d bytes of tree/locks/doc.go, want %d", len(got), len(want))
	}

	repo := filepath.Join(share, "repo")
	run(t, "", "cp", "-a", filepath.Join(src, "secdesc"), repo)
	run(t, repo, "git", "init", "-q")
	run(t, repo, "git", "add", "-A")
	run(t, repo, "git", "fsck", "--no-dangling")
	if out := run(t, repo, "git", "ls-files"); !strings.Contains(out, "secdesc.go") {
		t.Fatalf("git ls-files after add: %q", out)
	}
}

// run runs a command in dir (the test's directory when "") with a time
// bound and returns its standard output; any failure fails the test.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil { // smbnetfs refuses auth from a readable file
		t.Fatal(err)
	}
}

// sameTree fails the test unless got holds exactly want's directories and
// files, with the same bytes.
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	names := func(root string) map[string]bool {
		m := map[string]bool{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel] = d.IsDir()
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
		return m
	}
	w, g := names(want), names(got)
	if len(w) != len(g) {
		t.Fatalf("%s has %d entries, %s %d", got, len(g), want, len(w))
	}
	for rel, isDir := range w {
		gotDir, ok := g[rel]
		if !ok || gotDir != isDir {
			t.Fatalf("%s: %s missing or of another kind", got, rel)
		}
		if isDir {
			continue
		}
		a, err := os.ReadFile(filepath.Join(want, rel))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil {
			t.Fatalf("read %s through smbnetfs: %v", rel, err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: %d bytes through smbnetfs, want %d", rel, len(b), len(a))
		}
	}
}
