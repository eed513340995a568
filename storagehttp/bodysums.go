package storagehttp

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"hash"
	"io"
	"net/http"
)

// CodeMD5Mismatch is 400 for a Content-MD5 that does not match the body.
const CodeMD5Mismatch = "Md5Mismatch"

// MD5Mismatch is 400 Md5Mismatch naming both values.
func MD5Mismatch(want, got []byte) *Error {
	return NewError(http.StatusBadRequest, CodeMD5Mismatch,
		"The MD5 value specified in the request did not match with the MD5 value calculated by the server.",
		Detail{Name: "UserSpecifiedMd5", Value: base64.StdEncoding.EncodeToString(want)},
		Detail{Name: "ServerCalculatedMd5", Value: base64.StdEncoding.EncodeToString(got)})
}

// BodySums checks the transactional Content-MD5 and x-ms-content-crc64 of
// a request body that is not content (a Put Block List or Set Blob Tags
// document, whose REST pages give both headers as "used to verify the
// integrity of the request content during transport"): it hashes what is
// read through it, and Verify compares once the body is read to its end.
type BodySums struct {
	r       io.Reader
	md5     hash.Hash
	wantMD5 []byte
	crc     hash.Hash64
	wantCRC []byte
	n       int64 // bytes read
}

// NewBodySums reads the two headers (a malformed value, or both at once,
// is 400 InvalidHeaderValue) and wraps r.
func NewBodySums(h http.Header, r io.Reader) (*BodySums, error) {
	b := &BodySums{r: r}
	if v := h.Get("Content-MD5"); v != "" {
		sum, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(sum) != md5.Size {
			return nil, InvalidHeader("Content-MD5", v)
		}
		b.md5, b.wantMD5 = md5.New(), sum
	}
	crc, err := CRC64Header(h, "x-ms-content-crc64")
	if err != nil {
		return nil, err
	}
	if crc != nil {
		if b.md5 != nil { // "If both … are present, the request fails with a 400"
			return nil, InvalidHeader("x-ms-content-crc64", h.Get("x-ms-content-crc64"))
		}
		b.crc, b.wantCRC = NewCRC64(), crc
	}
	return b, nil
}

func (b *BodySums) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.md5 != nil {
		b.md5.Write(p[:n])
	}
	if b.crc != nil {
		b.crc.Write(p[:n])
	}
	return n, err
}

// Verify reads what is left of the body, up to limit bytes in all, and
// checks the sums: 400 Md5Mismatch or Crc64Mismatch. A body of limit bytes
// or more (over the caller's cap, which answers it) is not judged.
func (b *BodySums) Verify(limit int64) error {
	if b.md5 == nil && b.crc == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(b, max(limit-b.n, 0))); err != nil {
		return err
	}
	if b.n >= limit {
		return nil
	}
	if b.md5 != nil {
		if got := b.md5.Sum(nil); !bytes.Equal(got, b.wantMD5) {
			return MD5Mismatch(b.wantMD5, got)
		}
	}
	if b.crc != nil {
		if got := CRC64Bytes(b.crc.Sum64()); !bytes.Equal(got, b.wantCRC) {
			return CRC64Mismatch(b.wantCRC, got)
		}
	}
	return nil
}

// CRC64 is the body's CRC-64 in wire order when the request sent
// x-ms-content-crc64 (to answer it back), else nil.
func (b *BodySums) CRC64() []byte {
	if b.crc == nil {
		return nil
	}
	return CRC64Bytes(b.crc.Sum64())
}
