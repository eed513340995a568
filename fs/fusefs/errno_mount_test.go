package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNamespaceErrno checks the errno of namespace outcomes on a whole-
// account mount (shares are the top-level directories).
func TestNamespaceErrno(t *testing.T) {
	needFUSE(t)
	tfs := openTestFS(t, t.TempDir())
	m := mountTestFS(t, tfs, Options{ShareMode: DefaultShareMode})
	root := m.Dir()
	for _, s := range []string{"alpha", "beta"} {
		if err := os.Mkdir(filepath.Join(root, s), 0o755); err != nil {
			t.Fatalf("mkdir share %s: %v", s, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "alpha", "dir", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "alpha", "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	tests := []struct {
		name string
		op   func() error
		want syscall.Errno
	}{
		{"share name too short", func() error { return os.Mkdir(in("ab"), 0o755) }, syscall.EINVAL},
		{"share name with upper case", func() error { return os.Mkdir(in("Gamma"), 0o755) }, syscall.EINVAL},
		{"share exists", func() error { return os.Mkdir(in("alpha"), 0o755) }, syscall.EEXIST},
		{"file at the account root", func() error { return os.WriteFile(in("loose"), nil, 0o644) }, syscall.EINVAL},
		{"invalid file name", func() error { return os.WriteFile(in("alpha", "a|b"), nil, 0o644) }, syscall.EINVAL},
		{"name too long", func() error { return os.WriteFile(in("alpha", strings.Repeat("n", 256)), nil, 0o644) }, syscall.ENAMETOOLONG},
		{"missing file", func() error { _, err := os.Stat(in("alpha", "nope")); return err }, syscall.ENOENT},
		{"directory exists (other case)", func() error { return os.Mkdir(in("alpha", "DIR"), 0o755) }, syscall.EEXIST},
		{"rmdir non-empty", func() error { return syscall.Rmdir(in("alpha", "dir")) }, syscall.ENOTEMPTY},
		{"rmdir a file", func() error { return syscall.Rmdir(in("alpha", "file")) }, syscall.ENOTDIR},
		{"unlink a directory", func() error { return syscall.Unlink(in("alpha", "dir", "sub")) }, syscall.EISDIR},
		{"rename across shares", func() error { return os.Rename(in("alpha", "file"), in("beta", "file")) }, syscall.EXDEV},
		{"rename a directory into itself", func() error { return os.Rename(in("alpha", "dir"), in("alpha", "dir", "sub", "x")) }, syscall.EINVAL},
		{"rmdir a non-empty share", func() error { return syscall.Rmdir(in("alpha")) }, syscall.ENOTEMPTY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			var errno syscall.Errno
			if !errors.As(err, &errno) || errno != tt.want {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	// An empty share can be removed.
	if err := syscall.Rmdir(in("beta")); err != nil {
		t.Fatalf("rmdir empty share: %v", err)
	}
}
