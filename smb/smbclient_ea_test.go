package smb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmbclientEAsAndAltName drives smbclient's setea, geteas and altname:
// an EA set over SMB is read back (and kept by fs), removing it leaves
// none, and a long name has a generated 8.3 name.
func TestSmbclientEAsAndAltName(t *testing.T) {
	e := newEnv(t)
	e.mustShare("eas")
	src := filepath.Join(t.TempDir(), "src.txt")
	if err := os.WriteFile(src, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	const name = "a long file name.txt"
	out, err := e.smbclient(t, "eas", nil, `put "`+src+`" "`+name+`"`, `setea "`+name+`" user.colour blue`, `geteas "`+name+`"`, `altname "`+name+`"`)
	if err != nil {
		t.Fatalf("smbclient: %v\n%s", err, out)
	}
	if !strings.Contains(out, "user.colour (0) =") || !strings.Contains(out, "62 6C 75 65") { // "blue"
		t.Errorf("geteas does not show the EA set:\n%s", out)
	}
	if !strings.Contains(out, "AL") || !strings.Contains(out, "~1.TXT") {
		t.Errorf("altname shows no generated 8.3 name:\n%s", out)
	}
	share, err := e.fs.GetShare(t.Context(), "eas")
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.fs.Lookup(t.Context(), share.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.EAs) != 1 || a.EAs[0].Name != "user.colour" || string(a.EAs[0].Value) != "blue" {
		t.Fatalf("fs keeps %+v, want user.colour=blue", a.EAs)
	}
	out, _ = e.smbclient(t, "eas", nil, `setea "`+name+`" user.colour ""`, `geteas "`+name+`"`)
	if !strings.Contains(out, "NT_STATUS_NO_EAS_ON_FILE") {
		t.Errorf("geteas after removing the only EA:\n%s", out)
	}
}
