package smb

import (
	"bytes"
	"testing"
	"time"

	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

// multiClient is a raw client on dialect 3.0 with SMB2_GLOBAL_CAP_MULTI_CHANNEL
// and the client GUID guid.
func multiClient(t *testing.T, addr string, guid byte) *rawClient {
	t.Helper()
	return multiClientWith(t, addr, guid, dialect300)
}

// multiClientWith is multiClient negotiating dialect.
func multiClientWith(t *testing.T, addr string, guid byte, dialect uint16) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.guid[0] = guid
	c.negotiateWith(dialect, capMultiChannel)
	return c
}

// multiSession is a multiClient (GUID 1) logged on, connected to share
// "data", with name created and open.
func multiSession(t *testing.T, addr, name string) (*rawClient, fileID) {
	t.Helper()
	a := multiClient(t, addr, 1)
	if st := a.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatal(st)
	}
	if st := a.treeConnect("data"); st != ntstatus.Success {
		t.Fatal(st)
	}
	st, fid := a.create(name, accAll, 7, 2, 0)
	if st != ntstatus.Success {
		t.Fatal(st)
	}
	return a, fid
}

// bindChannel opens a second connection of a's client and binds it to a's
// session (MS-SMB2 3.3.5.5.2).
func bindChannel(t *testing.T, addr string, a *rawClient) *rawClient {
	t.Helper()
	b := multiClient(t, addr, 1)
	if st := b.bind(a, testAccount, testKey, a.signer); st != ntstatus.Success {
		t.Fatalf("bind: %v", st)
	}
	return b
}

// bind binds c (negotiated, not logged on) to owner's session as user,
// signing the binding with signWith, and returns the status of the leg
// that failed or of the last one; on success c signs with the channel key.
func (c *rawClient) bind(owner *rawClient, user, password string, signWith signer) ntstatus.Status {
	c.t.Helper()
	c.session, c.signer, c.tree = owner.session, signWith, owner.tree
	cl := ntlm.Client{User: user, Password: password}
	req := sessionSetupRequest(cl.Negotiate())
	req[2] = sessionFlagBinding
	st, body := c.call(cmdSessionSetup, req)
	if st != ntstatus.MoreProcessingRequired {
		return st
	}
	auth, key, err := cl.Authenticate(body[8:][:le.Uint16(body[6:])], time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	req = sessionSetupRequest(auth)
	req[2] = sessionFlagBinding
	if err := c.frame(c.message(cmdSessionSetup, req)); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.readFrame()
	if err != nil {
		c.t.Fatal(err)
	}
	h, _ := decodeHeader(resp)
	if st := ntstatus.Status(h.Status); st != ntstatus.Success {
		return st
	}
	channel, err := newSigner(c.dialect, signAESCMAC, key, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	// The final response is signed with the channel's key, not the
	// session's.
	if h.Flags&flagSigned == 0 || signatureOf(channel, resp) != h.Signature {
		c.t.Fatal("binding response not signed with the channel key")
	}
	if signatureOf(owner.signer, resp) == h.Signature {
		c.t.Fatal("the channel key is the session key")
	}
	c.signer = channel
	return ntstatus.Success
}

// lock sends a one-element LOCK with a LockSequence.
func (c *rawClient) lock(id fileID, seq uint32, off, n uint64, flags uint32) ntstatus.Status {
	c.t.Helper()
	b := make([]byte, 48)
	le.PutUint16(b, 48)
	le.PutUint16(b[2:], 1)
	le.PutUint32(b[4:], seq)
	id.put(b[8:])
	le.PutUint64(b[24:], off)
	le.PutUint64(b[32:], n)
	le.PutUint32(b[40:], flags)
	st, _ := c.call(cmdLock, b)
	return st
}

// TestMultichannel: a 3.0 session binds to a second connection of the same
// client; its trees and opens serve on both, each channel signing with its
// own key; the session outlives its first connection and a LOGOFF on any
// channel ends it on all.
func TestMultichannel(t *testing.T) {
	srv, addr := startTestServer(t, newTestFS(t))
	a, fid := multiSession(t, addr, "shared.txt")
	if a.serverCaps&capMultiChannel == 0 {
		t.Fatalf("server capabilities %#x lack SMB2_GLOBAL_CAP_MULTI_CHANNEL", a.serverCaps)
	}

	b := bindChannel(t, addr, a)
	if st, _ := b.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.Success {
		t.Fatalf("the first channel's open on the second: %v", st)
	}
	st, fid2 := b.create("other.txt", accAll, 7, 2, 0)
	if st != ntstatus.Success {
		t.Fatal(st)
	}
	if st, _ := a.queryInfo(fid2, infoFile, fileStandardInformation); st != ntstatus.Success {
		t.Fatalf("the second channel's open on the first: %v", st)
	}
	// Each channel checks its own key: the session key is wrong on b.
	channelKey := b.signer
	b.signer = a.signer
	if st, _ := b.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.AccessDenied {
		t.Fatalf("request on the second channel signed with the session key: %v, want STATUS_ACCESS_DENIED", st)
	}
	b.signer = channelKey
	if st := b.bind(a, testAccount, testKey, a.signer); st != ntstatus.RequestNotAccepted {
		t.Errorf("binding a connection that is a channel already: %v, want STATUS_REQUEST_NOT_ACCEPTED", st)
	}
	b.signer = channelKey

	// The first connection goes; the session and its opens stay on the second.
	a.nc.Close()
	waitConns(t, srv, 1)
	if st, _ := b.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.Success {
		t.Fatalf("open after the first connection closed: %v", st)
	}

	// A third channel, then LOGOFF on it ends the session on all.
	c := bindChannel(t, addr, a)
	if st, _ := c.call(cmdLogoff, []byte{4, 0, 0, 0}); st != ntstatus.Success {
		t.Fatalf("logoff: %v", st)
	}
	if st, _ := b.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.UserSessionDeleted {
		t.Fatalf("after LOGOFF on another channel: %v, want STATUS_USER_SESSION_DELETED", st)
	}
	cl := ntlm.Client{User: testAccount, Password: testKey}
	if st, _ := b.call(cmdSessionSetup, sessionSetupRequest(cl.Negotiate())); st != ntstatus.UserSessionDeleted {
		t.Fatalf("SESSION_SETUP of the logged-off session on another channel: %v, want STATUS_USER_SESSION_DELETED", st)
	}
}

// waitConns waits until the server serves n connections (a closed one is
// gone once its opens are dealt with).
func waitConns(t *testing.T, srv *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		srv.mu.Lock()
		got := len(srv.conns)
		srv.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server still has %d connections, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMultichannelHostileBinding: a binding that is unsigned, badly
// signed, from another client, on another dialect, for a session that does
// not exist, or authenticated with a wrong password or as another user
// fails with the status MS-SMB2 3.3.5.5.2 names and leaves the session as
// it was.
func TestMultichannelHostileBinding(t *testing.T) {
	addr := newTestServer(t, newTestFS(t))
	a, fid := multiSession(t, addr, "f.txt")
	wrongKey := hmacSigner{key: bytes.Repeat([]byte{1}, 16)}
	wrongCMAC, _ := newSigner(dialect300, signAESCMAC, bytes.Repeat([]byte{2}, 16), nil)
	for _, tt := range []struct {
		name           string
		guid           byte
		dialect        uint16
		user, password string
		sign           signer
		session        uint64 // 0: a's
		want           ntstatus.Status
	}{
		{"unsigned", 1, dialect300, testAccount, testKey, nil, 0, ntstatus.InvalidParameter},
		{"signed with another key", 1, dialect300, testAccount, testKey, wrongCMAC, 0, ntstatus.AccessDenied},
		{"another client", 2, dialect300, testAccount, testKey, a.signer, 0, ntstatus.UserSessionDeleted},
		{"another 3.x dialect", 1, dialect302, testAccount, testKey, a.signer, 0, ntstatus.InvalidParameter},
		{"SMB 2.1", 1, dialect210, testAccount, testKey, wrongKey, 0, ntstatus.RequestNotAccepted},
		{"no such session", 1, dialect300, testAccount, testKey, a.signer, a.session + 1000, ntstatus.UserSessionDeleted},
		{"wrong password", 1, dialect300, testAccount, "wrong", a.signer, 0, ntstatus.LogonFailure},
		{"another user", 1, dialect300, "someoneelse", testKey, a.signer, 0, ntstatus.LogonFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := multiClientWith(t, addr, tt.guid, tt.dialect)
			owner := *a
			if tt.session != 0 {
				owner.session = tt.session
			}
			if st := b.bind(&owner, tt.user, tt.password, tt.sign); st != tt.want {
				t.Fatalf("bind: %v, want %v", st, tt.want)
			}
			// Nothing was bound: the connection has no session.
			b.signer = a.signer
			if st, _ := b.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.UserSessionDeleted {
				t.Errorf("the refused connection reaches the session: %v", st)
			}
			if st, _ := a.queryInfo(fid, infoFile, fileStandardInformation); st != ntstatus.Success {
				t.Errorf("the session after a refused binding: %v", st)
			}
		})
	}
}

// TestLockSequenceReplay: on 3.x a LOCK whose bucket holds its sequence
// number already is a replay, answered STATUS_SUCCESS and not done again
// (on any channel); a new number is done; buckets outside 1..64 and 2.x
// connections are not checked.
func TestLockSequenceReplay(t *testing.T) {
	addr := newTestServer(t, newTestFS(t))
	a, fid := multiSession(t, addr, "locked.dat")
	b := bindChannel(t, addr, a)
	const excl = lockExclusive | lockFailImmediately
	steps := []struct {
		c     *rawClient
		seq   uint32
		flags uint32
		want  ntstatus.Status
	}{
		{a, 0x000 + 1, excl, ntstatus.Success}, // bucket 0: not checked
		{a, 0x000 + 1, excl, ntstatus.LockNotGranted},
		{a, 0x000 + 1, lockUnlock, ntstatus.Success},
		{a, 0x010 + 1, excl, ntstatus.Success},       // bucket 1, number 1
		{a, 0x010 + 1, excl, ntstatus.Success},       // replay
		{b, 0x010 + 1, excl, ntstatus.Success},       // replay on the other channel
		{b, 0x010 + 1, lockUnlock, ntstatus.Success}, // replay: not unlocked
		{a, 0x010 + 2, excl, ntstatus.LockNotGranted},
		{a, 0x010 + 2, excl, ntstatus.LockNotGranted}, // a failure is not recorded
		{a, 0x410 + 1, excl, ntstatus.LockNotGranted}, // bucket 65: not checked
		{a, 0x400 + 2, lockUnlock, ntstatus.Success},  // bucket 64
		{b, 0x400 + 2, lockUnlock, ntstatus.Success},  // replay
		{a, 0x400 + 3, lockUnlock, ntstatus.RangeNotLocked},
	}
	for i, s := range steps {
		if st := s.c.lock(fid, s.seq, 100, 100, s.flags); st != s.want {
			t.Fatalf("step %d (sequence %#x, flags %#x): %v, want %v", i, s.seq, s.flags, st, s.want)
		}
	}

	old := loggedOn(t, addr) // SMB 2.1: no lock sequence checks
	st, fid := old.create("old.dat", accAll, 7, 2, 0)
	if st != ntstatus.Success {
		t.Fatal(st)
	}
	if st := old.lock(fid, 0x11, 0, 10, excl); st != ntstatus.Success {
		t.Fatal(st)
	}
	if st := old.lock(fid, 0x11, 0, 10, excl); st != ntstatus.LockNotGranted {
		t.Fatalf("the same sequence on 2.1: %v, want STATUS_LOCK_NOT_GRANTED", st)
	}
}

// TestMultichannelConcurrent: requests of one session on two channels at
// once (creates, queries, locks and closes of shared and own opens) are
// served one at a time without losing any; run it under -race.
func TestMultichannelConcurrent(t *testing.T) {
	addr := newTestServer(t, newTestFS(t))
	a, shared := multiSession(t, addr, "shared.dat")
	b := bindChannel(t, addr, a)
	done := make(chan struct{}, 2)
	for i, c := range []*rawClient{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := 0; n < 100; n++ {
				name := string(rune('a'+i)) + ".dat"
				st, id := c.create(name, accAll, 7, 3, 0)
				if st != ntstatus.Success {
					t.Errorf("channel %d create: %v", i, st)
					return
				}
				if st, _ := c.queryInfo(shared, infoFile, fileStandardInformation); st != ntstatus.Success {
					t.Errorf("channel %d query of the shared open: %v", i, st)
					return
				}
				off := uint64(1000*i + n)
				if st := c.lock(shared, 0, off, 1, lockExclusive|lockFailImmediately); st != ntstatus.Success {
					t.Errorf("channel %d lock: %v", i, st)
					return
				}
				if st := c.lock(shared, 0, off, 1, lockUnlock); st != ntstatus.Success {
					t.Errorf("channel %d unlock: %v", i, st)
					return
				}
				if st := c.closeFile(id); st != ntstatus.Success {
					t.Errorf("channel %d close: %v", i, st)
					return
				}
			}
		}()
	}
	<-done
	<-done
}
