package filerest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
)

// azureCRC64 is the CRC-64 the Azure SDKs compute (their table's
// polynomial), as the SDK user would.
func azureCRC64(b []byte) uint64 { return crc64.Checksum(b, crc64.MakeTable(0x9A6C9329AC4BC9B5)) }

func crcB64(v uint64) string {
	return base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, v))
}

func TestPutRangeFromURLSourceCRC64(t *testing.T) {
	e := newEnv(t)
	e.mustShare("crc")
	data := []byte("the source range to be checked")
	src := e.mustFile("crc", "src", data)
	dst := e.mustFile("crc", "dst", make([]byte, len(data)))
	u, err := src.GetSASURL(sas.FilePermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(data))
	_, err = dst.UploadRangeFromURL(ctxBG, u, 0, 0, n, &file.UploadRangeFromURLOptions{
		SourceContentValidation: file.SourceContentValidationTypeCRC64(azureCRC64(data) ^ 1)})
	wantCode(t, "wrong source CRC-64", err, "Crc64Mismatch")
	if got, _ := download(t, dst); !bytes.Equal(got, make([]byte, len(data))) {
		t.Fatalf("a refused copy wrote %q", got)
	}
	resp, err := dst.UploadRangeFromURL(ctxBG, u, 0, 0, n, &file.UploadRangeFromURLOptions{
		SourceContentValidation: file.SourceContentValidationTypeCRC64(azureCRC64(data))})
	if err != nil {
		t.Fatalf("right source CRC-64: %v", err)
	}
	if binary.LittleEndian.Uint64(resp.XMSContentCRC64) != azureCRC64(data) {
		t.Fatalf("x-ms-content-crc64 %x", resp.XMSContentCRC64)
	}
	if got, _ := download(t, dst); !bytes.Equal(got, data) {
		t.Fatalf("copied %q", got)
	}
}

func TestPutRangeContentCRC64(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "crc")
	e.mustFileRaw(t, "/devstoreaccount1/crc/f", make([]byte, 8))
	body := []byte("12345678")
	put := func(crc string) rawResp {
		return e.do(t, "PUT", "/devstoreaccount1/crc/f?comp=range", map[string]string{
			"x-ms-write": "update", "x-ms-range": "bytes=0-7", "Content-Length": strconv.Itoa(len(body)),
			"x-ms-content-crc64": crc}, body)
	}
	r := put(crcB64(azureCRC64(body) + 1))
	checkError(t, "wrong CRC-64", r, "PUT", 400, "Crc64Mismatch")
	if got := e.do(t, "GET", "/devstoreaccount1/crc/f", nil, nil); !bytes.Equal(got.body, make([]byte, 8)) {
		t.Fatalf("refused range wrote %q", got.body)
	}
	r = put("not base64!")
	checkError(t, "malformed CRC-64", r, "PUT", 400, "InvalidHeaderValue")
	r = put(crcB64(azureCRC64(body)))
	if r.status != 201 || r.header.Get("x-ms-content-crc64") != crcB64(azureCRC64(body)) {
		t.Fatalf("right CRC-64: %d %q %s", r.status, r.header.Get("x-ms-content-crc64"), r.body)
	}
	if got := e.do(t, "GET", "/devstoreaccount1/crc/f", nil, nil); !bytes.Equal(got.body, body) {
		t.Fatalf("range wrote %q", got.body)
	}
}
