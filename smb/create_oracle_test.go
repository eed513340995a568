package smb_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
)

// More rows compared with smbd through impacket: names with "..", durable
// reconnects of handles that do not exist, and re-authentication.

const (
	accDirList = 0x100081 // FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE
	accFileRW  = 0x12019f
	accFileRd  = 0x120089
	oDispCreat = 0x2
	optDirFile = 0x1
)

// TestDotDotAgainstSmbd: a ".." component takes back the one before it by
// name, as smbd does (and Windows' path canonicalisation), and one that
// climbs above the share is STATUS_OBJECT_PATH_SYNTAX_BAD.
func TestDotDotAgainstSmbd(t *testing.T) {
	sides := oracleSides(t)
	setup := []string{
		fmt.Sprintf("open d d %x 7 %x %x", accDirList, oDispCreat, optDirFile), "close d",
		fmt.Sprintf(`open f d\f.txt %x 7 %x %x`, accFileRW, oDispCreat, optNonDirFile),
		"write f 0 616263", "close f",
	}
	for _, c := range setup {
		if got := compare(t, sides, "setup", "%s", c); got != "ok" {
			t.Fatalf("setup %q: %s", c, got)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{`d\..`, "ok"},       // the share root
		{`d\..\d`, "ok"},     // d itself
		{`d\f.txt\..`, "ok"}, // d: by name, whatever f.txt is
		{`d\nope\..`, "ok"},  // d: by name, whether or not d\nope exists
		{`d\..\nope`, "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{`..`, "err STATUS_OBJECT_PATH_SYNTAX_BAD"},
		{`d\..\..`, "err STATUS_OBJECT_PATH_SYNTAX_BAD"},
		{`d\..\..\d`, "err STATUS_OBJECT_PATH_SYNTAX_BAD"},
		{`d\.`, "err STATUS_OBJECT_NAME_INVALID"},
	} {
		got := compare(t, sides, "open "+tc.name, "openx x %s %x 7 %x 0", tc.name, accDirList, oDispOpen)
		if got != tc.want {
			t.Errorf("open %s: smbd %q, the test expects %q", tc.name, got, tc.want)
		}
		if got == "ok" {
			compare(t, sides, "close", "close x")
		}
	}
	// A file through a "..": its content is the file's.
	if got := compare(t, sides, "open through ..", `openx r d\..\d\f.txt %x 7 %x %x`, accFileRd, oDispOpen, optNonDirFile); got != "ok" {
		t.Fatalf(`open d\..\d\f.txt: %s`, got)
	}
	if got := compare(t, sides, "read through ..", "read r 0 3"); got != "ok 616263" {
		t.Errorf("read: %s", got)
	}
	compare(t, sides, "close", "close r")
}

// TestDurableReconnectAgainstSmbd: blobshare grants no durable handle, so
// a reconnect (DHnC, DH2C) names nothing: STATUS_OBJECT_NAME_NOT_FOUND,
// never an open of the request's name, as smbd answers for a handle it
// does not know (MS-SMB2 3.3.5.9.7, 3.3.5.9.12); mixed or malformed
// durable contexts are STATUS_INVALID_PARAMETER.
func TestDurableReconnectAgainstSmbd(t *testing.T) {
	sides := oracleSides(t)
	if got := compare(t, sides, "setup", "open f f.txt %x 7 %x %x", accFileRW, oDispCreat, optNonDirFile); got != "ok" {
		t.Fatalf("setup: %s", got)
	}
	fileID := "0100000000000000ffffffffffffffff" // SMB2_FILEID of no open
	guid := strings.Repeat("11", 16)
	dh2q := "00000000" + "00000000" + strings.Repeat("00", 8) + guid // Timeout, Flags, Reserved, CreateGuid
	for _, tc := range []struct{ what, name, ctxs, want string }{
		{"DHnC naming an existing file", "f.txt", "DHnC:" + fileID, "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"DHnC naming nothing", "nothere", "DHnC:" + fileID, "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"DHnC with DHnQ", "f.txt", "DHnC:" + fileID + " DHnQ:" + strings.Repeat("00", 16), "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"DHnC with another context", "f.txt", "DHnC:" + fileID + " MxAc:", "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"DH2C", "f.txt", "DH2C:" + fileID + guid + "00000000", "err STATUS_OBJECT_NAME_NOT_FOUND"},
		{"DHnC too short", "f.txt", "DHnC:01000000", "err STATUS_INVALID_PARAMETER"},
		{"DH2C too short", "f.txt", "DH2C:" + fileID + guid, "err STATUS_INVALID_PARAMETER"},
		{"DHnC with DH2Q", "f.txt", "DHnC:" + fileID + " DH2Q:" + dh2q, "err STATUS_INVALID_PARAMETER"},
		{"DH2C with DHnQ", "f.txt", "DH2C:" + fileID + guid + "00000000 DHnQ:" + strings.Repeat("00", 16), "err STATUS_INVALID_PARAMETER"},
		{"DHnC with DH2C", "f.txt", "DHnC:" + fileID + " DH2C:" + fileID + guid + "00000000", "err STATUS_INVALID_PARAMETER"},
		{"DH2Q alone (ignored: not durable)", "f.txt", "DH2Q:" + dh2q, "ok"},
		{"DHnQ alone (ignored: not durable)", "f.txt", "DHnQ:" + strings.Repeat("00", 16), "ok"},
	} {
		got := compare(t, sides, tc.what, "openx x %s %x 7 %x %x %s", tc.name, accFileRd, oDispOpen, optNonDirFile, tc.ctxs)
		if got != tc.want {
			t.Errorf("%s: smbd %q, the test expects %q", tc.what, got, tc.want)
		}
		if got == "ok" {
			compare(t, sides, "close", "close x")
		}
	}
	compare(t, sides, "close", "close f")
}

// TestReauthenticationAgainstSmbd: a SESSION_SETUP with a wrong password
// on a logged-on session (a re-authentication, MS-SMB2 3.3.5.5.2) answers
// STATUS_LOGON_FAILURE, as smbd does. (A successful one keeps the
// session's keys, as MS-SMB2 3.3.5.5.2 says and smbd does; impacket signs
// with the new key after it, so against a server that requires signing,
// smbd with "server signing = mandatory" included, its next request
// fails: TestReauthentication checks that case with raw frames.)
func TestReauthenticationAgainstSmbd(t *testing.T) {
	d := startSmbd(t, t.TempDir())
	e := newEnv(t)
	e.mustShare("reauth")
	sides := [2]struct {
		name, user string
		c          *smbctl
	}{
		{"smbd", d.user, dialSmbctl(t, d.addr, d.user, d.password, d.share)},
		{"blobshare", filerest.DevAccount, e.smbctl(t, "reauth")},
	}
	for _, s := range sides {
		s.c.expect("ok", "open f f.txt %x 7 %x %x", accFileRW, oDispCreat, optNonDirFile)
		if got := s.c.do("reauth %s wrong-password", s.user); got != "err STATUS_LOGON_FAILURE" {
			t.Errorf("%s: re-authentication with a wrong password: %q, want err STATUS_LOGON_FAILURE", s.name, got)
		}
	}
}

// TestObjectIDOverSMB: FSCTL_CREATE_OR_GET_OBJECT_ID through impacket
// answers a FILE_OBJECTID_BUFFER (MS-FSCC 2.1.3): the same object id for
// every request on the file, from any handle or connection, with the
// birth object id equal to it and an empty domain id; another file or a
// directory gets its own; an output buffer under 64 bytes is
// STATUS_INVALID_PARAMETER (MS-FSA 2.1.5.10.1). Restarts: fs's
// TestObjectID.
func TestObjectIDOverSMB(t *testing.T) {
	e := newEnv(t)
	e.mustShare("oid")
	a, b := e.smbctl(t, "oid"), e.smbctl(t, "oid")
	const code = "900c0"
	a.expect("ok", "open f f.txt %x 7 %x %x", accFileRW, oDispCreat, optNonDirFile)
	a.expect("ok", "open g g.txt %x 7 %x %x", accFileRW, oDispCreat, optNonDirFile)
	a.expect("ok", "open d dir %x 7 %x %x", accDirList, oDispCreat, optDirFile)
	b.expect("ok", "open f f.txt %x 7 %x %x", accFileRd, oDispOpen, optNonDirFile)
	buf := func(c *smbctl, id string) []byte {
		t.Helper()
		got := c.do("fsctl %s %s 64", id, code)
		h, ok := strings.CutPrefix(got, "ok ")
		raw, err := hex.DecodeString(h)
		if !ok || err != nil || len(raw) != 64 {
			t.Fatalf("fsctl on %s: %q, want 64 bytes", id, got)
		}
		return raw
	}
	f := buf(a, "f")
	if bytes.Equal(f[:16], make([]byte, 16)) {
		t.Errorf("object id is zero: %x", f)
	}
	if !bytes.Equal(f[32:48], f[:16]) || !bytes.Equal(f[48:], make([]byte, 16)) {
		t.Errorf("birth object id or domain id: %x", f)
	}
	if again := buf(a, "f"); !bytes.Equal(again, f) {
		t.Errorf("second request %x, first %x", again, f)
	}
	if other := buf(b, "f"); !bytes.Equal(other, f) {
		t.Errorf("another connection's handle %x, first %x", other, f)
	}
	g, dir := buf(a, "g"), buf(a, "d")
	if bytes.Equal(g[:16], f[:16]) || bytes.Equal(dir[:16], f[:16]) || bytes.Equal(g[:16], dir[:16]) {
		t.Errorf("ids not distinct: f %x, g %x, dir %x", f[:16], g[:16], dir[:16])
	}
	if got := a.do("fsctl f %s 63", code); got != "err STATUS_INVALID_PARAMETER" {
		t.Errorf("output buffer of 63 bytes: %q, want err STATUS_INVALID_PARAMETER", got)
	}
	// The volume says it supports object ids (FileFsAttributeInformation,
	// class 5: FILE_SUPPORTS_OBJECT_IDS), as smbd's does.
	got := a.do("queryfs d 5")
	raw, err := hex.DecodeString(strings.TrimPrefix(got, "ok "))
	if err != nil || len(raw) < 4 || binary.LittleEndian.Uint32(raw)&0x00010000 == 0 {
		t.Errorf("FileFsAttributeInformation: %q, want FILE_SUPPORTS_OBJECT_IDS set", got)
	}
}
