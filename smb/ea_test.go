package smb

import (
	"bytes"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// eaList encodes eas as a FILE_FULL_EA_INFORMATION list.
func eaList(eas ...fs.EA) []byte {
	var b []byte
	prev := -1
	for _, ea := range eas {
		b, prev = appendEA(b, prev, ea)
	}
	return b
}

// createContext encodes one create context.
func createContext(name string, data []byte) []byte {
	b := make([]byte, 16, 24+len(data))
	le.PutUint16(b[4:], 16)
	le.PutUint16(b[6:], uint16(len(name)))
	le.PutUint16(b[10:], 24)
	le.PutUint32(b[12:], uint32(len(data)))
	b = append(b, name...)
	for len(b) < 24 {
		b = append(b, 0)
	}
	return append(b, data...)
}

// createWith is create with create contexts (none when nil).
func (c *rawClient) createWith(name string, access, share, disp, opts uint32, contexts []byte) (ntstatus.Status, fileID) {
	c.t.Helper()
	st, body := c.createWithBody(name, access, share, disp, opts, contexts)
	if st != ntstatus.Success {
		return st, fileID{}
	}
	return st, getFileID(body[64:])
}

// createWithBody is createWith returning the response body.
func (c *rawClient) createWithBody(name string, access, share, disp, opts uint32, contexts []byte) (ntstatus.Status, []byte) {
	c.t.Helper()
	n := utf16le(name)
	b := make([]byte, 56, 56+len(n)+8+len(contexts))
	le.PutUint16(b, 57)
	le.PutUint32(b[4:], 2)
	le.PutUint32(b[24:], access)
	le.PutUint32(b[32:], share)
	le.PutUint32(b[36:], disp)
	le.PutUint32(b[40:], opts)
	le.PutUint16(b[44:], headerSize+56)
	le.PutUint16(b[46:], uint16(len(n)))
	b = append(b, n...)
	if len(contexts) > 0 {
		b = appendPad(b)
		le.PutUint32(b[48:], uint32(headerSize+len(b)))
		le.PutUint32(b[52:], uint32(len(contexts)))
		b = append(b, contexts...)
	}
	if len(b) == 56 {
		b = append(b, 0) // a variable part of at least one byte
	}
	return c.call(cmdCreate, b)
}

// queryEAsBody is a QUERY_INFO FileFullEaInformation request body with
// flags, index and a FILE_GET_EA_INFORMATION list (nil for none).
func queryEAsBody(id fileID, outMax, flags, index uint32, get []byte) []byte {
	b := make([]byte, 40, 41+len(get))
	le.PutUint16(b, 41)
	b[2], b[3] = infoFile, fileFullEaInformation
	le.PutUint32(b[4:], outMax)
	if len(get) > 0 {
		le.PutUint16(b[8:], headerSize+40)
		le.PutUint32(b[12:], uint32(len(get)))
	}
	le.PutUint32(b[16:], index)
	le.PutUint32(b[20:], flags)
	id.put(b[24:])
	if len(get) == 0 {
		b = append(b, 0)
	}
	return append(b, get...)
}

// queryEAs sends QUERY_INFO FileFullEaInformation (queryEAsBody).
func (c *rawClient) queryEAs(id fileID, outMax, flags, index uint32, get []byte) (ntstatus.Status, []byte) {
	c.t.Helper()
	st, body := c.call(cmdQueryInfo, queryEAsBody(id, outMax, flags, index, get))
	if st.IsError() || len(body) < 8 {
		return st, nil
	}
	return st, body[8:][:le.Uint32(body[4:])]
}

// setEAsBody is a SET_INFO FileFullEaInformation request body.
func setEAsBody(id fileID, list []byte) []byte {
	b := make([]byte, 32, 32+len(list))
	le.PutUint16(b, 33)
	b[2], b[3] = infoFile, fileFullEaInformation
	le.PutUint32(b[4:], uint32(len(list)))
	le.PutUint16(b[8:], headerSize+32)
	id.put(b[16:])
	return append(b, list...)
}

// setEAs sends SET_INFO FileFullEaInformation.
func (c *rawClient) setEAs(id fileID, list []byte) ntstatus.Status {
	c.t.Helper()
	st, _ := c.call(cmdSetInfo, setEAsBody(id, list))
	return st
}

// Access masks of the raw client's creates, as package locks names them.
const (
	accSynchronize = uint32(locks.MaskSynchronize)
	accReadEA      = uint32(locks.MaskReadEA)
	accWriteEA     = uint32(locks.MaskWriteEA)
	accAll         = uint32(locks.MaskFileAllAccess)
)

// TestExtendedAttributesSMB: EAs set at create (ExtA) and by SET_INFO come
// back from FileFullEaInformation, which needs FILE_READ_EA (SET_INFO
// FILE_WRITE_EA); a file without EAs answers STATUS_NO_EAS_ON_FILE;
// enumeration, single entries and queries by name follow MS-FSA; broken
// lists and bad names are refused and change nothing.
func TestExtendedAttributesSMB(t *testing.T) {
	fsys := newTestFS(t)
	c := loggedOn(t, newTestServer(t, fsys))
	one := fs.EA{Name: "EAONE", Value: []byte("VALUE1")}
	two := fs.EA{Name: "SECONDEA", Value: []byte("ValueTwo")}

	st, id := c.createWith("eas.txt", accAll, 7, 2, 0, createContext("ExtA", eaList(one, two)))
	if st != ntstatus.Success {
		t.Fatalf("create with ExtA: %v", st)
	}
	if st, got := c.queryEAs(id, 4096, slRestartScan, 0, nil); st != ntstatus.Success || !bytes.Equal(got, eaList(one, two)) {
		t.Fatalf("FileFullEaInformation: %v %x, want %x", st, got, eaList(one, two))
	}
	if st, info := c.queryInfo(id, infoFile, fileEaInformation); st != ntstatus.Success || le.Uint32(info) != uint32(align4(len(eaList(one, two)))) {
		t.Errorf("FileEaInformation: %v %x, want EaSize %d", st, info, align4(len(eaList(one, two))))
	}

	t.Run("enumeration", func(t *testing.T) {
		steps := []struct {
			flags, index uint32
			want         ntstatus.Status
			list         []byte
		}{
			{slRestartScan | slReturnSingleEntry, 0, ntstatus.Success, eaList(one)},
			{slReturnSingleEntry, 0, ntstatus.Success, eaList(two)},
			{0, 0, ntstatus.NoMoreEAs, nil},
			{slIndexSpecified, 2, ntstatus.Success, eaList(two)},
			{slIndexSpecified, 3, ntstatus.NonexistentEAEntry, nil},
		}
		for i, s := range steps {
			st, got := c.queryEAs(id, 4096, s.flags, s.index, nil)
			if st != s.want || !bytes.Equal(got, s.list) {
				t.Errorf("step %d: %v %x, want %v %x", i, st, got, s.want, s.list)
			}
		}
		// A buffer that holds the first entry only: it and BUFFER_OVERFLOW;
		// one too small for any: BUFFER_TOO_SMALL.
		first := len(eaList(one))
		if st, got := c.queryEAs(id, uint32(first+3), slRestartScan, 0, nil); st != ntstatus.BufferOverflow || !bytes.Equal(got, eaList(one)) {
			t.Errorf("small buffer: %v %x", st, got)
		}
		if st, _ := c.queryEAs(id, 8, slRestartScan, 0, nil); st != ntstatus.BufferTooSmall {
			t.Errorf("tiny buffer: %v, want STATUS_BUFFER_TOO_SMALL", st)
		}
		// By name, without case; a name not set comes back empty.
		get := append([]byte{16, 0, 0, 0, 8}, "secondea\x00"...)
		get = append(get, 0, 0) // to 16
		get = append(get, 0, 0, 0, 0, 4)
		get = append(get, "none\x00"...)
		if st, got := c.queryEAs(id, 4096, 0, 0, get); st != ntstatus.Success || !bytes.Equal(got, eaList(two, fs.EA{Name: "none"})) {
			t.Errorf("query by names: %v %x", st, got)
		}
	})

	t.Run("access", func(t *testing.T) {
		st, h := c.create("eas.txt", accSynchronize, 7, 1, 0)
		if st != ntstatus.Success {
			t.Fatal(st)
		}
		if st, _ := c.queryEAs(h, 4096, slRestartScan, 0, nil); st != ntstatus.AccessDenied {
			t.Errorf("query without FILE_READ_EA: %v, want STATUS_ACCESS_DENIED", st)
		}
		if st := c.setEAs(h, eaList(fs.EA{Name: "X", Value: []byte("1")})); st != ntstatus.AccessDenied {
			t.Errorf("set without FILE_WRITE_EA: %v, want STATUS_ACCESS_DENIED", st)
		}
		c.closeFile(h)
		st, h = c.create("eas.txt", accReadEA, 7, 1, 0)
		if st != ntstatus.Success {
			t.Fatal(st)
		}
		if st, _ := c.queryEAs(h, 4096, slRestartScan, 0, nil); st != ntstatus.Success {
			t.Errorf("query with FILE_READ_EA only: %v", st)
		}
		c.closeFile(h)
	})

	t.Run("set and remove", func(t *testing.T) {
		if st := c.setEAs(id, eaList(fs.EA{Name: "eaone"}, fs.EA{Name: "Third", Flags: eaNeedEA, Value: []byte{0, 1, 2}})); st != ntstatus.Success {
			t.Fatalf("set: %v", st)
		}
		want := eaList(two, fs.EA{Name: "Third", Flags: eaNeedEA, Value: []byte{0, 1, 2}})
		if st, got := c.queryEAs(id, 4096, slRestartScan, 0, nil); st != ntstatus.Success || !bytes.Equal(got, want) {
			t.Fatalf("after set: %v %x, want %x", st, got, want)
		}
		if st := c.setEAs(id, eaList(fs.EA{Name: "secondea"}, fs.EA{Name: "third"})); st != ntstatus.Success {
			t.Fatalf("remove all: %v", st)
		}
		if st, _ := c.queryEAs(id, 4096, slRestartScan, 0, nil); st != ntstatus.NoEAsOnFile {
			t.Fatalf("after removing all: %v, want STATUS_NO_EAS_ON_FILE", st)
		}
		if st, info := c.queryInfo(id, infoFile, fileEaInformation); st != ntstatus.Success || le.Uint32(info) != 0 {
			t.Errorf("FileEaInformation without EAs: %v %x", st, info)
		}
	})

	t.Run("hostile lists", func(t *testing.T) {
		good := eaList(one)
		chainOut := bytes.Clone(good)
		le.PutUint32(chainOut, 4096) // next entry far outside
		unterminated := bytes.Clone(good)
		unterminated[8+len(one.Name)] = 'X'
		longName := bytes.Clone(good)
		longName[5] = 200 // name runs past the entry
		badFlag := bytes.Clone(good)
		badFlag[4] = 0x01
		for _, tt := range []struct {
			name string
			list []byte
			want ntstatus.Status
		}{
			{"next outside", chainOut, ntstatus.EAListInconsistent},
			{"name not terminated", unterminated, ntstatus.EAListInconsistent},
			{"name past the end", longName, ntstatus.EAListInconsistent},
			{"truncated", good[:7], ntstatus.EAListInconsistent},
			{"bad flag", badFlag, ntstatus.InvalidEAName},
			{"bad name", eaList(fs.EA{Name: "a:b", Value: []byte("x")}), ntstatus.InvalidEAName},
			{"empty name", eaList(fs.EA{Name: "", Value: []byte("x")}), ntstatus.InvalidEAName},
		} {
			if st, _ := c.createWith("hostile.txt", accAll, 7, 2, 0, createContext("ExtA", tt.list)); st != tt.want {
				t.Errorf("create, %s: %v, want %v", tt.name, st, tt.want)
			}
			if len(tt.list) >= 8 {
				if st := c.setEAs(id, tt.list); st != tt.want {
					t.Errorf("set, %s: %v, want %v", tt.name, st, tt.want)
				}
			}
		}
		if _, err := fsys.Lookup(t.Context(), mustShareID(t, fsys), "hostile.txt"); err == nil {
			t.Error("a create with a refused EA list created the file")
		}
		big := eaList(fs.EA{Name: "BIG", Value: bytes.Repeat([]byte{7}, fs.MaxEASize)})
		if st := c.setEAs(id, big[:len(big)-16]); st != ntstatus.EAListInconsistent {
			t.Errorf("cut list: %v", st)
		}
		// A context whose data lies outside it.
		bad := createContext("ExtA", good)
		le.PutUint32(bad[12:], 1<<20)
		if st, _ := c.createWith("hostile.txt", accAll, 7, 2, 0, bad); st != ntstatus.InvalidParameter {
			t.Errorf("context data outside: %v, want STATUS_INVALID_PARAMETER", st)
		}
	})
}

func mustShareID(t *testing.T, fsys *fs.FileSystem) fs.FileID {
	a, err := fsys.GetShare(t.Context(), "data")
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// TestAlternateName: FileAlternateNameInformation answers a generated 8.3
// name for a long name, the name itself for an 8.3 one, and
// STATUS_OBJECT_NAME_NOT_FOUND for the share root; it needs no access
// beyond the open.
func TestAlternateName(t *testing.T) {
	c := loggedOn(t, newTestServer(t, newTestFS(t)))
	for _, tt := range []struct{ name, want string }{
		{"short.txt", "short.txt"},
		{"a rather long name.text", ""},
	} {
		st, id := c.create(tt.name, accAll, 7, 2, 0)
		if st != ntstatus.Success {
			t.Fatal(st)
		}
		c.closeFile(id)
		st, id = c.create(tt.name, accSynchronize, 7, 1, 0)
		if st != ntstatus.Success {
			t.Fatal(st)
		}
		st, info := c.queryInfo(id, infoFile, fileAlternateNameInformation)
		if st != ntstatus.Success {
			t.Fatalf("%s: %v", tt.name, st)
		}
		got, _ := fromUTF16(info[4:][:le.Uint32(info)])
		want := tt.want
		if want == "" {
			want, _ = shortName(tt.name)
		}
		if got != want {
			t.Errorf("alternate name of %q: %q, want %q", tt.name, got, want)
		}
		c.closeFile(id)
	}
	st, root := c.create("", accSynchronize, 7, 1, 0)
	if st != ntstatus.Success {
		t.Fatal(st)
	}
	if st, _ := c.queryInfo(root, infoFile, fileAlternateNameInformation); st != ntstatus.ObjectNameNotFound {
		t.Errorf("alternate name of the share root: %v, want STATUS_OBJECT_NAME_NOT_FOUND", st)
	}
}
