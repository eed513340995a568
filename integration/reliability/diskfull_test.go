package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
)

// smallFS mounts a tmpfs of size bytes at a fresh directory and unmounts it
// in Cleanup.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if requireAll() {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// readOnlyBind turns dir read-only in place (a read-only bind mount of
// itself) and returns the function that undoes it. Files already open keep
// working; every new open for writing gets EROFS.
func readOnlyBind(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s: %v", dir, err)
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
	done := false
	undo = func() {
		if done {
			return
		}
		done = true
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount read-only bind %s: %v", dir, err)
		}
	}
	t.Cleanup(undo)
	return undo
}

// diskRig is a serve whose --data lives on a small tmpfs.
type diskRig struct {
	t    *testing.T
	s    *server
	mdir string
	fc   func(name string) *file.Client
	kept map[string][32]byte // name → sha256 of content stored before the trouble
}

func newDiskRig(t *testing.T, size string) (*diskRig, string) {
	requireMountable(t)
	small := smallFS(t, size)
	data := filepath.Join(small, "data")
	s := startServe(t, data, "--mount", t.TempDir())
	ctx := context.Background()
	svc := serviceClient(t, s.RESTURL, -1)
	if _, err := svc.CreateShare(ctx, "full", nil); err != nil {
		t.Fatal(err)
	}
	root := svc.NewShareClient("full").NewRootDirectoryClient()
	r := &diskRig{t: t, s: s, mdir: filepath.Join(s.Mount, "full"), fc: root.NewFileClient, kept: map[string][32]byte{}}
	for i, n := range []int{3000, 100_000, 5 << 20} {
		b := record(uint32(100+i), 0, 1, n)
		name := fmt.Sprintf("kept-rest-%d", i)
		if err := putWhole(ctx, r.fc(name), b); err != nil {
			t.Fatal(err)
		}
		r.kept[name] = sha256.Sum256(b)
		name = fmt.Sprintf("kept-mount-%d", i)
		if err := os.WriteFile(filepath.Join(r.mdir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r.kept[name] = sha256.Sum256(b)
	}
	return r, small
}

// putWhole creates name with content b over REST (Put Range ≤ 4 MiB each).
func putWhole(ctx context.Context, fc *file.Client, b []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := fc.Create(ctx, int64(len(b)), nil); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	for off := 0; off < len(b); off += 4 << 20 {
		end := min(off+4<<20, len(b))
		if _, err := fc.UploadRange(ctx, int64(off), streaming.NopCloser(bytes.NewReader(b[off:end])), nil); err != nil {
			return fmt.Errorf("put range at %d: %w", off, err)
		}
	}
	return nil
}

// checkKept verifies the database (PRAGMA integrity_check) and every
// stored file over REST and over the mount.
func (r *diskRig) checkKept(ctx context.Context, when string) {
	r.t.Helper()
	db := openDB(r.t, r.s.Data)
	rep, err := integrityCheck(ctx, db)
	db.Close()
	if err != nil || rep != "ok" {
		r.t.Errorf("%s: integrity_check: %q, %v", when, rep, err)
	}
	for name, sum := range r.kept {
		b, exists, err := download(ctx, r.fc(name))
		if err != nil || !exists {
			r.t.Errorf("%s: %s over REST: exists %v, %v", when, name, exists, err)
			continue
		}
		if sha256.Sum256(b) != sum {
			r.t.Errorf("%s: %s damaged (REST reads %d bytes with another checksum)", when, name, len(b))
		}
		mb, err := os.ReadFile(filepath.Join(r.mdir, name))
		if err != nil || sha256.Sum256(mb) != sum {
			r.t.Errorf("%s: %s over the mount: %d bytes, %v, checksum ok %v", when, name, len(mb), err, err == nil && sha256.Sum256(mb) == sum)
		}
	}
}

// refusal describes how a REST write failed: it must be an Azure error
// that the SDK does not retry (a 4xx; 500/503 are retried for long).
func refusal(err error) (status int, code string, ok bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return 0, "", false
	}
	return re.StatusCode, re.ErrorCode, true
}

// TestDiskFull fills the data directory's file system from both sides: the
// mount must report ENOSPC, REST an Azure error the SDK does not retry;
// files already stored stay intact, and writes work again once space is
// freed.
func TestDiskFull(t *testing.T) {
	r, _ := newDiskRig(t, "64m")
	ctx := context.Background()

	// REST: grow files 4 MiB at a time until the store refuses.
	var restErr error
	var restFill []string
	for i := 0; i < 40 && restErr == nil; i++ {
		name := fmt.Sprintf("fill-rest-%d", i)
		restErr = putWhole(ctx, r.fc(name), record(200, uint32(i), 1, 4<<20))
		restFill = append(restFill, name)
	}
	if restErr == nil {
		t.Fatal("160 MiB written over REST to a 64 MiB file system without an error")
	}
	status, code, ok := refusal(restErr)
	t.Logf("REST write on a full disk: %d %s (%v)", status, code, restErr)
	fmt.Printf("disk full over REST: %d %s\n", status, code)
	t.Logf("server log:\n%s", lastLines(r.s.Stderr.String(), 6))
	if !ok {
		t.Errorf("REST write on a full disk failed without an Azure error: %v", restErr)
	} else if status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests {
		took := defaultClientRetryTime(t, r.s, restFill[len(restFill)-1])
		t.Errorf("FINDING: REST write on a full disk answers %d %s, which the Azure SDKs retry: one Put Range with the Go SDK's default options took %v to fail; want a non-retried 4xx with an out-of-space code", status, code, took.Round(time.Second))
		fmt.Printf("disk full over REST: a Put Range with default SDK retry options fails after %v\n", took.Round(time.Millisecond))
	}

	// The mount: write until ENOSPC surfaces from write, fsync or close.
	var mountErr error
	for i := 0; i < 40 && mountErr == nil; i++ {
		p := filepath.Join(r.mdir, fmt.Sprintf("fill-mount-%d", i))
		mountErr = writeFileSync(p, record(201, uint32(i), 1, 4<<20))
	}
	t.Logf("mount write on a full disk: %v", mountErr)
	fmt.Printf("disk full on the mount: %v\n", mountErr)
	if !errors.Is(mountErr, syscall.ENOSPC) {
		t.Errorf("mount write on a full disk: %v; want ENOSPC", mountErr)
	}

	r.checkKept(ctx, "disk full")

	// Free the space and write again, on both sides.
	ents, err := os.ReadDir(r.mdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if len(e.Name()) > 5 && e.Name()[:5] == "fill-" {
			if err := os.Remove(filepath.Join(r.mdir, e.Name())); err != nil {
				t.Errorf("free %s: %v", e.Name(), err)
			}
		}
	}
	b := record(300, 0, 1, 4<<20)
	if err := putWhole(ctx, r.fc("after-rest"), b); err != nil {
		t.Errorf("REST write after space returned: %v", err)
	} else {
		r.kept["after-rest"] = sha256.Sum256(b)
	}
	if err := writeFileSync(filepath.Join(r.mdir, "after-mount"), b); err != nil {
		t.Errorf("mount write after space returned: %v", err)
	} else {
		r.kept["after-mount"] = sha256.Sum256(b)
	}
	r.checkKept(ctx, "after recovery")
}

// TestReadOnlyDataDir is the I/O-error variant: the data directory's file
// blob store turns read-only under a running serve. Writes must fail cleanly
// (EROFS or EIO on the mount, a non-retried REST error), reads keep
// working, nothing stored is damaged, and writes work again once the file
// system is writable.
func TestReadOnlyDataDir(t *testing.T) {
	r, small := newDiskRig(t, "64m")
	ctx := context.Background()
	undo := readOnlyBind(t, filepath.Join(small, "data", "blobs"))

	restErr := putWhole(ctx, r.fc("ro-rest"), record(400, 0, 1, 1<<20))
	status, code, _ := refusal(restErr)
	t.Logf("REST write on a read-only data dir: %d %s (%v)", status, code, restErr)
	fmt.Printf("read-only data dir over REST: %d %s\n", status, code)
	if restErr == nil {
		t.Error("REST write on a read-only data directory succeeded")
	} else if status >= 500 && code != "InternalError" {
		t.Errorf("REST write on a read-only data dir: %d %s; want InternalError for an I/O failure or a 4xx", status, code)
	}
	mountErr := writeFileSync(filepath.Join(r.mdir, "ro-mount"), record(401, 0, 1, 1<<20))
	t.Logf("mount write on a read-only data dir: %v", mountErr)
	fmt.Printf("read-only data dir on the mount: %v\n", mountErr)
	if !errors.Is(mountErr, syscall.EROFS) && !errors.Is(mountErr, syscall.EIO) {
		t.Errorf("mount write on a read-only data dir: %v; want EROFS or EIO", mountErr)
	}
	r.checkKept(ctx, "read-only")

	undo()
	b := record(402, 0, 1, 1<<20)
	if err := putWhole(ctx, r.fc("rw-rest"), b); err != nil {
		t.Errorf("REST write after the file system is writable again: %v", err)
	} else {
		r.kept["rw-rest"] = sha256.Sum256(b)
	}
	if err := writeFileSync(filepath.Join(r.mdir, "rw-mount"), b); err != nil {
		t.Errorf("mount write after the file system is writable again: %v", err)
	} else {
		r.kept["rw-mount"] = sha256.Sum256(b)
	}
	r.checkKept(ctx, "writable again")
}

// writeFileSync creates p with b, fsyncs and closes it, returning the first
// error.
func writeFileSync(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// defaultClientRetryTime measures how long one 4 MiB Put Range on name takes
// to fail with an azfile client built with default options (its retry
// policy included), as an application would build it.
func defaultClientRetryTime(t *testing.T, s *server, name string) time.Duration {
	t.Helper()
	conn := "DefaultEndpointsProtocol=http;AccountName=" + devAccount + ";AccountKey=" + devKey + ";FileEndpoint=" + s.RESTURL + ";"
	svc, err := service.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := svc.NewShareClient("full").NewRootDirectoryClient().NewFileClient(name)
	start := time.Now()
	_, err = fc.UploadRange(context.Background(), 0, streaming.NopCloser(bytes.NewReader(make([]byte, 4<<20))), nil)
	took := time.Since(start)
	if err == nil {
		t.Logf("the default-option Put Range succeeded after %v", took)
	}
	return took
}
