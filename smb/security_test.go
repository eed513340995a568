package smb

import (
	"context"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/secdesc"
)

// querySecurity sends QUERY_INFO for the security descriptor of id with
// SECURITY_INFORMATION addInfo and returns the descriptor.
func (c *rawClient) querySecurity(id fileID, addInfo uint32) (ntstatus.Status, []byte) {
	c.t.Helper()
	b := make([]byte, 41)
	le.PutUint16(b, 41)
	b[2] = infoSecurity
	le.PutUint32(b[4:], 64<<10) // OutputBufferLength
	le.PutUint32(b[16:], addInfo)
	id.put(b[24:])
	st, body := c.call(cmdQueryInfo, b)
	if st != ntstatus.Success {
		return st, nil
	}
	n := le.Uint32(body[4:])
	off := int(le.Uint16(body[2:])) - headerSize
	return st, body[off : off+int(n)]
}

// TestSecurityDescriptorIsTheStoredPermission: an SMB client reading a
// file's security descriptor gets the permission FileREST gave it
// (x-ms-file-permission / Create Permission), the parts it asks for; a
// file with none reports the default permission.
func TestSecurityDescriptorIsTheStoredPermission(t *testing.T) {
	ctx := context.Background()
	fsys := newTestFS(t)
	sddl, err := secdesc.Canonical("O:S-1-5-21-1-2-3-500G:BAD:(A;;FA;;;BA)(A;;0x1200a9;;;BU)", "sddl")
	if err != nil {
		t.Fatal(err)
	}
	key, err := fsys.CreatePermission(ctx, "data", sddl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateFile(ctx, fs.CreateFileRequest{Path: "data/kept", Props: fs.SMBProperties{PermissionKey: &key}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateFile(ctx, fs.CreateFileRequest{Path: "data/plain"}); err != nil {
		t.Fatal(err)
	}
	c := loggedOn(t, newTestServer(t, fsys))
	const readControl = 0x00020000
	const all = secdesc.OwnerSecurityInformation | secdesc.GroupSecurityInformation | secdesc.DACLSecurityInformation
	for _, tt := range []struct {
		file    string
		addInfo uint32
		want    string
	}{
		{"kept", all, sddl},
		{"kept", secdesc.DACLSecurityInformation, "D:(A;;FA;;;BA)(A;;0x1200a9;;;BU)"},
		{"kept", secdesc.OwnerSecurityInformation, "O:S-1-5-21-1-2-3-500"},
		{"plain", all, fs.DefaultPermission},
	} {
		st, id := c.create(tt.file, readControl, 7, 1, 0)
		if st != ntstatus.Success {
			t.Fatalf("open %s: %v", tt.file, st)
		}
		st, raw := c.querySecurity(id, tt.addInfo)
		if st != ntstatus.Success {
			t.Fatalf("%s %#x: query security: %v", tt.file, tt.addInfo, st)
		}
		sd, err := secdesc.ParseBinary(raw)
		if err != nil {
			t.Fatalf("%s %#x: the answer does not parse: %v", tt.file, tt.addInfo, err)
		}
		want, err := secdesc.Canonical(tt.want, "sddl")
		if err != nil {
			t.Fatal(err)
		}
		if got := sd.SDDL(); got != want {
			t.Errorf("%s %#x: descriptor %q, want %q", tt.file, tt.addInfo, got, want)
		}
	}
	// Without READ_CONTROL the descriptor is not the opener's to read.
	st, id := c.create("kept", 0x80 /* FILE_READ_ATTRIBUTES */, 7, 1, 0)
	if st != ntstatus.Success {
		t.Fatal(st)
	}
	if st, _ := c.querySecurity(id, all); st != ntstatus.AccessDenied {
		t.Errorf("query without READ_CONTROL: %v, want STATUS_ACCESS_DENIED", st)
	}
}
