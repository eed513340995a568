package storagehttp

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBodySums: the transactional Content-MD5 and x-ms-content-crc64 of a
// document body are checked over the whole body (what the parser left
// unread included); malformed values and both at once are refused; a body
// over the cap is left to the caller's own error.
func TestBodySums(t *testing.T) {
	body := "<Tags><TagSet/></Tags>"
	sum := md5.Sum([]byte(body))
	crc := NewCRC64()
	crc.Write([]byte(body))
	goodMD5 := base64.StdEncoding.EncodeToString(sum[:])
	goodCRC := base64.StdEncoding.EncodeToString(CRC64Bytes(crc.Sum64()))
	for _, tc := range []struct {
		name, md5, crc string
		limit          int64
		newCode, code  string
	}{
		{"none", "", "", 100, "", ""},
		{"good md5", goodMD5, "", 100, "", ""},
		{"good crc", "", goodCRC, 100, "", ""},
		{"wrong md5", base64.StdEncoding.EncodeToString(make([]byte, 16)), "", 100, "", CodeMD5Mismatch},
		{"wrong crc", "", "AAAAAAAAAAA=", 100, "", "Crc64Mismatch"},
		{"malformed md5", "abc", "", 100, CodeInvalidHeaderValue, ""},
		{"both", goodMD5, goodCRC, 100, CodeInvalidHeaderValue, ""},
		{"over the cap", "AAAAAAAAAAAAAAAAAAAAAA==", "", 10, "", ""},
	} {
		h := http.Header{}
		if tc.md5 != "" {
			h.Set("Content-MD5", tc.md5)
		}
		if tc.crc != "" {
			h.Set("x-ms-content-crc64", tc.crc)
		}
		b, err := NewBodySums(h, strings.NewReader(body))
		var e *Error
		if tc.newCode != "" {
			if !errors.As(err, &e) || e.Code != tc.newCode {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.newCode)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, _ = io.ReadFull(b, make([]byte, 5)) // a parser that stopped early
		err = b.Verify(tc.limit)
		if tc.code == "" && err != nil || tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
}
