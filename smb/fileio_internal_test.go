package smb

import (
	"bytes"
	"testing"

	"github.com/blobshare/blobshare/ntstatus"
)

// write sends one WRITE of data at off and returns its status.
func (c *rawClient) write(id fileID, off uint64, data []byte) ntstatus.Status {
	c.t.Helper()
	b := make([]byte, 48, 48+len(data))
	le.PutUint16(b, 49)
	le.PutUint16(b[2:], headerSize+48)
	le.PutUint32(b[4:], uint32(len(data)))
	le.PutUint64(b[8:], off)
	id.put(b[16:])
	st, _ := c.call(cmdWrite, append(b, data...))
	return st
}

// TestPipelinedReadsAnswerInOrder: READs of one open sent back to back,
// each alone in its frame (so each is served on a goroutine), are
// answered in the order they were sent, each signed and with its own
// range's bytes — what a pipelining client such as smbclient relies on to
// consume its data as it arrives.
func TestPipelinedReadsAnswerInOrder(t *testing.T) {
	c := loggedOn(t, newTestServer(t, newTestFS(t)))
	st, fid := c.create("seq.bin", 0xc0000000, 7, 3, 0x40)
	if st != ntstatus.Success {
		t.Fatalf("create: %v", st)
	}
	// Many more READs than a connection serves at once, so the loop
	// also waits for read slots; each chunk's bytes name the chunk.
	const chunk, n = 64 << 10, 3 * maxReadsInFlight
	for i := range n {
		if st := c.write(fid, uint64(i*chunk), bytes.Repeat([]byte{byte(i)}, chunk)); st != ntstatus.Success {
			t.Fatalf("write chunk %d: %v", i, st)
		}
	}
	first := c.msgID
	for i := range n {
		b := make([]byte, 49)
		le.PutUint16(b, 49)
		le.PutUint32(b[4:], chunk)
		le.PutUint64(b[8:], uint64(i*chunk))
		fid.put(b[16:])
		if err := c.frame(c.message(cmdRead, b)); err != nil {
			t.Fatalf("send read %d: %v", i, err)
		}
	}
	for i := range n {
		resp, err := c.readFrame()
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		h, err := decodeHeader(resp)
		if err != nil {
			t.Fatalf("response %d: bad header", i)
		}
		if want := first + uint64(i); h.MessageID != want {
			t.Fatalf("response %d answers message %d, want %d (out of order)", i, h.MessageID, want)
		}
		if ntstatus.Status(h.Status) != ntstatus.Success {
			t.Fatalf("read %d: %v", i, ntstatus.Status(h.Status))
		}
		if h.Flags&flagSigned == 0 || signatureOf(c.signer, resp) != h.Signature {
			t.Fatalf("read %d: response not signed or signature does not verify", i)
		}
		body := resp[headerSize:]
		if got := le.Uint32(body[4:]); got != chunk || int(body[2]) != headerSize+16 {
			t.Fatalf("read %d: DataLength %d at offset %d, want %d at %d", i, got, body[2], chunk, headerSize+16)
		}
		if !bytes.Equal(body[16:16+chunk], bytes.Repeat([]byte{byte(i)}, chunk)) {
			t.Fatalf("read %d: data is not chunk %d's", i, i)
		}
		if le.Uint32(body[8:]) != 0 || le.Uint32(body[12:]) != 0 {
			t.Fatalf("read %d: DataRemaining/Flags %x, want zero", i, body[8:16])
		}
	}
}
