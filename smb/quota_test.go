package smb

import (
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// queryInfo sends QUERY_INFO for one class of typ on id and returns the
// status and the output buffer.
func (c *rawClient) queryInfo(id fileID, typ, class byte) (ntstatus.Status, []byte) {
	c.t.Helper()
	b := make([]byte, 41)
	le.PutUint16(b, 41)
	b[2], b[3] = typ, class
	le.PutUint32(b[4:], 4096)
	id.put(b[24:])
	st, body := c.call(cmdQueryInfo, b)
	if st.IsError() || len(body) < 8 {
		return st, nil
	}
	return st, body[8:][:le.Uint32(body[4:])]
}

// closeFile sends CLOSE for id.
func (c *rawClient) closeFile(id fileID) ntstatus.Status {
	c.t.Helper()
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	id.put(b[8:])
	st, _ := c.call(cmdClose, b)
	return st
}

// TestQuotaFakeFile: Windows' fake quota file opens as a hidden system
// directory without times and serves only QUERY_INFO and CLOSE; every
// other stream name, including near misses of it, is still refused before
// fs, and nothing is created.
func TestQuotaFakeFile(t *testing.T) {
	fsys := newTestFS(t)
	c := loggedOn(t, newTestServer(t, fsys))
	const readAccess = uint32(locks.MaskFileGenericRead) // SEC_RIGHTS_FILE_READ

	t.Run("opens", func(t *testing.T) {
		for _, name := range []string{`$Extend\$Quota:$Q:$INDEX_ALLOCATION`, `$extend\$quota:$q:$index_allocation`} {
			st, id := c.create(name, readAccess, 7, 1, 0)
			if st != ntstatus.Success {
				t.Fatalf("create %q: %v", name, st)
			}
			st, basic := c.queryInfo(id, infoFile, fileBasicInformation)
			if st != ntstatus.Success {
				t.Fatalf("FileBasicInformation: %v", st)
			}
			const want = 0x2 | 0x4 | 0x10 | 0x20 // hidden, system, directory, archive
			if got := le.Uint32(basic[32:]); got != want {
				t.Errorf("attributes %#x, want %#x", got, want)
			}
			for i := 0; i < 4; i++ {
				if v := le.Uint64(basic[8*i:]); v != 0 {
					t.Errorf("time %d is %d, want 0", i, v)
				}
			}
			if st, _ := c.queryInfo(id, infoFileSystem, fsSizeInformation); st != ntstatus.Success {
				t.Errorf("FileFsSizeInformation: %v", st)
			}
			if st, _ := c.queryInfo(id, infoSecurity, 0); st != ntstatus.InvalidDeviceRequest {
				t.Errorf("security descriptor: %v, want STATUS_INVALID_DEVICE_REQUEST", st)
			}
			if st := c.read(id, 0, 10); st != ntstatus.InvalidDeviceRequest {
				t.Errorf("read: %v, want STATUS_INVALID_DEVICE_REQUEST", st)
			}
			qd := make([]byte, 33, 40)
			le.PutUint16(qd, 33)
			qd[2] = 1 // FileDirectoryInformation
			id.put(qd[8:])
			le.PutUint16(qd[24:], headerSize+32)
			le.PutUint16(qd[26:], 2)
			le.PutUint32(qd[28:], 4096)
			if st, _ := c.call(cmdQueryDirectory, append(qd[:32], '*', 0)); st != ntstatus.InvalidDeviceRequest {
				t.Errorf("query directory: %v, want STATUS_INVALID_DEVICE_REQUEST", st)
			}
			if st := c.closeFile(id); st != ntstatus.Success {
				t.Fatalf("close: %v", st)
			}
			if st := c.closeFile(id); st != ntstatus.FileClosed {
				t.Fatalf("second close: %v, want STATUS_FILE_CLOSED", st)
			}
		}
	})
	t.Run("is not created, replaced or deleted", func(t *testing.T) {
		for _, tt := range []struct {
			disp, opts uint32
			want       ntstatus.Status
		}{
			{2, 0, ntstatus.ObjectNameCollision}, // FILE_CREATE
			{0, 0, ntstatus.AccessDenied},        // FILE_SUPERSEDE
			{5, 0, ntstatus.AccessDenied},        // FILE_OVERWRITE_IF
			{1, optNonDirectoryFile, ntstatus.FileIsADirectory},
			{1, optDeleteOnClose, ntstatus.CannotDelete},
		} {
			if st, _ := c.create(quotaFakeFile, accAll, 7, tt.disp, tt.opts); st != tt.want {
				t.Errorf("disposition %d, options %#x: %v, want %v", tt.disp, tt.opts, st, tt.want)
			}
		}
	})
	t.Run("other stream names are refused", func(t *testing.T) {
		for _, name := range []string{
			`$Extend\$Quota:$Q`,
			`$Extend\$Quota:$Q:$DATA`,
			`$Extend\$Quota:$Q:$INDEX_ALLOCATION:x`,
			`$Extend\$Quota:$R:$INDEX_ALLOCATION`,
			`dir\$Extend\$Quota:$Q:$INDEX_ALLOCATION`,
			`$Extend\$Quota:$Q:$INDEX_ALLOCATION\`,
			`..\$Extend\$Quota:$Q:$INDEX_ALLOCATION`,
			`$Extend:$Q:$INDEX_ALLOCATION`,
			`x:$Q:$INDEX_ALLOCATION`,
		} {
			st, _ := c.create(name, readAccess, 7, 3, 0)
			if st != ntstatus.ObjectNameInvalid && st != ntstatus.ObjectPathSyntaxBad {
				t.Errorf("create %q: %v, want STATUS_OBJECT_NAME_INVALID", name, st)
			}
		}
		res, err := fsys.ListDirectory(t.Context(), "data", fs.ListRequest{})
		if err != nil || len(res.Entries) != 0 {
			t.Fatalf("share after the quota file's opens: %+v, %v", res.Entries, err)
		}
	})
}
