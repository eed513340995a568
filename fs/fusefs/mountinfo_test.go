package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	mi := []byte(`22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 0:45 / /mnt/my\040share rw,nosuid,nodev,relatime shared:20 - fuse.blobshare blobshare rw,user_id=0,group_id=0
37 22 0:46 / /mnt/a\134b rw master:3 - tmpfs my\040tmp rw
short line
`)
	want := []mountEntry{
		{Point: "/", FSType: "ext4", Source: "/dev/sda1"},
		{Point: "/mnt/my share", FSType: "fuse.blobshare", Source: "blobshare"},
		{Point: `/mnt/a\b`, FSType: "tmpfs", Source: "my tmp"},
	}
	got := parseMountinfo(mi)
	if len(got) != len(want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestMountRefusesLiveMount: a second mount on a mount point that is
// mounted (and alive) is refused with ErrAlreadyMounted, and nothing is
// stacked: the first mount still serves.
func TestMountRefusesLiveMount(t *testing.T) {
	tfs := openTestFS(t, t.TempDir())
	dir := mountTestFS(t, tfs, Options{ShareMode: DefaultShareMode}).Dir()
	_, err := Mount(t.Context(), dir, tfs.fsys, Options{ShareMode: DefaultShareMode, Logger: testLogger(t)})
	if !errors.Is(err, ErrAlreadyMounted) || !errors.Is(err, ErrMount) {
		t.Fatalf("second mount on %s: %v, want ErrAlreadyMounted", dir, err)
	}
	n := 0
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, e := range parseMountinfo(mi) {
		if e.Point == dir {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d mounts on %s, want 1", n, dir)
	}
	if err := os.Mkdir(filepath.Join(dir, "still"), 0o755); err != nil {
		t.Errorf("the first mount after the refused second: %v", err)
	}
}
