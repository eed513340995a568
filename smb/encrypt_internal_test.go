package smb

import (
	"testing"

	"github.com/blobshare/blobshare/ntstatus"
)

// TestEncryptDataRefusesClear: where encryption is required, a session of
// a client that can encrypt (3.0 with the encryption capability) is set up
// with SMB2_SESSION_FLAG_ENCRYPT_DATA, but its requests sent in the clear,
// signed as they are, get STATUS_ACCESS_DENIED; a 2.1 client (no cipher)
// is refused at session setup.
func TestEncryptDataRefusesClear(t *testing.T) {
	addr := newTestServer(t, newTestFS(t), func(c *Config) { c.EncryptData = true })

	c := dialRaw(t, addr)
	c.negotiateWith(dialect300, capEncryption)
	if st := c.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatalf("3.0 login: %v", st)
	}
	if st := c.treeConnect("data"); st != ntstatus.AccessDenied {
		t.Fatalf("tree connect in the clear: %v, want STATUS_ACCESS_DENIED", st)
	}

	old := dialRaw(t, addr)
	old.negotiate()
	if st := old.login(testAccount, testKey); st != ntstatus.AccessDenied {
		t.Fatalf("2.1 login where encryption is required: %v, want STATUS_ACCESS_DENIED", st)
	}
}
