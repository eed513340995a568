package storagehttp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The structured message format (Azure's "structured body", v1): what a
// request or response body is when it carries x-ms-structured-body:
// XSM/1.0; properties=crc64. All integers are little-endian.
//
//	header   uint8 version (1), uint64 message length (the whole body),
//	         uint16 flags (0x0001: CRC-64 trailers), uint16 segment count (≥ 1)
//	segment  uint16 number (1, 2, …), uint64 data length, the data,
//	         8 bytes CRC-64 of the data
//	trailer  8 bytes CRC-64 of all the data
//
// The CRC-64 is Azure's (crc64.go). x-ms-structured-content-length is the
// length of the data; Content-Length is the length of the message.
const (
	HeaderStructuredBody          = "x-ms-structured-body"
	HeaderStructuredContentLength = "x-ms-structured-content-length"
	// StructuredBodyCRC64 is the one x-ms-structured-body value Azure
	// takes and answers (version 1 with CRC-64 trailers).
	StructuredBodyCRC64 = "XSM/1.0; properties=crc64"
	// StructuredSegmentSize is the segment size of the messages blobshare
	// sends (the SDKs' default), grown when a body would need more than
	// 65535 segments.
	StructuredSegmentSize = 4 << 20
	// MaxStructuredOverhead is the most a message may add to its data:
	// header, trailer and 65535 segment headers and CRCs. A service adds
	// it to its body cap for a structured request.
	MaxStructuredOverhead = smHeaderLen + smCRCLen + math.MaxUint16*(smSegHeaderLen+smCRCLen)

	smVersion      = 1
	smFlagCRC64    = 0x0001
	smHeaderLen    = 13
	smSegHeaderLen = 10
	smCRCLen       = 8
	smMinLen       = smHeaderLen + smSegHeaderLen + smCRCLen + smCRCLen // one empty segment
)

// ErrStructuredMessage marks every framing failure of a structured body
// (errors.Is); CRC failures are Crc64Mismatch errors.
var ErrStructuredMessage = errors.New("invalid structured message")

// InvalidStructuredMessage is 400 InvalidInput for a structured body whose
// framing is wrong, the reason in a Reason detail (Azure documents no code
// of its own for it; InvalidInput is its code for a request input that is
// not valid).
func InvalidStructuredMessage(format string, args ...any) *Error {
	reason := fmt.Sprintf(format, args...)
	e := NewError(http.StatusBadRequest, CodeInvalidInput, "One of the request inputs is not valid.",
		Detail{Name: "Reason", Value: "structured body: " + reason})
	e.Err = fmt.Errorf("%w: %s", ErrStructuredMessage, reason)
	return e
}

// checkStructuredType accepts x-ms-structured-body's one value: XSM/1.0
// with properties=crc64 (tokens compared without case, spaces around ';'
// allowed). Anything else, another version or property included, is 400
// InvalidHeaderValue.
func checkStructuredType(v string) error {
	parts := strings.Split(v, ";")
	if len(parts) != 2 || !strings.EqualFold(strings.TrimSpace(parts[0]), "XSM/1.0") {
		return InvalidHeader(HeaderStructuredBody, v)
	}
	k, val, ok := strings.Cut(strings.TrimSpace(parts[1]), "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(k), "properties") || !strings.EqualFold(strings.TrimSpace(val), "crc64") {
		return InvalidHeader(HeaderStructuredBody, v)
	}
	return nil
}

// header returns a header's value and whether it was sent at all (an
// empty value counts as sent).
func header(h http.Header, name string) (string, bool) {
	vs, ok := h[http.CanonicalHeaderKey(name)]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// StructuredRequest reads a write's x-ms-structured-body and
// x-ms-structured-content-length. ok is false when neither was sent; one
// without the other is 400 MissingRequiredHeader, a value other than
// StructuredBodyCRC64 or a content length that is not a non-negative
// integer 400 InvalidHeaderValue. framed is the request's Content-Length
// (< 0: unknown); a known one that no message of that content length can
// have (header, trailer and 1 to 65535 segments of 18 bytes of framing
// each) is 400 InvalidHeaderValue naming x-ms-structured-content-length,
// before any of the body is read.
func StructuredRequest(h http.Header, framed int64) (content int64, ok bool, err error) {
	typ, hasType := header(h, HeaderStructuredBody)
	cl, hasLen := header(h, HeaderStructuredContentLength)
	switch {
	case !hasType && !hasLen:
		return 0, false, nil
	case !hasType:
		return 0, false, MissingHeader(HeaderStructuredBody)
	}
	if err := checkStructuredType(typ); err != nil {
		return 0, false, err
	}
	if !hasLen {
		return 0, false, MissingHeader(HeaderStructuredContentLength)
	}
	content, err = strconv.ParseInt(cl, 10, 64)
	if err != nil || content < 0 || content > math.MaxInt64-MaxStructuredOverhead {
		return 0, false, InvalidHeader(HeaderStructuredContentLength, cl)
	}
	if framed >= 0 {
		over := framed - content - smHeaderLen - smCRCLen
		if over < smSegHeaderLen+smCRCLen || over%(smSegHeaderLen+smCRCLen) != 0 || over/(smSegHeaderLen+smCRCLen) > math.MaxUint16 {
			return 0, false, InvalidHeader(HeaderStructuredContentLength, cl)
		}
	}
	return content, true, nil
}

// RefuseStructuredBody is 400 InvalidHeaderValue when a request whose body
// carries no content (a From-URL write, a clear, a create without data)
// sends x-ms-structured-body or x-ms-structured-content-length: they would
// otherwise be ignored.
func RefuseStructuredBody(h http.Header) error {
	for _, name := range []string{HeaderStructuredBody, HeaderStructuredContentLength} {
		if v, ok := header(h, name); ok {
			return InvalidHeader(name, v)
		}
	}
	return nil
}

// HasStructuredBody reports whether r announces a structured body, valid
// or not (a service's body cap grows by MaxStructuredOverhead for one).
func HasStructuredBody(r *http.Request) bool {
	_, ok := header(r.Header, HeaderStructuredBody)
	return ok
}

// StructuredResponse reads x-ms-structured-body on a read (Get Blob, Get
// File): true when the client asks for a structured body, 400
// InvalidHeaderValue for a value other than StructuredBodyCRC64.
func StructuredResponse(h http.Header) (bool, error) {
	v, ok := header(h, HeaderStructuredBody)
	if !ok {
		return false, nil
	}
	return true, checkStructuredType(v)
}

// AnswerStructured echoes x-ms-structured-body on a write that decoded a
// structured body, as Azure does (the SDKs check the echo).
func AnswerStructured(h http.Header, structured bool) {
	if structured {
		h.Set(HeaderStructuredBody, StructuredBodyCRC64)
	}
}

// StructuredReply frames a read's body of n bytes for a client that asked
// for a structured body: it sets x-ms-structured-body and
// x-ms-structured-content-length (n) and returns the message and its
// length, which the caller sends as Content-Length (a Content-Range stays
// the data's).
func StructuredReply(h http.Header, body io.Reader, n int64) (io.Reader, int64) {
	enc := NewStructuredEncoder(body, n)
	h.Set(HeaderStructuredBody, StructuredBodyCRC64)
	h.Set(HeaderStructuredContentLength, strconv.FormatInt(n, 10))
	return enc, enc.Len()
}

// StructuredReader decodes a structured body as it is read: Read yields
// the data, checks each segment's CRC-64 once its data is read and the
// message's at the end. It holds no more than the 13-byte header, however
// long the body. Everything that can be checked before the data is: the
// version, the flags, the message length against Content-Length and the
// declared content length, each segment's number and length. The Read
// that returns the last byte of data has also read and checked the last
// segment's CRC, the trailer and the end of the body, so a reader that
// stops at the content length it expects still sees every failure, and a
// store that commits only after reading without error keeps nothing of a
// bad message. Failures are *Error values (InvalidStructuredMessage,
// Crc64Mismatch) except the underlying reader's own (wrapped).
type StructuredReader struct {
	r           io.Reader
	framed      int64 // Content-Length; < 0: unknown
	content     int64 // x-ms-structured-content-length
	started     bool
	done        bool
	nseg, seg   uint16
	segLeft     int64
	contentLeft int64
	read        int64 // bytes of the message consumed
	msgLen      uint64
	segCRC      hash.Hash64
	msgCRC      hash.Hash64
	buf         [smHeaderLen]byte
	err         error
}

// NewStructuredReader decodes r, a message of framed bytes (< 0: unknown)
// holding content bytes of data.
func NewStructuredReader(r io.Reader, framed, content int64) *StructuredReader {
	return &StructuredReader{r: r, framed: framed, content: content, contentLeft: content,
		segCRC: NewCRC64(), msgCRC: NewCRC64()}
}

func (d *StructuredReader) fail(err error) error {
	d.err = err
	return err
}

// fill reads exactly n framing bytes into d.buf.
func (d *StructuredReader) fill(n int, what string) ([]byte, error) {
	b := d.buf[:n]
	k, err := io.ReadFull(d.r, b)
	d.read += int64(k)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e := InvalidStructuredMessage("the body ends inside the %s (%d of %d bytes, after %d bytes of the message)", what, k, n, d.read-int64(k))
		e.Err = fmt.Errorf("%w: %w", e.Err, io.ErrUnexpectedEOF)
		return nil, e
	default:
		return nil, fmt.Errorf("structured body: read %s: %w", what, err)
	}
}

func (d *StructuredReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if !d.started {
		d.started = true
		if err := d.readHeader(); err != nil {
			return 0, d.fail(err)
		}
		if err := d.advance(); err != nil {
			return 0, d.fail(err)
		}
	}
	if d.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > d.segLeft {
		p = p[:d.segLeft]
	}
	n, err := d.r.Read(p)
	d.segCRC.Write(p[:n])
	d.msgCRC.Write(p[:n])
	d.read += int64(n)
	d.segLeft -= int64(n)
	d.contentLeft -= int64(n)
	if d.segLeft == 0 {
		// Footer, then the next segment's header or the trailer and the
		// end of the body: checked before these bytes are handed out.
		if err := d.advance(); err != nil {
			return n, d.fail(err)
		}
		return n, nil
	}
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		e := InvalidStructuredMessage("the body ends inside segment %d (%d bytes missing)", d.seg, d.segLeft)
		e.Err = fmt.Errorf("%w: %w", e.Err, io.ErrUnexpectedEOF)
		return n, d.fail(e)
	default:
		return n, d.fail(fmt.Errorf("structured body: read segment %d: %w", d.seg, err))
	}
}

// readHeader reads and checks the message header.
func (d *StructuredReader) readHeader() error {
	b, err := d.fill(smHeaderLen, "message header")
	if err != nil {
		return err
	}
	if b[0] != smVersion {
		return InvalidStructuredMessage("message version %d is not supported (only 1)", b[0])
	}
	d.msgLen = binary.LittleEndian.Uint64(b[1:9])
	flags := binary.LittleEndian.Uint16(b[9:11])
	d.nseg = binary.LittleEndian.Uint16(b[11:13])
	if flags != smFlagCRC64 {
		return InvalidStructuredMessage("message flags 0x%04x: properties=crc64 means flags 0x0001 (CRC-64 trailers) and no other", flags)
	}
	if d.nseg == 0 {
		return InvalidStructuredMessage("the message has no segments")
	}
	if d.framed >= 0 && d.msgLen != uint64(d.framed) {
		return InvalidStructuredMessage("message length %d, Content-Length %d", d.msgLen, d.framed)
	}
	want := uint64(d.content) + smHeaderLen + smCRCLen + uint64(d.nseg)*(smSegHeaderLen+smCRCLen)
	if d.msgLen != want {
		return InvalidStructuredMessage("message length %d does not hold %d segments of x-ms-structured-content-length %d bytes (that is %d bytes)", d.msgLen, d.nseg, d.content, want)
	}
	return nil
}

// advance runs the framing between data: the footer of the segment just
// read (if any), then the next segment's header (zero-length segments
// included) or the trailer and the end of the body.
func (d *StructuredReader) advance() error {
	for d.segLeft == 0 {
		if d.seg > 0 {
			b, err := d.fill(smCRCLen, fmt.Sprintf("CRC-64 of segment %d", d.seg))
			if err != nil {
				return err
			}
			if got := d.segCRC.Sum64(); binary.LittleEndian.Uint64(b) != got {
				return crcMismatch(b, got, fmt.Sprintf("segment %d", d.seg))
			}
		}
		if d.seg == d.nseg {
			return d.finish()
		}
		b, err := d.fill(smSegHeaderLen, fmt.Sprintf("header of segment %d", d.seg+1))
		if err != nil {
			return err
		}
		num := binary.LittleEndian.Uint16(b[0:2])
		n := binary.LittleEndian.Uint64(b[2:10])
		if num != d.seg+1 {
			return InvalidStructuredMessage("segment %d is numbered %d", d.seg+1, num)
		}
		if n > uint64(d.contentLeft) {
			return InvalidStructuredMessage("segment %d declares %d bytes; only %d of x-ms-structured-content-length are left", num, n, d.contentLeft)
		}
		if num == d.nseg && n != uint64(d.contentLeft) {
			return InvalidStructuredMessage("last segment %d declares %d bytes; %d of x-ms-structured-content-length are left", num, n, d.contentLeft)
		}
		d.seg = num
		d.segLeft = int64(n)
		d.segCRC.Reset()
	}
	return nil
}

// finish reads and checks the trailer and that nothing follows it.
func (d *StructuredReader) finish() error {
	b, err := d.fill(smCRCLen, "message trailer")
	if err != nil {
		return err
	}
	if got := d.msgCRC.Sum64(); binary.LittleEndian.Uint64(b) != got {
		return crcMismatch(b, got, "message")
	}
	var one [1]byte
	n, err := io.ReadFull(d.r, one[:])
	if n > 0 {
		return InvalidStructuredMessage("bytes follow the message trailer (message length %d)", d.msgLen)
	}
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("structured body: read past the trailer: %w", err)
	}
	d.done = true
	return nil
}

// crcMismatch is 400 Crc64Mismatch for a segment's or the message's
// CRC-64, marked as a structured message failure.
func crcMismatch(want []byte, got uint64, what string) *Error {
	e := CRC64Mismatch(append([]byte(nil), want...), CRC64Bytes(got))
	e.Err = fmt.Errorf("%w: CRC-64 of the %s does not match", ErrStructuredMessage, what)
	return e
}

// Done reports whether the whole message was read and checked.
func (d *StructuredReader) Done() bool { return d.done }

// structuredSegments is how a message of content bytes is cut: segments
// of StructuredSegmentSize (more when 65535 would not hold the content),
// at least one.
func structuredSegments(content int64) (size int64, n int64) {
	size = StructuredSegmentSize
	if content > size*math.MaxUint16 {
		size = (content + math.MaxUint16 - 1) / math.MaxUint16
	}
	n = max((content+size-1)/size, 1)
	return size, n
}

// StructuredLength is the length of the message StructuredEncoder makes
// of content bytes.
func StructuredLength(content int64) int64 {
	_, n := structuredSegments(content)
	return content + smHeaderLen + smCRCLen + n*(smSegHeaderLen+smCRCLen)
}

// StructuredEncoder frames exactly content bytes of r as a structured
// message while they are read, computing the CRCs as they pass; it holds
// only the framing of the moment. A source that ends early is
// io.ErrUnexpectedEOF (the response must then be cut, not completed).
type StructuredEncoder struct {
	r       io.Reader
	content int64
	segSize int64
	nseg    int64
	seg     int64 // segments started
	off     int64 // data bytes read
	segLeft int64
	state   int
	pend    []byte
	buf     [smHeaderLen]byte
	segCRC  hash.Hash64
	msgCRC  hash.Hash64
}

const (
	encHeader = iota
	encSegment
	encData
	encTrailer
	encDone
)

// NewStructuredEncoder frames the content bytes r yields.
func NewStructuredEncoder(r io.Reader, content int64) *StructuredEncoder {
	size, n := structuredSegments(content)
	return &StructuredEncoder{r: r, content: content, segSize: size, nseg: n, segCRC: NewCRC64(), msgCRC: NewCRC64()}
}

// Len is the length of the whole message.
func (e *StructuredEncoder) Len() int64 { return StructuredLength(e.content) }

func (e *StructuredEncoder) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.pend) > 0 {
			k := copy(p[n:], e.pend)
			e.pend = e.pend[k:]
			n += k
			continue
		}
		switch e.state {
		case encHeader:
			b := e.buf[:smHeaderLen]
			b[0] = smVersion
			binary.LittleEndian.PutUint64(b[1:9], uint64(e.Len()))
			binary.LittleEndian.PutUint16(b[9:11], smFlagCRC64)
			binary.LittleEndian.PutUint16(b[11:13], uint16(e.nseg))
			e.pend, e.state = b, encSegment
		case encSegment:
			if e.seg == e.nseg {
				e.pend = binary.LittleEndian.AppendUint64(e.buf[:0], e.msgCRC.Sum64())
				e.state = encTrailer
				continue
			}
			e.seg++
			e.segLeft = min(e.segSize, e.content-e.off)
			e.segCRC.Reset()
			b := e.buf[:smSegHeaderLen]
			binary.LittleEndian.PutUint16(b[0:2], uint16(e.seg))
			binary.LittleEndian.PutUint64(b[2:10], uint64(e.segLeft))
			e.pend, e.state = b, encData
		case encData:
			if e.segLeft == 0 {
				e.pend = binary.LittleEndian.AppendUint64(e.buf[:0], e.segCRC.Sum64())
				e.state = encSegment
				continue
			}
			q := p[n:]
			if int64(len(q)) > e.segLeft {
				q = q[:e.segLeft]
			}
			k, err := e.r.Read(q)
			e.segCRC.Write(q[:k])
			e.msgCRC.Write(q[:k])
			n += k
			e.off += int64(k)
			e.segLeft -= int64(k)
			if err != nil && e.segLeft > 0 {
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("structured body: source ended %d bytes short: %w", e.content-e.off, io.ErrUnexpectedEOF)
				}
				return n, err
			}
			if k == 0 {
				return n, nil
			}
		case encTrailer:
			e.state = encDone
		case encDone:
			if n > 0 {
				return n, nil
			}
			return 0, io.EOF
		}
	}
	return n, nil
}
