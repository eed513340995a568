package smb

import (
	"testing"

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
