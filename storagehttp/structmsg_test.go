package storagehttp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
	"testing/iotest"
)

// frame builds a structured message by hand (independently of
// StructuredEncoder): one segment per element of segs.
func frame(segs ...[]byte) []byte {
	var data []byte
	n := smHeaderLen + smCRCLen
	for _, s := range segs {
		n += smSegHeaderLen + len(s) + smCRCLen
		data = append(data, s...)
	}
	b := []byte{smVersion}
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	b = binary.LittleEndian.AppendUint16(b, smFlagCRC64)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(segs)))
	for i, s := range segs {
		b = binary.LittleEndian.AppendUint16(b, uint16(i+1))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
		b = binary.LittleEndian.AppendUint64(b, crcOf(s))
	}
	return binary.LittleEndian.AppendUint64(b, crcOf(data))
}

func crcOf(b []byte) uint64 {
	h := NewCRC64()
	h.Write(b)
	return h.Sum64()
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// decodeAll decodes msg as a request body of len(msg) bytes.
func decodeAll(msg []byte, content int64) ([]byte, error) {
	return io.ReadAll(NewStructuredReader(bytes.NewReader(msg), int64(len(msg)), content))
}

// TestStructuredRoundTrip: what StructuredEncoder frames, StructuredReader
// decodes back, for empty, small, segment-sized and multi-segment data;
// the message has the length Len announced, a hand-made frame of the same
// segmentation is byte for byte the encoder's, and one-byte reads (the
// decoder's framing reads split) change nothing.
func TestStructuredRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 100, StructuredSegmentSize, StructuredSegmentSize + 37, 2*StructuredSegmentSize + 1} {
		data := pattern(n)
		enc := NewStructuredEncoder(bytes.NewReader(data), int64(n))
		msg, err := io.ReadAll(enc)
		if err != nil {
			t.Fatalf("%d: encode: %v", n, err)
		}
		if int64(len(msg)) != enc.Len() || int64(len(msg)) != StructuredLength(int64(n)) {
			t.Fatalf("%d: message is %d bytes, Len %d", n, len(msg), enc.Len())
		}
		var segs [][]byte
		for off := 0; off < n || len(segs) == 0; off += StructuredSegmentSize {
			segs = append(segs, data[off:min(off+StructuredSegmentSize, n)])
		}
		if !bytes.Equal(msg, frame(segs...)) {
			t.Fatalf("%d: encoder's message differs from the hand-made one", n)
		}
		got, err := decodeAll(msg, int64(n))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d: decode: %d bytes, %v", n, len(got), err)
		}
		if n <= 100 {
			d := NewStructuredReader(iotest.OneByteReader(bytes.NewReader(msg)), int64(len(msg)), int64(n))
			got, err := io.ReadAll(iotest.OneByteReader(d))
			if err != nil || !bytes.Equal(got, data) || !d.Done() {
				t.Fatalf("%d: one-byte decode: %d bytes, %v", n, len(got), err)
			}
		}
	}
}

// TestStructuredDecodeSegmentations: a client may cut its data as it
// likes, zero-length segments included; the data comes back whole.
func TestStructuredDecodeSegmentations(t *testing.T) {
	data := pattern(1000)
	for _, tc := range []struct {
		name string
		segs [][]byte
	}{
		{"one", [][]byte{data}},
		{"three", [][]byte{data[:1], data[1:999], data[999:]}},
		{"empty middle", [][]byte{data[:500], {}, data[500:]}},
		{"empty last", [][]byte{data, {}}},
	} {
		got, err := decodeAll(frame(tc.segs...), int64(len(data)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes, %v", tc.name, len(got), err)
		}
	}
}

// TestStructuredDecodeFailures: every way a message can be wrong fails
// with its code, and the failure is reported no later than the Read that
// returns the last byte of data, so a reader that stops at the expected
// content length (as a page write does) sees it too.
func TestStructuredDecodeFailures(t *testing.T) {
	data := pattern(300)
	good := frame(data[:100], data[100:])
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	seg2 := smHeaderLen + smSegHeaderLen + 100 + smCRCLen // offset of segment 2's header
	for _, tc := range []struct {
		name    string
		msg     []byte
		framed  int64 // 0: len(msg)
		content int64 // 0: 300
		code    string
	}{
		{"version 2", mut(func(b []byte) []byte { b[0] = 2; return b }), 0, 0, CodeInvalidInput},
		{"no crc flag", mut(func(b []byte) []byte { b[9] = 0; return b }), 0, 0, CodeInvalidInput},
		{"unknown flag", mut(func(b []byte) []byte { b[9] = 3; return b }), 0, 0, CodeInvalidInput},
		{"no segments", mut(func(b []byte) []byte { b[11] = 0; return b }), 0, 0, CodeInvalidInput},
		{"too many segments", mut(func(b []byte) []byte { b[11] = 3; return b }), 0, 0, CodeInvalidInput},
		{"message length vs Content-Length", mut(func(b []byte) []byte { b[1]++; return b }), 0, 0, CodeInvalidInput},
		{"content length vs message", good, 0, 299, CodeInvalidInput},
		{"segment numbered 3", mut(func(b []byte) []byte { b[seg2] = 3; return b }), 0, 0, CodeInvalidInput},
		{"first segment numbered 0", mut(func(b []byte) []byte { b[smHeaderLen] = 0; return b }), 0, 0, CodeInvalidInput},
		{"segment longer than the content", mut(func(b []byte) []byte { b[smHeaderLen+2] = 0xff; b[smHeaderLen+3] = 1; return b }), 0, 0, CodeInvalidInput},
		{"last segment short", frame(data[:100], data[100:299], nil), 0, 0, CodeInvalidInput},
		{"data flipped", mut(func(b []byte) []byte { b[seg2+smSegHeaderLen+5] ^= 1; return b }), 0, 0, "Crc64Mismatch"},
		{"segment CRC flipped", mut(func(b []byte) []byte { b[seg2-1] ^= 0x80; return b }), 0, 0, "Crc64Mismatch"},
		{"trailer flipped", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), 0, 0, "Crc64Mismatch"},
		{"truncated in header", good[:7], -1, 0, CodeInvalidInput},
		{"truncated in data", good[:seg2+20], -1, 0, CodeInvalidInput},
		{"truncated in segment CRC", good[:seg2-3], -1, 0, CodeInvalidInput},
		{"truncated in trailer", good[:len(good)-1], -1, 0, CodeInvalidInput},
		{"no trailer", good[:len(good)-8], -1, 0, CodeInvalidInput},
		{"bytes after the trailer", append(append([]byte(nil), good...), 0), -1, 0, CodeInvalidInput},
	} {
		framed, content := int64(len(tc.msg)), int64(300)
		if tc.framed != 0 {
			framed = tc.framed
		}
		if tc.content != 0 {
			content = tc.content
		}
		for _, stopAtLength := range []bool{false, true} {
			d := NewStructuredReader(bytes.NewReader(tc.msg), framed, content)
			var err error
			if stopAtLength {
				_, err = readN(d, content)
			} else {
				_, err = io.ReadAll(d)
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Status != http.StatusBadRequest || !errors.Is(err, ErrStructuredMessage) {
				t.Errorf("%s (stop at length %v): got %v, want 400 %s", tc.name, stopAtLength, err, tc.code)
			}
		}
	}
}

// readN reads n bytes and not one Read more, returning the first error
// (io.ReadFull would drop an error that comes with the last bytes).
func readN(r io.Reader, n int64) (int64, error) {
	buf := make([]byte, 7)
	var got int64
	for got < n {
		k, err := r.Read(buf[:min(int64(len(buf)), n-got)])
		got += int64(k)
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// TestStructuredSourceErrors: the body's own failures (a network error, a
// body over its cap) pass through wrapped, not as a framing error.
func TestStructuredSourceErrors(t *testing.T) {
	boom := errors.New("boom")
	msg := frame(pattern(50))
	for _, cut := range []int{5, smHeaderLen + 3, smHeaderLen + smSegHeaderLen + 10, len(msg) - 4} {
		r := io.MultiReader(bytes.NewReader(msg[:cut]), iotest.ErrReader(boom))
		_, err := io.ReadAll(NewStructuredReader(r, int64(len(msg)), 50))
		if !errors.Is(err, boom) || errors.Is(err, ErrStructuredMessage) {
			t.Errorf("cut %d: %v, want boom", cut, err)
		}
	}
}

// TestStructuredRequestHeaders: the header pair and the Content-Length
// are checked before the body is read.
func TestStructuredRequestHeaders(t *testing.T) {
	framedOf := func(content, segs int64) int64 { return content + 21 + 18*segs }
	for _, tc := range []struct {
		name    string
		typ     string // "-": absent
		length  string // "-": absent
		framed  int64
		ok      bool
		code    string
		content int64
	}{
		{"neither", "-", "-", 10, false, "", 0},
		{"both", StructuredBodyCRC64, "100", framedOf(100, 1), true, "", 100},
		{"spacing and case", "xsm/1.0 ;Properties = CRC64", "100", framedOf(100, 3), true, "", 100},
		{"chunked", StructuredBodyCRC64, "100", -1, true, "", 100},
		{"empty content", StructuredBodyCRC64, "0", framedOf(0, 1), true, "", 0},
		{"length only", "-", "100", framedOf(100, 1), false, CodeMissingRequiredHeader, 0},
		{"type only", StructuredBodyCRC64, "-", framedOf(100, 1), false, CodeMissingRequiredHeader, 0},
		{"empty type", "", "100", framedOf(100, 1), false, CodeInvalidHeaderValue, 0},
		{"version 2", "XSM/2.0; properties=crc64", "100", framedOf(100, 1), false, CodeInvalidHeaderValue, 0},
		{"md5 property", "XSM/1.0; properties=md5", "100", framedOf(100, 1), false, CodeInvalidHeaderValue, 0},
		{"no properties", "XSM/1.0", "100", framedOf(100, 1), false, CodeInvalidHeaderValue, 0},
		{"two properties", "XSM/1.0; properties=crc64; x=y", "100", framedOf(100, 1), false, CodeInvalidHeaderValue, 0},
		{"negative length", StructuredBodyCRC64, "-1", 40, false, CodeInvalidHeaderValue, 0},
		{"length not a number", StructuredBodyCRC64, "ten", 40, false, CodeInvalidHeaderValue, 0},
		{"Content-Length is the data", StructuredBodyCRC64, "100", 100, false, CodeInvalidHeaderValue, 0},
		{"Content-Length off by one", StructuredBodyCRC64, "100", framedOf(100, 1) + 1, false, CodeInvalidHeaderValue, 0},
		{"too many segments", StructuredBodyCRC64, "100", framedOf(100, 65536), false, CodeInvalidHeaderValue, 0},
	} {
		h := http.Header{}
		if tc.typ != "-" {
			h[http.CanonicalHeaderKey(HeaderStructuredBody)] = []string{tc.typ}
		}
		if tc.length != "-" {
			h.Set(HeaderStructuredContentLength, tc.length)
		}
		content, ok, err := StructuredRequest(h, tc.framed)
		var e *Error
		switch {
		case tc.code == "" && (err != nil || ok != tc.ok || content != tc.content):
			t.Errorf("%s: %d %v %v, want %d %v", tc.name, content, ok, err, tc.content, tc.ok)
		case tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code || ok):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if ok, err := StructuredResponse(http.Header{"X-Ms-Structured-Body": {StructuredBodyCRC64}}); !ok || err != nil {
		t.Errorf("GET with the header: %v %v", ok, err)
	}
	if ok, err := StructuredResponse(http.Header{}); ok || err != nil {
		t.Errorf("GET without the header: %v %v", ok, err)
	}
	if _, err := StructuredResponse(http.Header{"X-Ms-Structured-Body": {"XSM/1.0; properties=sha256"}}); err == nil {
		t.Error("GET with another property accepted")
	}
}

// TestStructuredEncoderShortSource: a source shorter than announced is
// io.ErrUnexpectedEOF, never a complete message.
func TestStructuredEncoderShortSource(t *testing.T) {
	_, err := io.ReadAll(NewStructuredEncoder(bytes.NewReader(pattern(10)), 11))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
}

// TestStructuredSegmentsGrow: content beyond 65535 default segments gets
// larger segments, so the count always fits its uint16.
func TestStructuredSegmentsGrow(t *testing.T) {
	for _, n := range []int64{0, 1, StructuredSegmentSize * 65535, StructuredSegmentSize*65535 + 1, 1 << 50} {
		size, segs := structuredSegments(n)
		if segs < 1 || segs > 65535 || size*segs < n || (segs > 1 && size*(segs-1) >= n) {
			t.Errorf("%d: %d segments of %d", n, segs, size)
		}
	}
}

// FuzzStructuredMessage: an arbitrary body never panics or yields more
// than the declared content; what decodes is exactly content bytes whose
// CRC-64 is the trailer's, and data framed by the encoder always decodes
// back to itself.
func FuzzStructuredMessage(f *testing.F) {
	f.Add(frame(pattern(10)), int64(10), false)
	f.Add(frame(pattern(5), nil, pattern(3)), int64(8), true)
	f.Add(frame(nil), int64(0), false)
	f.Add([]byte{1, 2, 3}, int64(3), true)
	f.Fuzz(func(t *testing.T, msg []byte, content int64, chunked bool) {
		if content < 0 || content > 1<<20 {
			return
		}
		framed := int64(len(msg))
		if chunked {
			framed = -1
		}
		got, err := io.ReadAll(NewStructuredReader(bytes.NewReader(msg), framed, content))
		if err == nil {
			if int64(len(got)) != content {
				t.Fatalf("decoded %d bytes, content %d", len(got), content)
			}
			if binary.LittleEndian.Uint64(msg[len(msg)-8:]) != crcOf(got) {
				t.Fatal("decoded data does not match the trailer")
			}
		} else {
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Fatalf("failure is not a 400: %v", err)
			}
		}
		enc := NewStructuredEncoder(bytes.NewReader(msg), int64(len(msg)))
		framedMsg, err := io.ReadAll(enc)
		if err != nil || int64(len(framedMsg)) != enc.Len() {
			t.Fatalf("encode: %d bytes, %v", len(framedMsg), err)
		}
		back, err := decodeAll(framedMsg, int64(len(msg)))
		if err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("round trip: %v", err)
		}
		h := http.Header{}
		h.Set(HeaderStructuredBody, StructuredBodyCRC64)
		h.Set(HeaderStructuredContentLength, strconv.Itoa(len(msg)))
		if _, ok, err := StructuredRequest(h, int64(len(framedMsg))); !ok || err != nil {
			t.Fatalf("headers of an encoded message refused: %v", err)
		}
	})
}
