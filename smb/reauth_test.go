package smb

import (
	"fmt"
	"testing"
	"time"

	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// reauth runs a raw NTLMSSP SESSION_SETUP on the client's logged-on
// session (a re-authentication) and keeps the client's signing key, as
// MS-SMB2 3.3.5.5.2 says the session does.
func (c *rawClient) reauth(user, password string) ntstatus.Status {
	c.t.Helper()
	cl := ntlm.Client{User: user, Password: password}
	st, body := c.call(cmdSessionSetup, sessionSetupRequest(cl.Negotiate()))
	if st != ntstatus.MoreProcessingRequired {
		return st
	}
	if c.lastSession != c.session {
		c.t.Fatalf("re-authentication answered for session %#x, not %#x", c.lastSession, c.session)
	}
	challenge := body[8:][:le.Uint16(body[6:])]
	auth, _, err := cl.Authenticate(challenge, time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	st, _ = c.call(cmdSessionSetup, sessionSetupRequest(auth))
	return st
}

// TestReauthentication: re-authenticating a session with the right
// password keeps it, its keys and its opens; with a wrong one the answer
// is STATUS_LOGON_FAILURE (not the STATUS_ACCESS_DENIED or
// STATUS_REQUEST_NOT_ACCEPTED of before), and the session ends as MS-SMB2
// 3.3.5.5.3 says: its requests get STATUS_USER_SESSION_DELETED and its
// opens close, so another client may then open the file exclusively. A
// re-authentication signed with another key is STATUS_ACCESS_DENIED and
// leaves the session alone.
// (The status of a wrong password is compared with smbd in
// TestReauthenticationAgainstSmbd.)
func TestReauthentication(t *testing.T) {
	for _, dialect := range []uint16{dialect210, dialect300} {
		t.Run(fmt.Sprintf("dialect=%#x", dialect), func(t *testing.T) {
			addr := newTestServer(t, newTestFS(t))
			c := dialRaw(t, addr)
			c.negotiateWith(dialect, 0)
			if st := c.login(testAccount, testKey); st != ntstatus.Success {
				t.Fatalf("login: %v", st)
			}
			if st := c.treeConnect("data"); st != ntstatus.Success {
				t.Fatalf("tree connect: %v", st)
			}
			var err error
			st, f := c.create("f.txt", 0x12019f, 0, 2, optNonDirectoryFile) // no sharing
			if st != ntstatus.Success {
				t.Fatalf("create: %v", st)
			}
			if st := c.reauth("DEVSTOREACCOUNT1", testKey); st != ntstatus.Success {
				t.Fatalf("re-authentication with the key: %v", st)
			}
			// Signed with the session's first key, the open still works.
			if st := c.read(f, 0, 1); st != ntstatus.EndOfFile {
				t.Fatalf("read after re-authentication: %v, want STATUS_END_OF_FILE", st)
			}
			other := loggedOnDialect(t, addr, dialect)
			if st, _ := other.create("f.txt", 0x120089, 7, 1, optNonDirectoryFile); st != ntstatus.SharingViolation {
				t.Fatalf("open while the first session holds it: %v, want STATUS_SHARING_VIOLATION", st)
			}
			// Signed with another key, a re-authentication is refused
			// before it starts: nobody without the session's key ends it.
			good := c.signer
			if c.signer, err = newSigner(dialect, signAESCMAC, []byte("0123456789abcdef"), nil); err != nil {
				t.Fatal(err)
			}
			st, _ = c.call(cmdSessionSetup, sessionSetupRequest((&ntlm.Client{User: testAccount, Password: "x"}).Negotiate()))
			c.signer = good
			if st != ntstatus.AccessDenied {
				t.Fatalf("re-authentication signed with another key: %v, want STATUS_ACCESS_DENIED", st)
			}
			if st := c.read(f, 0, 1); st != ntstatus.EndOfFile {
				t.Fatalf("read after a refused re-authentication: %v, want STATUS_END_OF_FILE", st)
			}
			if st := c.reauth(testAccount, "wrong-key"); st != ntstatus.LogonFailure {
				t.Fatalf("re-authentication with a wrong key: %v, want STATUS_LOGON_FAILURE", st)
			}
			// Signed with the session's key (call verified it), as smbd
			// signs it: Samba's client takes an unsigned answer for
			// STATUS_ACCESS_DENIED.
			if c.lastFlags&flagSigned == 0 {
				t.Fatal("the STATUS_LOGON_FAILURE of a signed re-authentication is not signed")
			}
			if st := c.read(f, 0, 1); st != ntstatus.UserSessionDeleted {
				t.Fatalf("request on the session after the failure: %v, want STATUS_USER_SESSION_DELETED", st)
			}
			if st, _ := other.create("f.txt", 0x120089, 0, 1, optNonDirectoryFile); st != ntstatus.Success {
				t.Fatalf("open after the session ended: %v, want success (its open closed)", st)
			}
		})
	}
}

// loggedOnDialect is loggedOn with a dialect of the client's choice.
func loggedOnDialect(t *testing.T, addr string, dialect uint16) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.negotiateWith(dialect, 0)
	if st := c.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatalf("login: %v", st)
	}
	if st := c.treeConnect("data"); st != ntstatus.Success {
		t.Fatalf("tree connect: %v", st)
	}
	return c
}
