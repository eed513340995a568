package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

// Two `blobshare serve` processes on one --data share one lock table: what
// an SMB client holds through one, FileREST meets through the other
// exactly as locking.md's tables say, and the other way round. The second
// serves no Blob (--blob-addr off: one Blob service per directory today),
// nor Queue or Table, which these tests do not use.

// SMB access masks, share access and create arguments for smbctl (hex).
const (
	smbRead       = "80000000" // GENERIC_READ
	smbWrite      = "40000000" // GENERIC_WRITE
	smbReadWrite  = "c0000000"
	smbOpen       = "1"  // FILE_OPEN
	smbNonDir     = "40" // FILE_NON_DIRECTORY_FILE
	lockExclNow   = "12" // SMB2_LOCK_FLAG_EXCLUSIVE_LOCK | FAIL_IMMEDIATELY
	lockSharedNow = "11" // SMB2_LOCK_FLAG_SHARED_LOCK | FAIL_IMMEDIATELY
)

// twoServes starts serve A and serve B on one fresh --data, with share
// "data" created through A.
func twoServes(t *testing.T) (a, b *server) {
	t.Helper()
	data := t.TempDir()
	a = startServe(t, data)
	b = startServe(t, data, "--blob-addr", "off", "--queue-addr", "off", "--table-addr", "off")
	if _, err := serviceClient(t, a).NewShareClient("data").Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// shareOf is the share "data" through s's FileREST endpoint.
func shareOf(t *testing.T, s *server) *share.Client {
	return serviceClient(t, s).NewShareClient("data")
}

// putFile creates name through sh with content.
func putFile(t *testing.T, sh *share.Client, name string, content []byte) {
	t.Helper()
	ctx := context.Background()
	f := sh.NewRootDirectoryClient().NewFileClient(name)
	if _, err := f.Create(ctx, int64(len(content)), nil); err != nil {
		t.Fatalf("REST create %s: %v", name, err)
	}
	if len(content) > 0 {
		if _, err := f.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(content)), nil); err != nil {
			t.Fatalf("REST put range %s: %v", name, err)
		}
	}
}

// readFile is name's whole content through sh.
func readFile(t *testing.T, sh *share.Client, name string) []byte {
	t.Helper()
	resp, err := sh.NewRootDirectoryClient().NewFileClient(name).DownloadStream(context.Background(), nil)
	if err != nil {
		t.Fatalf("REST get %s: %v", name, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("REST get %s: %v", name, err)
	}
	return got
}

// outcome is "ok" for success, else "STATUS ErrorCode" of a REST error.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return err.Error()
}

const sharingViolation = "409 SharingViolation"

// restOps are the REST operations of locking.md §1.4 checked against share
// modes, with the access §1.3 treats them as having.
var restOps = []struct {
	name string
	do   func(ctx context.Context, f *file.Client, name string) error
}{
	{"Get File", func(ctx context.Context, f *file.Client, name string) error { // Read
		resp, err := f.DownloadStream(ctx, nil)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return err
	}},
	{"Put Range", func(ctx context.Context, f *file.Client, name string) error { // Write
		_, err := f.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("HELLO"))), nil)
		return err
	}},
	{"Set Properties", func(ctx context.Context, f *file.Client, name string) error { // Write
		_, err := f.SetHTTPHeaders(ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("text/plain")}})
		return err
	}},
	{"Delete File", func(ctx context.Context, f *file.Client, name string) error { // fails while any handle is open
		_, err := f.Delete(ctx, nil)
		return err
	}},
	{"Rename", func(ctx context.Context, f *file.Client, name string) error { // Delete on the source
		_, err := f.Rename(ctx, "renamed-"+name, nil)
		return err
	}},
}

// TestTwoServeShareModes: an SMB open through one serve against FileREST
// through the other, both ways: locking.md §1.4's table, one row per
// share mode of a handle with Read and Write access (X = 409
// SharingViolation), with Rename as §1.3 treats it (Delete on the
// source: refused unless the handle shares Delete).
func TestTwoServeShareModes(t *testing.T) {
	a, b := twoServes(t)
	ctx := context.Background()
	rows := []struct {
		shareMode string // the handle's share access: 1 Read, 2 Write, 4 Delete
		name      string
		want      string // Get File, Put Range, Set Properties, Delete File, Rename
	}{
		{"0", "None", "X X X X X"},
		{"1", "Read", "ok X X X X"},
		{"2", "Write", "X ok ok X X"},
		{"4", "Delete", "X X X X ok"},
		{"3", "Read+Write", "ok ok ok X X"},
		{"5", "Read+Delete", "ok X X X ok"},
		{"6", "Write+Delete", "X ok ok X ok"},
		{"7", "Read+Write+Delete", "ok ok ok X ok"},
	}
	for d, dir := range []struct {
		name          string
		smbOn, restOn *server
	}{{"SMB on A, REST on B", a, b}, {"SMB on B, REST on A", b, a}} {
		t.Run(dir.name, func(t *testing.T) {
			c := dialSmbctl(t, dir.smbOn.SMBAddr, "data")
			sh := shareOf(t, dir.restOn)
			for _, row := range rows {
				want := strings.Fields(row.want)
				for i, op := range restOps {
					name := fmt.Sprintf("sm-%d-%s-%d.txt", d, row.shareMode, i)
					putFile(t, shareOf(t, dir.smbOn), name, []byte("hello world"))
					c.expect("ok", "open h %s %s %s %s %s", name, smbReadWrite, row.shareMode, smbOpen, smbNonDir)
					got := outcome(op.do(ctx, sh.NewRootDirectoryClient().NewFileClient(name), name))
					c.expect("ok", "close h")
					exp := want[i]
					if exp == "X" {
						exp = sharingViolation
					}
					if got != exp {
						t.Errorf("handle sharing %s, %s through the other serve: %s, want %s (locking.md §1.4)", row.name, op.name, got, exp)
					}
				}
			}
		})
	}
}

// TestTwoServeSMBOpens: SMB opens through the two serves are judged by one
// sharing check (locking.md §1.2's examples), both ways.
func TestTwoServeSMBOpens(t *testing.T) {
	a, b := twoServes(t)
	rows := []struct {
		name                 string
		firstAccess, first   string
		secondAccess, second string
		want                 string
	}{
		{"Read sharing Write, then Write sharing Read: both open", smbRead, "2", smbWrite, "1", "ok"},
		{"Write sharing Read, then Write sharing Write: B wants Write, A does not share it", smbWrite, "1", smbWrite, "2", "err STATUS_SHARING_VIOLATION"},
		{"Write sharing Write, then Write sharing Read: B does not share Write, A writes", smbWrite, "2", smbWrite, "1", "err STATUS_SHARING_VIOLATION"},
	}
	for d, dir := range []struct {
		name          string
		first, second *server
	}{{"A then B", a, b}, {"B then A", b, a}} {
		t.Run(dir.name, func(t *testing.T) {
			c1, c2 := dialSmbctl(t, dir.first.SMBAddr, "data"), dialSmbctl(t, dir.second.SMBAddr, "data")
			for i, row := range rows {
				name := fmt.Sprintf("open-%d-%d.txt", d, i)
				putFile(t, shareOf(t, a), name, []byte("x"))
				c1.expect("ok", "open h %s %s %s %s %s", name, row.firstAccess, row.first, smbOpen, smbNonDir)
				if got := c2.do("open h %s %s %s %s %s", name, row.secondAccess, row.second, smbOpen, smbNonDir); got != row.want {
					t.Errorf("%s: second open through the other serve = %q, want %q", row.name, got, row.want)
				} else if got == "ok" {
					c2.expect("ok", "close h")
				}
				c1.expect("ok", "close h")
			}
		})
	}
}

// TestTwoServeByteRangeLocks: a byte-range lock taken over SMB through one
// serve refuses FileREST through the other over that range with 409
// FileLockConflict (locking.md §3.3: Put Range against any lock, a ranged
// Get File against an exclusive one), and leaves other ranges alone.
func TestTwoServeByteRangeLocks(t *testing.T) {
	a, b := twoServes(t)
	ctx := context.Background()
	const conflict = "409 FileLockConflict"
	rows := []struct {
		lock    string // lock flags
		name    string
		off     int64 // REST access of 5 bytes at off; the lock holds [100, 200)
		wantPut string
		wantGet string
	}{
		{lockExclNow, "exclusive, overlapping", 150, conflict, conflict},
		{lockExclNow, "exclusive, next to it", 200, "ok", "ok"},
		{lockSharedNow, "shared, overlapping", 98, conflict, "ok"},
		{lockSharedNow, "shared, before it", 0, "ok", "ok"},
	}
	for d, dir := range []struct {
		name          string
		smbOn, restOn *server
	}{{"lock on A, REST on B", a, b}, {"lock on B, REST on A", b, a}} {
		t.Run(dir.name, func(t *testing.T) {
			c := dialSmbctl(t, dir.smbOn.SMBAddr, "data")
			sh := shareOf(t, dir.restOn)
			for i, row := range rows {
				name := fmt.Sprintf("brl-%d-%d.bin", d, i)
				putFile(t, sh, name, bytes.Repeat([]byte{'.'}, 300))
				c.expect("ok", "open h %s %s 7 %s %s", name, smbReadWrite, smbOpen, smbNonDir)
				c.expect("ok", "lock h 100 100 %s", row.lock)
				f := sh.NewRootDirectoryClient().NewFileClient(name)
				_, err := f.UploadRange(ctx, row.off, streaming.NopCloser(bytes.NewReader([]byte("12345"))), nil)
				if got := outcome(err); got != row.wantPut {
					t.Errorf("%s: Put Range [%d, %d) through the other serve: %s, want %s", row.name, row.off, row.off+5, got, row.wantPut)
				}
				resp, err := f.DownloadStream(ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: row.off, Count: 5}})
				if err == nil {
					resp.Body.Close()
				}
				if got := outcome(err); got != row.wantGet {
					t.Errorf("%s: Get File [%d, %d) through the other serve: %s, want %s", row.name, row.off, row.off+5, got, row.wantGet)
				}
				c.expect("ok", "close h")
			}
		})
	}
}

// TestTwoServeLeaseVsSMB: a FileREST lease taken through one serve acts,
// for SMB opens through the other, as a handle with Write+Delete sharing
// Read (locking.md §4.4): a write open is refused, a read open is not.
func TestTwoServeLeaseVsSMB(t *testing.T) {
	a, b := twoServes(t)
	ctx := context.Background()
	for i, dir := range []struct {
		name          string
		restOn, smbOn *server
	}{{"lease on A, SMB on B", a, b}, {"lease on B, SMB on A", b, a}} {
		t.Run(dir.name, func(t *testing.T) {
			name := fmt.Sprintf("leased-%d.txt", i)
			sh := shareOf(t, dir.restOn)
			putFile(t, sh, name, []byte("leased"))
			lc, err := lease.NewFileClient(sh.NewRootDirectoryClient().NewFileClient(name), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lc.Acquire(ctx, nil); err != nil {
				t.Fatalf("acquire: %v", err)
			}
			c := dialSmbctl(t, dir.smbOn.SMBAddr, "data")
			if got := c.do("open w %s %s 7 %s %s", name, smbWrite, smbOpen, smbNonDir); got != "err STATUS_SHARING_VIOLATION" {
				t.Errorf("SMB write open of a file leased through the other serve: %q, want err STATUS_SHARING_VIOLATION", got)
			}
			c.expect("ok", "open r %s %s 7 %s %s", name, smbRead, smbOpen, smbNonDir)
			c.expect("ok", "close r")
			if _, err := lc.Release(ctx, nil); err != nil {
				t.Fatalf("release: %v", err)
			}
			c.expect("ok", "open w %s %s 7 %s %s", name, smbWrite, smbOpen, smbNonDir)
			c.expect("ok", "close w")
		})
	}
}
