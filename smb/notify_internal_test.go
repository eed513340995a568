package smb

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/blobshare/blobshare/blobstore/local"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// TestChangeNotifyPendsUntilCancel: CHANGE_NOTIFY on a directory gets a
// signed interim STATUS_PENDING with an async id, and then nothing until
// a CANCEL naming that async id ends it with STATUS_CANCELLED; a second
// one ends with STATUS_NOTIFY_CLEANUP when the directory is closed. On a
// file it is STATUS_INVALID_PARAMETER.
func TestChangeNotifyPendsUntilCancel(t *testing.T) {
	c := loggedOn(t, newTestServer(t, newTestFS(t)))
	st, dir := c.create("watched", 0x80000000, 7, 3, optDirectoryFile)
	if st != ntstatus.Success {
		t.Fatalf("create directory: %v", st)
	}
	notify := func(id fileID) (msgID uint64, h header) {
		t.Helper()
		b := make([]byte, 32)
		le.PutUint16(b, 32)
		le.PutUint32(b[4:], 4096)
		id.put(b[8:])
		le.PutUint32(b[24:], 0x17) // file name, dir name, attributes, last write
		msgID = c.msgID
		if err := c.frame(c.message(cmdChangeNotify, b)); err != nil {
			t.Fatal(err)
		}
		return msgID, c.readHeader()
	}
	msgID, interim := notify(dir)
	if ntstatus.Status(interim.Status) != ntstatus.Pending || interim.Flags&flagAsync == 0 || interim.AsyncID == 0 || interim.MessageID != msgID {
		t.Fatalf("interim response: %+v, want STATUS_PENDING, async, for message %d", interim, msgID)
	}
	// Nothing more comes until the CANCEL: an ECHO is answered next.
	if st, _ := c.call(cmdEcho, []byte{4, 0, 0, 0}); st != ntstatus.Success {
		t.Fatalf("echo while the notify pends: %v", st)
	}
	cancel := header{Command: cmdCancel, Flags: flagAsync | flagSigned, MessageID: msgID, AsyncID: interim.AsyncID, SessionID: c.session}
	msg := make([]byte, headerSize, headerSize+4)
	cancel.encode(msg)
	msg = append(msg, 4, 0, 0, 0)
	sig := signatureOf(c.signer, msg)
	copy(msg[48:], sig[:])
	if err := c.frame(msg); err != nil {
		t.Fatal(err)
	}
	final := c.readHeader()
	if ntstatus.Status(final.Status) != ntstatus.Cancelled || final.AsyncID != interim.AsyncID || final.MessageID != msgID {
		t.Fatalf("after CANCEL: %+v, want STATUS_CANCELLED for async id %d", final, interim.AsyncID)
	}

	msgID, interim = notify(dir)
	if ntstatus.Status(interim.Status) != ntstatus.Pending {
		t.Fatalf("second notify: %v", ntstatus.Status(interim.Status))
	}
	b := make([]byte, 24)
	le.PutUint16(b, 24)
	dir.put(b[8:])
	if err := c.frame(c.message(cmdClose, b)); err != nil {
		t.Fatal(err)
	}
	got := map[uint16]ntstatus.Status{}
	for range 2 {
		h := c.readHeader()
		got[h.Command] = ntstatus.Status(h.Status)
	}
	if got[cmdChangeNotify] != ntstatus.NotifyCleanup || got[cmdClose] != ntstatus.Success {
		t.Fatalf("closing the directory: %v, want the notify ended STATUS_NOTIFY_CLEANUP and the close done", got)
	}

	st, file := c.create("plain.txt", 0xc0000000, 7, 3, optNonDirectoryFile)
	if st != ntstatus.Success {
		t.Fatalf("create file: %v", st)
	}
	if _, h := notify(file); ntstatus.Status(h.Status) != ntstatus.InvalidParameter {
		t.Fatalf("notify on a file: %v, want STATUS_INVALID_PARAMETER", ntstatus.Status(h.Status))
	}
}

// readHeader reads one response and checks its signature.
func (c *rawClient) readHeader() header {
	c.t.Helper()
	resp, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("no response: %v", err)
	}
	h, err := decodeHeader(resp)
	if err != nil {
		c.t.Fatal("bad response header")
	}
	if h.Flags&flagSigned == 0 || signatureOf(c.signer, resp) != h.Signature {
		c.t.Fatalf("response to command %#x (%v) is not signed or does not verify", h.Command, ntstatus.Status(h.Status))
	}
	return h
}

// notifyReq is a CHANGE_NOTIFY body: on id, WATCH_TREE when tree, for
// the changes filter selects, answered in at most maxOut bytes.
func notifyReq(id fileID, tree bool, filter, maxOut uint32) []byte {
	b := make([]byte, 32)
	le.PutUint16(b, 32)
	if tree {
		le.PutUint16(b[2:], watchTree)
	}
	le.PutUint32(b[4:], maxOut)
	id.put(b[8:])
	le.PutUint32(b[24:], filter)
	return b
}

// notified is one FILE_NOTIFY_INFORMATION of a response.
type notified struct {
	action uint32
	name   string
}

// notifyPending sends a CHANGE_NOTIFY and reads its interim response:
// the message id and the async id.
func (c *rawClient) notifyPending(body []byte) (uint64, uint64) {
	c.t.Helper()
	id := c.send(cmdChangeNotify, body)
	h, _ := c.next()
	if h.MessageID != id || ntstatus.Status(h.Status) != ntstatus.Pending || h.Flags&flagAsync == 0 {
		c.t.Fatalf("CHANGE_NOTIFY: message %d status %v, want the interim STATUS_PENDING of %d", h.MessageID, ntstatus.Status(h.Status), id)
	}
	return id, h.AsyncID
}

// cancelNotify cancels the pending request (id, async) and reads its
// STATUS_CANCELLED.
func (c *rawClient) cancelNotify(id, async uint64) {
	c.t.Helper()
	cancel := header{Command: cmdCancel, Flags: flagAsync | flagSigned, MessageID: id, AsyncID: async, SessionID: c.session}
	msg := make([]byte, headerSize, headerSize+4)
	cancel.encode(msg)
	msg = append(msg, 4, 0, 0, 0)
	sig := signatureOf(c.signer, msg)
	copy(msg[48:], sig[:])
	if err := c.frame(msg); err != nil {
		c.t.Fatal(err)
	}
	if st, _ := c.final(id); st != ntstatus.Cancelled {
		c.t.Fatalf("cancelled notify: %v", st)
	}
}

// buffered returns a channel that receives once srv's opens have buffered
// n changes in all (the server's dispatch hook: an event, not a sleep).
func buffered(srv *Server, n int) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	srv.notify.mu.Lock()
	srv.notify.onDispatch = func() {
		total := 0
		for _, no := range srv.notify.byOpen {
			total += len(no.buf)
		}
		if total >= n {
			once.Do(func() { close(done) })
		}
	}
	srv.notify.mu.Unlock()
	return done
}

// notifyResult reads the final response of CHANGE_NOTIFY id and decodes
// its FILE_NOTIFY_INFORMATION records (MS-FSCC 2.7.1).
func (c *rawClient) notifyResult(id uint64) (ntstatus.Status, []notified) {
	c.t.Helper()
	st, b := c.final(id)
	if st != ntstatus.Success {
		return st, nil
	}
	if len(b) < 8 || le.Uint16(b) != 9 {
		c.t.Fatalf("CHANGE_NOTIFY response body %x", b)
	}
	off, n := int(le.Uint16(b[2:]))-headerSize, int(le.Uint32(b[4:]))
	buf := b[off : off+n]
	var out []notified
	for {
		next := le.Uint32(buf)
		nameLen := le.Uint32(buf[8:])
		u := make([]uint16, nameLen/2)
		for i := range u {
			u[i] = le.Uint16(buf[12+2*i:])
		}
		out = append(out, notified{le.Uint32(buf[4:]), string(utf16.Decode(u))})
		if next == 0 {
			return st, out
		}
		buf = buf[next:]
	}
}

const notifyFileDirName = 0x3 // FILE_NOTIFY_CHANGE_FILE_NAME | DIR_NAME

// TestNotifyRESTCreateFile: a REST Create File (the azfile SDK) completes
// a pending CHANGE_NOTIFY with FILE_ACTION_ADDED and the file's name.
func TestNotifyRESTCreateFile(t *testing.T) {
	addr, fileClient := restCaching(t, time.Second, time.Second)
	c := loggedOn(t, addr)
	st, root := c.create("", 0x80000000|0x1, 7, 1, optDirectoryFile)
	if st != ntstatus.Success {
		t.Fatalf("open share root: %v", st)
	}
	id, _ := c.notifyPending(notifyReq(root, false, notifyFileDirName, 4096))
	if _, err := fileClient("from-rest.txt").Create(context.Background(), 10, nil); err != nil {
		t.Fatal(err)
	}
	st, got := c.notifyResult(id)
	want := []notified{{1, "from-rest.txt"}} // FILE_ACTION_ADDED
	if st != ntstatus.Success || !slices.Equal(got, want) {
		t.Fatalf("notify: %v %+v, want %+v", st, got, want)
	}
}

// TestNotifyBuffersRenameAndTree: changes made while no request pends are
// buffered on the open and answer the next CHANGE_NOTIFY at once; a
// rename through fs (as the mount's mv) is RENAMED_OLD_NAME then
// RENAMED_NEW_NAME; a WATCH_TREE watch names a change below it by its
// path; the completion filter leaves out what it does not ask for; a
// response that does not fit the output buffer is STATUS_NOTIFY_ENUM_DIR.
func TestNotifyBuffersRenameAndTree(t *testing.T) {
	ctx := context.Background()
	fsys, _ := newTestFSTable(t)
	srv, addr := startTestServer(t, fsys)
	c := loggedOn(t, addr)
	if _, err := fsys.CreateDirectory(ctx, fs.CreateDirectoryRequest{Path: "data/d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.CreateFile(ctx, fs.CreateFileRequest{Path: "data/d/a.txt"}); err != nil {
		t.Fatal(err)
	}
	st, root := c.create("", 0x80000000|0x1, 7, 1, optDirectoryFile)
	if st != ntstatus.Success {
		t.Fatalf("open share root: %v", st)
	}
	// The first request registers the watch; cancel it, then change.
	c.cancelNotify(c.notifyPending(notifyReq(root, true, notifyFileDirName, 4096)))
	three := buffered(srv, 3)
	d, err := fsys.GetShare(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fsys.Lookup(ctx, d.ID, "d")
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(ctx, fs.RenameRequest{OldParent: sub.ID, OldName: "a.txt", NewParent: sub.ID, NewName: "b.txt"}); err != nil {
		t.Fatal(err)
	}
	attrs := fs.AttrHidden
	b, err := fsys.Lookup(ctx, sub.ID, "b.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Setattr(ctx, b.ID, fs.SetattrRequest{Attributes: &attrs}); err != nil { // not asked for
		t.Fatal(err)
	}
	if _, err := fsys.Mkdir(ctx, d.ID, "e"); err != nil {
		t.Fatal(err)
	}
	// The server takes its own process's notices at the commit: wait for
	// them to be buffered (the next request answers at once).
	<-three
	id := c.send(cmdChangeNotify, notifyReq(root, true, notifyFileDirName, 4096))
	st, got := c.notifyResult(id)
	want := []notified{{4, `d\a.txt`}, {5, `d\b.txt`}, {1, "e"}}
	if st != ntstatus.Success || !slices.Equal(got, want) {
		t.Fatalf("buffered: %v %+v, want %+v", st, got, want)
	}
	// Too small an output buffer: STATUS_NOTIFY_ENUM_DIR.
	id, _ = c.notifyPending(notifyReq(root, true, notifyFileDirName, 8))
	if _, err := fsys.Mkdir(ctx, d.ID, "f"); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.notifyResult(id); st != ntstatus.NotifyEnumDir {
		t.Fatalf("notify into 8 bytes: %v, want STATUS_NOTIFY_ENUM_DIR", st)
	}
}

// TestNotifyOtherProcess: a change made through a second FileSystem on
// the same data directory — another process, as the mount or `blobshare
// session` are — reaches a CHANGE_NOTIFY pending here (the poll of the
// change table, no in-process wake-up).
func TestNotifyOtherProcess(t *testing.T) {
	ctx := context.Background()
	fsys, table := newTestFSTable(t)
	c := loggedOn(t, newTestServer(t, fsys))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	table2, err := locks.Open(ctx, table.Path(), locks.Options{Remove: fs.RemoveFile, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	store2, err := local.New(filepath.Join(filepath.Dir(table.Path()), "blobs"), local.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	other, err := fs.New(ctx, fs.Config{Table: table2, Store: store2, Logger: quiet, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		other.Close(ctx)
		table2.Close(ctx)
	})
	st, root := c.create("", 0x80000000|0x1, 7, 1, optDirectoryFile)
	if st != ntstatus.Success {
		t.Fatalf("open share root: %v", st)
	}
	id, _ := c.notifyPending(notifyReq(root, false, notifyFileDirName, 4096))
	if _, err := other.CreateDirectory(ctx, fs.CreateDirectoryRequest{Path: "data/elsewhere"}); err != nil {
		t.Fatal(err)
	}
	st, got := c.notifyResult(id)
	want := []notified{{1, "elsewhere"}}
	if st != ntstatus.Success || !slices.Equal(got, want) {
		t.Fatalf("notify: %v %+v, want %+v", st, got, want)
	}
}
