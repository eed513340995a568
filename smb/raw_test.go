package smb

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
	"github.com/blobshare/blobshare/smb/ntlm"
)

const (
	testAccount = "devstoreaccount1"
	testKey     = "a-key=="
)

// newTestFS is an fs over a temp dir with one share, "data".
func newTestFS(t testing.TB) *fs.FileSystem {
	t.Helper()
	fsys, _ := newTestFSTable(t)
	return fsys
}

// newTestFSTable is newTestFS, returning its lock table too.
func newTestFSTable(t testing.TB) (*fs.FileSystem, *locks.Table) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	table, err := locks.Open(ctx, filepath.Join(dir, "blobshare.db"), locks.Options{Remove: fs.RemoveFile, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	store, err := local.New(filepath.Join(dir, "blobs"), local.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.New(ctx, fs.Config{Table: table, Store: store, Logger: quiet, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fsys.Close(ctx)
		table.Close(ctx)
	})
	if _, err := fsys.CreateShare(ctx, fs.ShareRequest{Name: "data"}); err != nil {
		t.Fatal(err)
	}
	return fsys, table
}

// newTestServer serves fsys on 127.0.0.1:0 and returns the address; opts
// adjust the configuration.
func newTestServer(t testing.TB, fsys *fs.FileSystem, opts ...func(*Config)) string {
	t.Helper()
	_, addr := startTestServer(t, fsys, opts...)
	return addr
}

// startTestServer is newTestServer, returning the server too.
func startTestServer(t testing.TB, fsys *fs.FileSystem, opts ...func(*Config)) (*Server, string) {
	t.Helper()
	cfg := Config{FS: fsys, Account: testAccount, Key: testKey, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return srv, ln.Addr().String()
}

// rawClient speaks SMB2 byte by byte, to send what real clients never
// would. It negotiates 2.1 and signs with HMAC-SHA256 once logged on.
type rawClient struct {
	t       testing.TB
	nc      net.Conn
	msgID   uint64
	session uint64
	tree    uint32
	signer  signer
	// dialect is what negotiate asked for (2.1 unless negotiateWith);
	// guid the ClientGuid it sends.
	dialect    uint16
	guid       [16]byte
	serverCaps uint32
	// lastSession and lastTree are the ids of the last response.
	lastSession uint64
	lastFlags   uint32 // of the last response to call
	lastTree    uint32
	// flags are added to every request's header (a replay's flag);
	// chanSeq is its ChannelSequence (3.x).
	flags   uint32
	chanSeq uint16
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawClient{t: t, nc: nc}
}

// frame writes one NetBIOS frame.
func (c *rawClient) frame(msg []byte) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(msg)))
	_, err := c.nc.Write(append(hdr[:], msg...))
	return err
}

// readFrame reads one frame; io.EOF when the server closed the connection.
func (c *rawClient) readFrame() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err := io.ReadFull(c.nc, msg)
	return msg, err
}

// message builds a request with the client's ids, signed once logged on.
func (c *rawClient) message(cmd uint16, body []byte) []byte {
	h := header{Command: cmd, Credits: 64, CreditCharge: 1, MessageID: c.msgID, SessionID: c.session, TreeID: c.tree,
		Flags: c.flags, Status: uint32(c.chanSeq)}
	c.msgID++
	msg := make([]byte, headerSize, headerSize+len(body))
	if c.signer != nil {
		h.Flags |= flagSigned
	}
	h.encode(msg)
	msg = append(msg, body...)
	if c.signer != nil {
		sig := signatureOf(c.signer, msg)
		copy(msg[48:64], sig[:])
	}
	return msg
}

// call sends one request and returns the response's status and body.
func (c *rawClient) call(cmd uint16, body []byte) (ntstatus.Status, []byte) {
	c.t.Helper()
	if err := c.frame(c.message(cmd, body)); err != nil {
		c.t.Fatalf("send command %#x: %v", cmd, err)
	}
	resp, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("command %#x: no response: %v", cmd, err)
	}
	h, err := decodeHeader(resp)
	if err != nil {
		c.t.Fatalf("command %#x: bad response header", cmd)
	}
	c.lastSession, c.lastTree, c.lastFlags = h.SessionID, h.TreeID, h.Flags
	// STATUS_USER_SESSION_DELETED has no key left to sign with: like
	// Samba's client, only the SIGNED flag is checked there.
	if c.signer != nil && h.SessionID == c.session && h.Flags&flagSigned != 0 && ntstatus.Status(h.Status) != ntstatus.UserSessionDeleted {
		if signatureOf(c.signer, resp) != h.Signature {
			c.t.Fatalf("command %#x: response signature does not verify", cmd)
		}
	}
	return ntstatus.Status(h.Status), resp[headerSize:]
}

func (c *rawClient) negotiate() { c.negotiateWith(dialect210, 0) }

// negotiateWith negotiates one dialect (2.x or 3.0) with capabilities.
func (c *rawClient) negotiateWith(dialect uint16, caps uint32) {
	c.t.Helper()
	b := make([]byte, 36, 38)
	le.PutUint16(b, 36)
	le.PutUint16(b[2:], 1)
	le.PutUint16(b[4:], secSigningEnabled)
	le.PutUint32(b[8:], caps)
	copy(b[12:28], c.guid[:])
	b = le.AppendUint16(b, dialect)
	st, resp := c.call(cmdNegotiate, b)
	if st != ntstatus.Success {
		c.t.Fatalf("negotiate: %v", st)
	}
	c.dialect, c.serverCaps = dialect, le.Uint32(resp[24:])
}

func sessionSetupRequest(token []byte) []byte {
	b := make([]byte, 24, 24+len(token))
	le.PutUint16(b, 25)
	b[3] = byte(secSigningEnabled)
	le.PutUint16(b[12:], headerSize+24)
	le.PutUint16(b[14:], uint16(len(token)))
	return append(b, token...)
}

// login runs a raw NTLMSSP session setup.
func (c *rawClient) login(user, password string) ntstatus.Status {
	c.t.Helper()
	cl := ntlm.Client{User: user, Password: password}
	st, body := c.call(cmdSessionSetup, sessionSetupRequest(cl.Negotiate()))
	if st != ntstatus.MoreProcessingRequired {
		c.t.Fatalf("session setup 1: %v", st)
	}
	// The response's header carried the new session id.
	challenge := body[8:][:le.Uint16(body[6:])]
	c.session = c.lastSession
	auth, key, err := cl.Authenticate(challenge, time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	st, _ = c.call(cmdSessionSetup, sessionSetupRequest(auth))
	if st == ntstatus.Success {
		if c.signer, err = newSigner(c.dialect, signAESCMAC, key, nil); err != nil {
			c.t.Fatal(err)
		}
	}
	return st
}

func (c *rawClient) treeConnect(share string) ntstatus.Status {
	c.t.Helper()
	path := utf16le(`\\127.0.0.1\` + share)
	b := make([]byte, 8, 8+len(path))
	le.PutUint16(b, 9)
	le.PutUint16(b[4:], headerSize+8)
	le.PutUint16(b[6:], uint16(len(path)))
	st, _ := c.call(cmdTreeConnect, append(b, path...))
	if st == ntstatus.Success {
		c.tree = c.lastTree
	}
	return st
}

// create opens name with the given access, share access, disposition and
// options, returning the status and the file id.
func (c *rawClient) create(name string, access, share, disp, opts uint32) (ntstatus.Status, fileID) {
	c.t.Helper()
	return c.createWith(name, access, share, disp, opts, nil)
}

func (c *rawClient) read(id fileID, off uint64, n uint32) ntstatus.Status {
	c.t.Helper()
	b := make([]byte, 49)
	le.PutUint16(b, 49)
	le.PutUint32(b[4:], n)
	le.PutUint64(b[8:], off)
	id.put(b[16:])
	st, _ := c.call(cmdRead, b)
	return st
}

// loggedOn is a raw client logged on and connected to share "data".
func loggedOn(t testing.TB, addr string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.negotiate()
	if st := c.login(testAccount, testKey); st != ntstatus.Success {
		t.Fatalf("login: %v", st)
	}
	if st := c.treeConnect("data"); st != ntstatus.Success {
		t.Fatalf("tree connect: %v", st)
	}
	return c
}

// closed reports whether the server has closed the connection (reading
// gives EOF or a reset, not a frame).
func (c *rawClient) closed() bool {
	_, err := c.readFrame()
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err)
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}
