package filerest_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/blobshare/blobshare/storagehttp"
)

func smData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>10)
	}
	return b
}

// smFrame is data framed by storagehttp's encoder.
func smFrame(t testing.TB, data []byte) []byte {
	t.Helper()
	b, err := io.ReadAll(storagehttp.NewStructuredEncoder(bytes.NewReader(data), int64(len(data))))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func smHeaders(content int, extra map[string]string) map[string]string {
	h := map[string]string{
		"x-ms-structured-body":           storagehttp.StructuredBodyCRC64,
		"x-ms-structured-content-length": strconv.Itoa(content),
	}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

type smCase struct {
	name   string
	msg    []byte
	hdr    map[string]string // over smHeaders(len(data))
	status int
	code   string
}

// smCorruptions are bad structured messages of data (and bad headers for
// a good one); each must be refused and store nothing.
func smCorruptions(t testing.TB, data []byte) []smCase {
	good := smFrame(t, data)
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x04
		return b
	}
	renumbered := append([]byte(nil), good...)
	binary.LittleEndian.PutUint16(renumbered[13:], 7)
	return []smCase{
		{"data flipped", flip(13 + 10 + len(data)/2), nil, 400, "Crc64Mismatch"},
		{"segment CRC flipped", flip(len(good) - 12), nil, 400, "Crc64Mismatch"},
		{"trailer flipped", flip(len(good) - 2), nil, 400, "Crc64Mismatch"},
		{"version 9", flip(0), nil, 400, "InvalidInput"},
		{"segment numbered 7", renumbered, nil, 400, "InvalidInput"},
		{"content length disagrees", good, map[string]string{"x-ms-structured-content-length": strconv.Itoa(len(data) + 1)}, 400, "InvalidHeaderValue"},
		{"properties=md5", good, map[string]string{"x-ms-structured-body": "XSM/1.0; properties=md5"}, 400, "InvalidHeaderValue"},
		{"no content length", good, map[string]string{"x-ms-structured-content-length": ""}, 400, "MissingRequiredHeader"},
		{"data sent unframed", data, nil, 400, "InvalidHeaderValue"},
	}
}

func (e *env) getRaw(t *testing.T, path string) []byte {
	t.Helper()
	r := e.do(t, "GET", path, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("get %s: %d %s", path, r.status, r.body)
	}
	return r.body
}

// TestRawStructuredPutRange: Put Range with a structured body stores the
// data (small bodies, read whole, and large ones, streamed), checks the
// range against x-ms-structured-content-length and echoes
// x-ms-structured-body; every corrupt or inconsistent message is 400 and
// leaves the file as it was.
func TestRawStructuredPutRange(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "smshare")
	const path = "/devstoreaccount1/smshare/f"
	old := smData(2 << 20)
	e.mustFileRaw(t, path, old)
	for _, size := range []int{1000, 1 << 20} { // below and above the small-body threshold (256 KiB)
		data := bytes.Repeat([]byte{0xa5}, size)
		copy(data, smData(size))
		rng := map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=4096-" + strconv.Itoa(4096+size-1)}
		for _, tc := range smCorruptions(t, data) {
			r := e.do(t, "PUT", path+"?comp=range", smHeaders(size, mergeHdr(rng, tc.hdr)), tc.msg)
			if r.status != tc.status || r.header.Get("x-ms-error-code") != tc.code {
				t.Errorf("%d bytes, %s: %d %s, want %d %s\n%s", size, tc.name, r.status, r.header.Get("x-ms-error-code"), tc.status, tc.code, r.body)
			}
			if got := e.getRaw(t, path); !bytes.Equal(got, old) {
				t.Fatalf("%d bytes, %s: the file changed", size, tc.name)
			}
		}
		r := e.do(t, "PUT", path+"?comp=range", smHeaders(size, rng), smFrame(t, data))
		if r.status != http.StatusCreated || r.header.Get("x-ms-structured-body") != storagehttp.StructuredBodyCRC64 {
			t.Fatalf("%d bytes: %d %q %s", size, r.status, r.header.Get("x-ms-structured-body"), r.body)
		}
		copy(old[4096:], data)
		if got := e.getRaw(t, path); !bytes.Equal(got, old) {
			t.Fatalf("%d bytes: the file does not hold the data", size)
		}
	}
	// 4 MiB of data (the Put Range maximum) framed is more than 4 MiB.
	data := smData(4 << 20)
	if r := e.do(t, "PUT", path, map[string]string{"x-ms-type": "file", "x-ms-content-length": strconv.Itoa(len(data))}, nil); r.status != http.StatusCreated {
		t.Fatalf("resize: %d %s", r.status, r.body)
	}
	r := e.do(t, "PUT", path+"?comp=range", smHeaders(len(data), map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-4194303"}), smFrame(t, data))
	if r.status != http.StatusCreated {
		t.Fatalf("4 MiB: %d %s", r.status, r.body)
	}
	if got := e.getRaw(t, path); !bytes.Equal(got, data) {
		t.Fatal("4 MiB: the file does not hold the data")
	}
	// Where no body carries data, the headers are refused.
	r = e.do(t, "PUT", path+"?comp=range", smHeaders(0, map[string]string{"x-ms-write": "clear", "x-ms-range": "bytes=0-511"}), nil)
	checkError(t, "clear", r, "PUT", 400, "InvalidHeaderValue")
	r = e.do(t, "PUT", path+"?comp=range", smHeaders(0, map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-511",
		"x-ms-copy-source": e.srv.URL + path, "x-ms-source-range": "bytes=0-511"}), nil)
	checkError(t, "Put Range From URL", r, "PUT", 400, "InvalidHeaderValue")
}

func mergeHdr(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// TestRawStructuredCreateFile: Create File with a body (API 2026-02-06)
// sent as a structured message stores the data; a bad message is refused
// before the file is created or replaced.
func TestRawStructuredCreateFile(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "smshare")
	const path = "/devstoreaccount1/smshare/c"
	old := []byte("an existing file")
	e.mustFileRaw(t, path, old)
	data := smData(3000)
	create := map[string]string{"x-ms-type": "file", "x-ms-content-length": "4096"}
	for _, tc := range smCorruptions(t, data) {
		r := e.do(t, "PUT", path, smHeaders(len(data), mergeHdr(create, tc.hdr)), tc.msg)
		if r.status != tc.status || r.header.Get("x-ms-error-code") != tc.code {
			t.Errorf("%s: %d %s, want %d %s\n%s", tc.name, r.status, r.header.Get("x-ms-error-code"), tc.status, tc.code, r.body)
		}
		if got := e.getRaw(t, path); !bytes.Equal(got, old) {
			t.Fatalf("%s: the file changed", tc.name)
		}
	}
	r := e.do(t, "PUT", path, smHeaders(len(data), create), smFrame(t, data))
	if r.status != http.StatusCreated || r.header.Get("x-ms-structured-body") != storagehttp.StructuredBodyCRC64 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	want := make([]byte, 4096)
	copy(want, data)
	if got := e.getRaw(t, path); !bytes.Equal(got, want) {
		t.Fatal("the created file does not hold the data")
	}
	// A message of no data is checked too.
	empty := smFrame(t, nil)
	empty[len(empty)-1] ^= 1
	r = e.do(t, "PUT", "/devstoreaccount1/smshare/empty", smHeaders(0, create), empty)
	checkError(t, "empty message, trailer flipped", r, "PUT", 400, "Crc64Mismatch")
	if r := e.do(t, "HEAD", "/devstoreaccount1/smshare/empty", nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("a refused Create File created the file: %d", r.status)
	}
}

// TestRawStructuredGetFile: Get File with x-ms-structured-body answers a
// message that decodes to the file's bytes (whole or ranged; Content-Range
// and x-ms-structured-content-length are the data's, Content-Length the
// message's); another value is 400.
func TestRawStructuredGetFile(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "smshare")
	const path = "/devstoreaccount1/smshare/g"
	data := smData(10_000)
	e.mustFileRaw(t, path, data)
	for _, tc := range []struct {
		rng      string
		from, to int
		status   int
		cr       string
	}{
		{"", 0, 10_000, 200, ""},
		{"bytes=10-4009", 10, 4010, 206, "bytes 10-4009/10000"},
		{"bytes=9999-", 9999, 10_000, 206, "bytes 9999-9999/10000"},
	} {
		hdr := map[string]string{"x-ms-structured-body": storagehttp.StructuredBodyCRC64}
		if tc.rng != "" {
			hdr["x-ms-range"] = tc.rng
		}
		r := e.do(t, "GET", path, hdr, nil)
		n := tc.to - tc.from
		if r.status != tc.status || r.header.Get("x-ms-structured-body") != storagehttp.StructuredBodyCRC64 ||
			r.header.Get("x-ms-structured-content-length") != strconv.Itoa(n) || r.header.Get("Content-Range") != tc.cr ||
			r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
			t.Fatalf("%q: %d %v", tc.rng, r.status, r.header)
		}
		got, err := io.ReadAll(storagehttp.NewStructuredReader(bytes.NewReader(r.body), int64(len(r.body)), int64(n)))
		if err != nil || !bytes.Equal(got, data[tc.from:tc.to]) {
			t.Fatalf("%q: decoded %d bytes, %v", tc.rng, len(got), err)
		}
	}
	r := e.do(t, "GET", path, map[string]string{"x-ms-structured-body": "XSM/1.0; properties=crc32"}, nil)
	checkError(t, "crc32", r, "GET", 400, "InvalidHeaderValue")
}

// TestJSStructured runs testdata/structured.js: the JS SDK
// (@azure/storage-file-share 12.31) with contentChecksumAlgorithm
// StorageCrc64 uploads ranges framed as structured messages and downloads
// asking for them, checking their CRC-64s.
func TestJSStructured(t *testing.T) { runJSScript(t, "structured.js") }
