package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

// mixed is a running serve --mount with one share, the setting of every
// mixed SMB/REST scenario.
type mixed struct {
	srv   *server
	share *share.Client
	dir   string // the share's directory on the mount
}

func startMixed(t *testing.T) *mixed {
	t.Helper()
	requireFUSE(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, t.TempDir(), "--mount", mnt)
	if s.Mount != mnt {
		t.Fatalf("serve reports mount %q, want %q", s.Mount, mnt)
	}
	sh := serviceClient(t, s).NewShareClient("mixed")
	if _, err := sh.Create(testCtx(t), nil); err != nil {
		t.Fatalf("create share: %v", err)
	}
	return &mixed{srv: s, share: sh, dir: filepath.Join(mnt, "mixed")}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (m *mixed) file(name string) *file.Client {
	return m.share.NewRootDirectoryClient().NewFileClient(name)
}

// putFile writes content through REST: Create + Upload.
func (m *mixed) putFile(t *testing.T, name string, content []byte) {
	t.Helper()
	fc := m.file(name)
	if _, err := fc.Create(testCtx(t), int64(len(content)), nil); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if len(content) > 0 {
		if _, err := fc.UploadRange(testCtx(t), 0, streaming.NopCloser(bytes.NewReader(content)), nil); err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
	}
}

func (m *mixed) download(t *testing.T, name string, r file.HTTPRange) ([]byte, error) {
	t.Helper()
	resp, err := m.file(name).DownloadStream(testCtx(t), &file.DownloadStreamOptions{Range: r})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func uploadAt(ctx context.Context, fc *file.Client, off int64, data []byte) error {
	_, err := fc.UploadRange(ctx, off, streaming.NopCloser(bytes.NewReader(data)), nil)
	return err
}

// errorCode returns the x-ms-error-code of a REST failure ("" if none).
func errorCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// eventually retries f until it returns nil or 10 s pass: RELEASE of a FUSE
// handle reaches the daemon after close(2) has returned (fuse-notes §2.2).
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after 10s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// 1. A process on the mount holds flock -x: the SDK's UploadRange gets
// FileLockConflict (REST sees a flock as a whole-file byte-range lock, as
// the Linux SMB client makes it); after unlock it succeeds.
func TestFlockOnMountBlocksRESTWrite(t *testing.T) {
	m := startMixed(t)
	m.putFile(t, "locked.txt", []byte("0123456789"))
	path := filepath.Join(m.dir, "locked.txt")

	cmd := exec.Command("flock", "-x", path, "-c", "echo locked; read line || true")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 7)
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("flock did not report the lock: %q %v", buf, err)
	}

	err := uploadAt(testCtx(t), m.file("locked.txt"), 0, []byte("new"))
	if !fileerror.HasCode(err, fileerror.FileLockConflict) {
		t.Fatalf("UploadRange under flock -x: err = %v; want FileLockConflict", err)
	}

	stdin.Close() // flock(1) exits, unlocking and closing
	if err := cmd.Wait(); err != nil {
		t.Fatalf("flock: %v", err)
	}
	eventually(t, "UploadRange after unlock", func() error {
		return uploadAt(testCtx(t), m.file("locked.txt"), 0, []byte("new"))
	})
	got, err := m.download(t, "locked.txt", file.HTTPRange{})
	if err != nil || string(got) != "new3456789" {
		t.Fatalf("content after unlock = %q, %v", got, err)
	}
}

// 2. rm on the mount while another process holds the file open: REST gets
// SMBDeletePending and the listing leaves it out; after close, 404.
func TestRmWhileOpenIsDeletePendingOverREST(t *testing.T) {
	m := startMixed(t)
	m.putFile(t, "victim.txt", []byte("still here"))
	m.putFile(t, "other.txt", []byte("x"))
	path := filepath.Join(m.dir, "victim.txt")
	h := hold(t, "hold", path, "BLOBSHARE_HELPER_FLAGS=r")

	if out, err := exec.Command("rm", path).CombinedOutput(); err != nil {
		t.Fatalf("rm: %v %s", err, out)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after rm the name is still on the mount: %v", err)
	}
	_, err := m.file("victim.txt").GetProperties(testCtx(t), nil)
	if code := errorCode(err); code != "SMBDeletePending" {
		t.Fatalf("GetProperties of a delete-pending file: code %q (%v); want SMBDeletePending", code, err)
	}
	if names := listRoot(t, m); strings.Join(names, ",") != "other.txt" {
		t.Fatalf("listing while delete-pending = %v; want [other.txt]", names)
	}

	if err := h.release(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "404 after the last close", func() error {
		_, err := m.file("victim.txt").GetProperties(testCtx(t), nil)
		if fileerror.HasCode(err, fileerror.ResourceNotFound) {
			return nil
		}
		return errors.New("not yet gone: " + errorCode(err))
	})
}

func listRoot(t *testing.T, m *mixed) []string {
	t.Helper()
	var names []string
	pager := m.share.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(testCtx(t))
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, f := range page.Segment.Files {
			names = append(names, *f.Name)
		}
		for _, d := range page.Segment.Directories {
			names = append(names, *d.Name+"/")
		}
	}
	return names
}

// 3. An fcntl lock on a range: REST reads and writes overlapping it get
// FileLockConflict, others succeed.
func TestFcntlRangeLockAgainstREST(t *testing.T) {
	m := startMixed(t)
	content := bytes.Repeat([]byte("abcdefghij"), 30) // 300 bytes
	m.putFile(t, "ranges.bin", content)
	hold(t, "fcntl", filepath.Join(m.dir, "ranges.bin"), "BLOBSHARE_HELPER_RANGE=100:50") // bytes 100..149

	ctx := testCtx(t)
	fc := m.file("ranges.bin")
	cases := []struct {
		name     string
		do       func() error
		conflict bool
	}{
		{"read overlapping", func() error {
			_, err := m.download(t, "ranges.bin", file.HTTPRange{Offset: 120, Count: 10})
			return err
		}, true},
		{"read touching last locked byte", func() error { _, err := m.download(t, "ranges.bin", file.HTTPRange{Offset: 149, Count: 1}); return err }, true},
		{"read whole file", func() error { _, err := m.download(t, "ranges.bin", file.HTTPRange{}); return err }, true},
		{"read before", func() error { _, err := m.download(t, "ranges.bin", file.HTTPRange{Offset: 0, Count: 100}); return err }, false},
		{"read after", func() error {
			_, err := m.download(t, "ranges.bin", file.HTTPRange{Offset: 150, Count: 100})
			return err
		}, false},
		{"write overlapping", func() error { return uploadAt(ctx, fc, 140, []byte("XXXXXXXXXXXXXXXXXXXX")) }, true},
		{"write before", func() error { return uploadAt(ctx, fc, 0, []byte("ZZ")) }, false},
		{"write after", func() error { return uploadAt(ctx, fc, 150, []byte("YY")) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.conflict && !fileerror.HasCode(err, fileerror.FileLockConflict) {
				t.Fatalf("err = %v; want FileLockConflict", err)
			}
			if !tc.conflict && err != nil {
				t.Fatalf("err = %v; want success", err)
			}
		})
	}
}

// 4. REST writes are visible to a new open on the mount; mount writes are
// visible to REST after close.
func TestWritesVisibleAcrossMountAndREST(t *testing.T) {
	m := startMixed(t)
	path := filepath.Join(m.dir, "shared.txt")

	m.putFile(t, "shared.txt", []byte("from rest v1"))
	if got, err := os.ReadFile(path); err != nil || string(got) != "from rest v1" {
		t.Fatalf("mount reads %q, %v", got, err)
	}
	// Change it over REST after the mount has read (and may cache) it.
	if err := uploadAt(testCtx(t), m.file("shared.txt"), 10, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "from rest v2" {
		t.Fatalf("mount after REST change reads %q, %v", got, err)
	}

	if err := os.WriteFile(path, []byte("from the mount, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := m.download(t, "shared.txt", file.HTTPRange{})
	if err != nil || string(got) != "from the mount, longer" {
		t.Fatalf("REST reads %q, %v after the mount's write", got, err)
	}
}

// 5. A lease acquired over REST: an open for write on the mount fails; after
// release it succeeds.
func TestRESTLeaseBlocksMountWriteOpen(t *testing.T) {
	m := startMixed(t)
	m.putFile(t, "leased.txt", []byte("lease me"))
	path := filepath.Join(m.dir, "leased.txt")
	lc, err := lease.NewFileClient(m.file("leased.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(testCtx(t), nil); err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); !errors.Is(err, syscall.EBUSY) {
		if err == nil {
			f.Close()
		}
		t.Fatalf("open for write under a lease: %v; want EBUSY", err)
	}
	if f, err := os.Open(path); err != nil {
		t.Fatalf("open for read under a lease: %v", err)
	} else {
		f.Close()
	}
	if _, err := lc.Release(testCtx(t), nil); err != nil {
		t.Fatalf("release: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open for write after release: %v", err)
	}
	f.Close()
}
