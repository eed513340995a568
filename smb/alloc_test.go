package smb

import (
	"bytes"
	"testing"

	"github.com/blobshare/blobshare/ntstatus"
)

// setInfoFile sends SET_INFO of one file class with info on id.
func (c *rawClient) setInfoFile(id fileID, class byte, info []byte) ntstatus.Status {
	c.t.Helper()
	b := make([]byte, 32, 32+len(info))
	le.PutUint16(b, 33)
	b[2], b[3] = infoFile, class
	le.PutUint32(b[4:], uint32(len(info)))
	le.PutUint16(b[8:], headerSize+32)
	id.put(b[16:])
	st, _ := c.call(cmdSetInfo, append(b, info...))
	return st
}

// dirEntry lists the entries of directory dir matching pattern as
// FileIdBothDirectoryInformation and returns the first (restarting the
// scan each time).
func (c *rawClient) dirEntry(dir fileID, pattern string) (ntstatus.Status, []byte) {
	c.t.Helper()
	n := utf16le(pattern)
	b := make([]byte, 32, 32+len(n))
	le.PutUint16(b, 33)
	b[2], b[3] = classFileIDBothDirectoryInformation, 1 // SMB2_RESTART_SCANS
	dir.put(b[8:])
	le.PutUint16(b[24:], headerSize+32)
	le.PutUint16(b[26:], uint16(len(n)))
	le.PutUint32(b[28:], 65536)
	st, body := c.call(cmdQueryDirectory, append(b, n...))
	if st != ntstatus.Success || len(body) < 8 {
		return st, nil
	}
	return st, body[8:][:le.Uint32(body[4:])]
}

// TestAllocationSizeSMB: the CREATE's AllocationSize context sets an
// allocation apart from the size, and every answer that carries an
// AllocationSize (CREATE, FileStandardInformation, FileAllInformation,
// FileNetworkOpenInformation, FileStreamInformation, directory entries)
// reports max(allocation, size in 4 KiB clusters): a write past it grows
// it, FileAllocationInformation below the size cuts the size, above it
// keeps the size, and FileEndOfFileInformation leaves the allocation.
func TestAllocationSizeSMB(t *testing.T) {
	c := loggedOn(t, newTestServer(t, newTestFS(t)))
	st, dir := c.create("d", accAll, 7, 2, 1) // FILE_CREATE, FILE_DIRECTORY_FILE
	if st != ntstatus.Success {
		t.Fatalf("mkdir d: %v", st)
	}
	u64 := func(n uint64) []byte { return le.AppendUint64(nil, n) }
	st, body := c.createWithBody(`d\a.txt`, accAll, 7, 2, 0, createContext("AlSi", u64(5000)))
	if st != ntstatus.Success {
		t.Fatalf("create with AlSi 5000: %v", st)
	}
	if alloc, size := le.Uint64(body[40:]), le.Uint64(body[48:]); alloc != 8192 || size != 0 {
		t.Fatalf("CREATE answers allocation %d size %d, want 8192 0", alloc, size)
	}
	id := getFileID(body[64:])
	data := bytes.Repeat([]byte{'x'}, 10000)

	// sizes reports (allocation, size) as each answer carries them.
	sizes := func() map[string][2]uint64 {
		t.Helper()
		out := map[string][2]uint64{}
		if st, b := c.queryInfo(id, infoFile, fileStandardInformation); st == ntstatus.Success {
			out["standard"] = [2]uint64{le.Uint64(b), le.Uint64(b[8:])}
		}
		if st, b := c.queryInfo(id, infoFile, fileAllInformation); st == ntstatus.Success {
			out["all"] = [2]uint64{le.Uint64(b[40:]), le.Uint64(b[48:])}
		}
		if st, b := c.queryInfo(id, infoFile, fileNetworkOpenInformation); st == ntstatus.Success {
			out["network open"] = [2]uint64{le.Uint64(b[32:]), le.Uint64(b[40:])}
		}
		if st, b := c.queryInfo(id, infoFile, fileStreamInformation); st == ntstatus.Success {
			out["stream"] = [2]uint64{le.Uint64(b[16:]), le.Uint64(b[8:])}
		}
		if st, b := c.dirEntry(dir, "a.txt"); st == ntstatus.Success {
			out["directory"] = [2]uint64{le.Uint64(b[48:]), le.Uint64(b[40:])}
		}
		return out
	}
	steps := []struct {
		name        string
		do          func() ntstatus.Status
		alloc, size uint64
	}{
		{"created", func() ntstatus.Status { return ntstatus.Success }, 8192, 0},
		{"one byte written", func() ntstatus.Status { return c.write(id, 0, data[:1]) }, 8192, 1},
		{"written past it", func() ntstatus.Status { return c.write(id, 1, data[1:]) }, 12288, 10000},
		{"allocation below the size", func() ntstatus.Status { return c.setInfoFile(id, fileAllocationInformation, u64(3000)) }, 4096, 3000},
		{"allocation above the size", func() ntstatus.Status { return c.setInfoFile(id, fileAllocationInformation, u64(20000)) }, 20480, 3000},
		{"end of file below it", func() ntstatus.Status { return c.setInfoFile(id, fileEndOfFileInformation, u64(100)) }, 20480, 100},
	}
	for _, s := range steps {
		if st := s.do(); st != ntstatus.Success {
			t.Fatalf("%s: %v", s.name, st)
		}
		got := sizes()
		for _, class := range []string{"standard", "all", "network open", "stream", "directory"} {
			if g, ok := got[class]; !ok || g != [2]uint64{s.alloc, s.size} {
				t.Errorf("%s: %s reports allocation, size %v (answered %t), want %d %d", s.name, class, g, ok, s.alloc, s.size)
			}
		}
	}
	if st := c.closeFile(id); st != ntstatus.Success {
		t.Fatalf("close: %v", st)
	}

	// An overwrite starts over with the allocation it asks (none here);
	// a short AllocationSize context is refused and creates nothing.
	st, body = c.createWithBody(`d\a.txt`, accAll, 7, 5, 0, nil) // FILE_OVERWRITE_IF
	if st != ntstatus.Success {
		t.Fatalf("overwrite: %v", st)
	}
	if alloc, size := le.Uint64(body[40:]), le.Uint64(body[48:]); alloc != 0 || size != 0 {
		t.Fatalf("overwrite answers allocation %d size %d, want 0 0", alloc, size)
	}
	c.closeFile(getFileID(body[64:]))
	if st, _ := c.createWith(`d\b.txt`, accAll, 7, 2, 0, createContext("AlSi", []byte{1, 2, 3, 4})); st != ntstatus.InvalidParameter {
		t.Fatalf("short AlSi: %v, want STATUS_INVALID_PARAMETER", st)
	}
	if st, _ := c.dirEntry(dir, "b.txt"); st != ntstatus.NoSuchFile {
		t.Fatalf("after the refused create, b.txt lists as %v, want STATUS_NO_SUCH_FILE", st)
	}
}
