package smb

import (
	"bytes"
	"testing"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/ntstatus"
)

// TestHostileFraming: framing the server cannot serve closes the
// connection, and the server goes on serving others.
func TestHostileFraming(t *testing.T) {
	addr := newTestServer(t, newTestFS(t))
	tests := []struct {
		name string
		send []byte
	}{
		{"NetBIOS length of 16 MiB", []byte{0, 0xff, 0xff, 0xff}},
		{"NetBIOS keepalive type", []byte{0x85, 0, 0, 0}},
		{"not SMB", append([]byte{0, 0, 0, 8}, "GET / HT"...)},
		{"truncated SMB2 header", append([]byte{0, 0, 0, 10}, 0xfe, 'S', 'M', 'B', 64, 0, 0, 0, 0, 0)},
		{"SMB1 that is not NEGOTIATE", append([]byte{0, 0, 0, 36}, append([]byte{0xff, 'S', 'M', 'B', 0x73}, make([]byte, 31)...)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			if _, err := c.nc.Write(tt.send); err != nil {
				t.Fatal(err)
			}
			if !c.closed() {
				t.Fatal("connection not closed")
			}
		})
	}
	t.Run("frame cut short, then the client goes", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.nc.Write([]byte{0, 0, 1, 0, 0xfe, 'S', 'M'})
		c.nc.Close()
	})
	t.Run("a command before NEGOTIATE", func(t *testing.T) {
		c := dialRaw(t, addr)
		if err := c.frame(c.message(cmdCreate, make([]byte, 57))); err != nil {
			t.Fatal(err)
		}
		if !c.closed() {
			t.Fatal("connection not closed")
		}
	})
	t.Run("a message id outside the granted credits", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.negotiate()
		c.msgID = 100000
		if err := c.frame(c.message(cmdEcho, []byte{4, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		if !c.closed() {
			t.Fatal("connection not closed")
		}
	})
	t.Run("a message id used twice", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.negotiate()
		c.msgID--
		if err := c.frame(c.message(cmdEcho, []byte{4, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		if !c.closed() {
			t.Fatal("connection not closed")
		}
	})
	// After all that, a well-behaved client is served.
	loggedOn(t, addr)
}

// TestHostileRequests: requests out of order, with ids of other sessions
// or names that try to leave the share get their proper status.
func TestHostileRequests(t *testing.T) {
	fsys := newTestFS(t)
	addr := newTestServer(t, fsys)

	t.Run("commands before SESSION_SETUP", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.negotiate()
		if st := c.treeConnect("data"); st != ntstatus.UserSessionDeleted {
			t.Fatalf("tree connect: %v, want STATUS_USER_SESSION_DELETED", st)
		}
		c.session = 12345
		if st, _ := c.create("x", 0x80000000, 7, 1, 0); st != ntstatus.UserSessionDeleted {
			t.Fatalf("create: %v, want STATUS_USER_SESSION_DELETED", st)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.negotiate()
		if st := c.login(testAccount, "wrong"); st != ntstatus.LogonFailure {
			t.Fatalf("login: %v, want STATUS_LOGON_FAILURE", st)
		}
	})
	t.Run("unsigned request when signing is required", func(t *testing.T) {
		c := loggedOn(t, addr)
		c.signer = nil
		if st, _ := c.create("x", 0x80000000, 7, 3, 0); st != ntstatus.AccessDenied {
			t.Fatalf("unsigned create: %v, want STATUS_ACCESS_DENIED", st)
		}
	})
	t.Run("bad signature", func(t *testing.T) {
		c := loggedOn(t, addr)
		c.signer = hmacSigner{key: bytes.Repeat([]byte{1}, 16)}
		if err := c.frame(c.message(cmdEcho, []byte{4, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		c.readFrame()
		if err := c.frame(c.message(cmdTreeDisconnect, []byte{4, 0, 0, 0})); err != nil {
			t.Fatal(err)
		}
		resp, err := c.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := decodeHeader(resp); ntstatus.Status(h.Status) != ntstatus.AccessDenied {
			t.Fatalf("badly signed request: %v, want STATUS_ACCESS_DENIED", ntstatus.Status(h.Status))
		}
	})
	t.Run("tree and file ids of another session", func(t *testing.T) {
		a := loggedOn(t, addr)
		b := loggedOn(t, addr)
		st, fid := b.create("theirs.txt", 0xc0000000, 7, 3, 0x40)
		if st != ntstatus.Success {
			t.Fatalf("create: %v", st)
		}
		if st := a.read(fid, 0, 1); st != ntstatus.FileClosed {
			t.Fatalf("read with another session's file id: %v, want STATUS_FILE_CLOSED", st)
		}
		// b's session id on a's connection is unknown there.
		a.session = b.session
		a.signer = b.signer
		if st, _ := a.create("x", 0x80000000, 7, 3, 0); st != ntstatus.UserSessionDeleted {
			t.Fatalf("another connection's session: %v, want STATUS_USER_SESSION_DELETED", st)
		}
		b.tree += 100
		if st, _ := b.create("x", 0x80000000, 7, 3, 0); st != ntstatus.NetworkNameDeleted {
			t.Fatalf("unknown tree id: %v, want STATUS_NETWORK_NAME_DELETED", st)
		}
	})
	t.Run("names that leave the share", func(t *testing.T) {
		fsys := newTestFS(t)
		c := loggedOn(t, newTestServer(t, fsys))
		for _, tt := range []struct {
			name string
			want ntstatus.Status
		}{
			{`..\data2\x`, ntstatus.ObjectPathSyntaxBad},
			{`dir\..\..\x`, ntstatus.ObjectPathSyntaxBad},
			{`.\x`, ntstatus.ObjectNameInvalid},
			{`\x`, ntstatus.InvalidParameter},
			{`\\server\data\x`, ntstatus.InvalidParameter},
			{`x:stream`, ntstatus.ObjectNameInvalid},
			{`x::$DATA`, ntstatus.ObjectNameInvalid},
			{`a\\b`, ntstatus.ObjectNameInvalid},
			{`*`, ntstatus.ObjectNameInvalid},
			{"/etc/passwd", ntstatus.InvalidParameter},
			{"C:\\x", ntstatus.ObjectNameInvalid},
		} {
			if st, _ := c.create(tt.name, 0xc0000000, 7, 3, 0x40); st != tt.want {
				t.Errorf("create %q: %v, want %v", tt.name, st, tt.want)
			}
		}
		// Nothing was created anywhere.
		res, err := fsys.ListDirectory(t.Context(), "data", fs.ListRequest{})
		if err != nil || len(res.Entries) != 0 {
			t.Fatalf("share after hostile names: %+v, %v", res.Entries, err)
		}
	})
	t.Run("malformed bodies", func(t *testing.T) {
		c := loggedOn(t, addr)
		for _, cmd := range []uint16{cmdCreate, cmdClose, cmdFlush, cmdRead, cmdWrite, cmdLock, cmdIoctl,
			cmdQueryDirectory, cmdQueryInfo, cmdSetInfo, cmdTreeConnect, cmdEcho, 0x99} {
			for _, body := range [][]byte{nil, {1}, {0xff, 0xff, 0xff, 0xff}} {
				st, _ := c.call(cmd, body)
				if st == ntstatus.Success {
					t.Errorf("command %#x with body %x: success", cmd, body)
				}
			}
		}
		// The connection still serves.
		if st, _ := c.call(cmdEcho, []byte{4, 0, 0, 0}); st != ntstatus.Success {
			t.Fatalf("echo after malformed requests: %v", st)
		}
	})
}
