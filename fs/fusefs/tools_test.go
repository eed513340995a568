package fusefs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needTool returns the path of an external program the test runs, skipping
// (failing under BLOBSHARE_REQUIRE_ALL=1) when it is not installed; make
// test installs them.
func needTool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(tb, "%s not installed: %v", name, err)
	}
	return p
}

// run runs a command and fails the test with its output if it fails.
func run(tb testing.TB, name string, args ...string) {
	tb.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// TestToolsKeepModificationTimes: the tools that copy or restore a file's
// modification time keep it on the mount, checked through the kernel
// (stat, after the attribute cache has been dropped) and in the core: cp -p
// and cp -a set it on the open descriptor before close, tar -x and rsync
// -t after writing, touch -d on an existing file.
func TestToolsKeepModificationTimes(t *testing.T) {
	tfs, share := mountShare(t)
	want := time.Date(2001, 2, 3, 4, 5, 6, 700_000_000, time.UTC)
	payload := strings.Repeat("timestamps survive the flush\n", 5000) // past the inline size

	src := t.TempDir()
	srcFile := filepath.Join(src, "f.txt")
	if err := os.WriteFile(srcFile, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(srcFile, want, want); err != nil {
		t.Fatal(err)
	}
	// A second mount of the same file system: its kernel has cached
	// nothing, so its stat shows what the daemon answers, not what the
	// first mount's kernel kept from a SETATTR reply.
	fresh := filepath.Join(mountTestFS(t, tfs, Options{ShareMode: DefaultShareMode}).Dir(), "share")
	tarball := filepath.Join(t.TempDir(), "f.tar")
	run(t, "tar", "--format=posix", "-cf", tarball, "-C", src, "f.txt") // pax keeps nanoseconds

	tests := []struct {
		name string
		// copy puts a file with payload and mtime want at dst (a path on
		// the mount named after the test).
		copy func(t *testing.T, dst string)
	}{
		{"cp -p", func(t *testing.T, dst string) { run(t, "cp", "-p", srcFile, dst) }},
		{"cp -a", func(t *testing.T, dst string) { run(t, "cp", "-a", srcFile, dst) }},
		{"tar -x", func(t *testing.T, dst string) {
			if err := os.Mkdir(dst+".d", 0o755); err != nil {
				t.Fatal(err)
			}
			run(t, "tar", "-xf", tarball, "-C", dst+".d")
			if err := os.Rename(filepath.Join(dst+".d", "f.txt"), dst); err != nil {
				t.Fatal(err)
			}
		}},
		{"rsync -t", func(t *testing.T, dst string) { run(t, needTool(t, "rsync"), "-t", srcFile, dst) }},
		{"touch -d", func(t *testing.T, dst string) {
			if err := os.WriteFile(dst, []byte(payload), 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, "touch", "-d", want.Format("2006-01-02 15:04:05.000000000Z"), dst)
		}},
		{"futimens before close", func(t *testing.T, dst string) {
			f, err := os.Create(dst)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(payload); err != nil {
				t.Fatal(err)
			}
			ts := []unix.Timespec{unix.NsecToTimespec(want.UnixNano()), unix.NsecToTimespec(want.UnixNano())}
			if err := unix.UtimesNanoAt(int(f.Fd()), "", ts, unix.AT_EMPTY_PATH); err != nil {
				t.Fatalf("futimens: %v", err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "copy" + strconv.Itoa(i)
			dst := filepath.Join(share, name)
			tc.copy(t, dst)
			a, _, err := tfs.fsys.Stat(context.Background(), "share/"+name, "")
			if err != nil {
				t.Fatal(err)
			}
			if !a.LastWrite.Equal(want) || a.Size != int64(len(payload)) {
				t.Errorf("core: size %d, last write %v; want %d, %v", a.Size, a.LastWrite.UTC(), len(payload), want)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(fresh, name), &st); err != nil {
				t.Fatal(err)
			}
			if got := time.Unix(st.Mtim.Unix()).UTC(); !got.Equal(want) {
				t.Errorf("stat on the mount: mtime %v, want %v", got, want)
			}
		})
	}
}

// TestStatfsInodes: df -i shows consistent numbers: Inodes = IUsed + IFree,
// IUsed the entries in use, and creating a file uses one more.
func TestStatfsInodes(t *testing.T) {
	_, share := mountShare(t)
	df := func() (inodes, used, free int64) {
		out, err := exec.Command("df", "-i", share).CombinedOutput()
		if err != nil {
			t.Fatalf("df -i: %v\n%s", err, out)
		}
		// Filesystem Inodes IUsed IFree IUse% Mounted on
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		f := strings.Fields(lines[len(lines)-1])
		if len(f) < 4 {
			t.Fatalf("df -i output %q", out)
		}
		f = f[1:4]
		var v [3]int64
		for i := range f {
			if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
				t.Fatalf("df -i output %q: %v", out, err)
			}
		}
		return v[0], v[1], v[2]
	}
	inodes, used, free := df()
	if used < 1 || free < 1 || inodes != used+free {
		t.Fatalf("df -i: Inodes %d IUsed %d IFree %d: want Inodes = IUsed + IFree, both positive", inodes, used, free)
	}
	if err := os.WriteFile(filepath.Join(share, "one-more"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, used2, _ := df()
	if used2 != used+1 {
		t.Errorf("df -i: IUsed %d after creating a file, was %d", used2, used)
	}
}
