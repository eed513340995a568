package filerest_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRawUnsupportedHeadersRefused: NFS file properties are refused as
// NFS shares are (400 InvalidHeaderValue), the source CRC-64 conditions of
// Put Range From URL with 400 UnsupportedHeader; the header is named and
// nothing is created or written.
func TestRawUnsupportedHeadersRefused(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "unsupported")
	const src = "/devstoreaccount1/unsupported/src"
	e.mustFileRaw(t, src, []byte(strings.Repeat("s", 512)))
	e.mustFileRaw(t, "/devstoreaccount1/unsupported/dst", make([]byte, 512))
	for _, tc := range []struct {
		what, path string
		hdr        map[string]string
		code       string
		header     string
	}{
		{"create with a mode", "/devstoreaccount1/unsupported/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0", "x-ms-mode": "0644"}, "InvalidHeaderValue", "x-ms-mode"},
		{"create with an owner", "/devstoreaccount1/unsupported/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0", "x-ms-owner": "0"}, "InvalidHeaderValue", "x-ms-owner"},
		{"create an NFS file type", "/devstoreaccount1/unsupported/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "0", "x-ms-file-file-type": "Regular"}, "InvalidHeaderValue", "x-ms-file-file-type"},
		{"directory with a group", "/devstoreaccount1/unsupported/d?restype=directory", map[string]string{"x-ms-group": "0"}, "InvalidHeaderValue", "x-ms-group"},
		{"copy with a mode copy mode", "/devstoreaccount1/unsupported/f", map[string]string{"x-ms-copy-source": e.srv.URL + src, "x-ms-file-mode-copy-mode": "source"}, "InvalidHeaderValue", "x-ms-file-mode-copy-mode"},
		{"range from URL if CRC-64 matches", "/devstoreaccount1/unsupported/dst?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-511",
			"x-ms-copy-source": e.srv.URL + src, "x-ms-source-range": "bytes=0-511", "x-ms-source-if-match-crc64": "AAAAAAAAAAA="}, "UnsupportedHeader", "x-ms-source-if-match-crc64"},
		{"range from URL if CRC-64 does not match", "/devstoreaccount1/unsupported/dst?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-511",
			"x-ms-copy-source": e.srv.URL + src, "x-ms-source-range": "bytes=0-511", "x-ms-source-if-none-match-crc64": "AAAAAAAAAAA="}, "UnsupportedHeader", "x-ms-source-if-none-match-crc64"},
	} {
		r := e.do(t, "PUT", tc.path, tc.hdr, nil)
		doc := checkError(t, tc.what, r, "PUT", http.StatusBadRequest, tc.code)
		if doc.HeaderName != tc.header {
			t.Errorf("%s: header %q named", tc.what, doc.HeaderName)
		}
	}
	for _, p := range []string{"/devstoreaccount1/unsupported/f", "/devstoreaccount1/unsupported/d?restype=directory"} {
		if r := e.do(t, "HEAD", p, nil, nil); r.status != http.StatusNotFound {
			t.Errorf("%s exists after refused requests: %d", p, r.status)
		}
	}
	if got := e.getRaw(t, "/devstoreaccount1/unsupported/dst"); strings.Contains(string(got), "s") {
		t.Error("a refused Put Range From URL wrote")
	}
}
