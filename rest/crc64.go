package rest

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
)

// storageCRC64 is the CRC-64 Azure Storage uses for x-ms-content-crc64
// and x-ms-source-content-crc64 (polynomial 0x9A6C9329AC4BC9B5, the
// Azure SDKs' table); values travel as base64 of the 8 bytes, least
// significant first. A read-only table, built once.
var storageCRC64 = crc64.MakeTable(0x9A6C9329AC4BC9B5)

// crc64Header decodes a CRC-64 header (nil when absent; 400 when not 8
// base64 bytes).
func crc64Header(h http.Header, name string) ([]byte, error) {
	v := h.Get(name)
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 8 {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return b, nil
}

// crc64Bytes is a CRC-64 in its wire byte order.
func crc64Bytes(sum uint64) []byte { return binary.LittleEndian.AppendUint64(nil, sum) }

func errCRC64Mismatch(want, got []byte) *Error {
	return storagehttp.NewError(http.StatusBadRequest, "Crc64Mismatch",
		"The CRC64 value specified in the request did not match with the CRC64 value calculated by the server.",
		Detail{Name: "UserSpecifiedCrc64", Value: base64.StdEncoding.EncodeToString(want)},
		Detail{Name: "ServerCalculatedCrc64", Value: base64.StdEncoding.EncodeToString(got)})
}
