package storagehttp

import (
	"encoding/base64"
	"encoding/binary"
	"hash"
	"hash/crc64"
	"io"
	"net/http"
)

// crc64Table is the CRC-64 Azure Storage uses for x-ms-content-crc64 and
// x-ms-source-content-crc64 (polynomial 0x9A6C9329AC4BC9B5, the Azure
// SDKs' table); values travel as base64 of the 8 bytes, least significant
// first. A read-only table, built once.
var crc64Table = crc64.MakeTable(0x9A6C9329AC4BC9B5)

// NewCRC64 returns a hash computing Azure Storage's CRC-64.
func NewCRC64() hash.Hash64 { return crc64.New(crc64Table) }

// CRC64Header decodes a CRC-64 header (nil when absent; 400
// InvalidHeaderValue when not 8 base64 bytes).
func CRC64Header(h http.Header, name string) ([]byte, error) {
	v := h.Get(name)
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 8 {
		return nil, InvalidHeader(name, v)
	}
	return b, nil
}

// CRC64Bytes is a CRC-64 in its wire byte order.
func CRC64Bytes(sum uint64) []byte { return binary.LittleEndian.AppendUint64(nil, sum) }

// CRC64Mismatch is 400 Crc64Mismatch naming both values, in the elements
// Azure answers them in (UserSpecifiedCrc, ServerCalculatedCrc, as the JS
// SDK's recordings of Stage Block, Append Block and Upload Pages with a
// wrong x-ms-content-crc64 show).
func CRC64Mismatch(want, got []byte) *Error {
	return NewError(http.StatusBadRequest, "Crc64Mismatch",
		"The CRC64 value specified in the request did not match with the CRC64 value calculated by the server.",
		Detail{Name: "UserSpecifiedCrc", Value: base64.StdEncoding.EncodeToString(want)},
		Detail{Name: "ServerCalculatedCrc", Value: base64.StdEncoding.EncodeToString(got)})
}

// CRC64Reader computes the CRC-64 of what is read through it and turns
// the end of the data into a Crc64Mismatch error if it differs from the
// value the request sent: the Read that returns the last
// byte (when the length is known) or io.EOF. So a store that stages what
// it reads, and commits only after reading it all without error, keeps
// nothing of a body that does not match its x-ms-content-crc64, even
// when it stops reading at the length it expects.
type CRC64Reader struct {
	r    io.Reader
	h    hash.Hash64
	want []byte
	left int64 // bytes until the known end; < 0: unknown
	done bool  // checked
}

// NewCRC64Reader reads r, whose length is size (< 0: unknown), checking
// it against want (nil: nothing to check, the sum is only computed, for
// the x-ms-content-crc64 Azure answers on every write of content).
func NewCRC64Reader(r io.Reader, want []byte, size int64) *CRC64Reader {
	return &CRC64Reader{r: r, h: NewCRC64(), want: want, left: size}
}

func (c *CRC64Reader) Read(p []byte) (int, error) {
	if c.left >= 0 && int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if c.left >= 0 {
		c.left -= int64(n)
	}
	if (c.left == 0 || err == io.EOF) && !c.done {
		c.done = true
		if got := c.Sum(); c.want != nil && string(got) != string(c.want) {
			return n, CRC64Mismatch(c.want, got)
		}
	}
	if c.left == 0 && err == nil {
		err = io.EOF
	}
	return n, err
}

// Sum is the CRC-64 of what has been read, in wire byte order.
func (c *CRC64Reader) Sum() []byte { return CRC64Bytes(c.h.Sum64()) }
