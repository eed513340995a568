package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// azureCRC64 is Azure Storage's CRC-64 of b, as the SDKs compute it.
func azureCRC64(b []byte) uint64 {
	return crc64.Checksum(b, crc64.MakeTable(0x9A6C9329AC4BC9B5))
}

// TestTransactionalCRC64: Put Blob, Put Block, Append Block and Put Page
// with x-ms-content-crc64 (the SDK's TransactionalValidation) check it:
// the right value is answered back in x-ms-content-crc64, a wrong one is
// 400 Crc64Mismatch and writes nothing. Get Blob with
// x-ms-range-get-content-crc64 answers the range's CRC-64.
func TestTransactionalCRC64(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "crc", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("crc")
	data := bytes.Repeat([]byte("crc64 "), 100_000)[:512*1000]
	good := blob.TransferValidationTypeCRC64(azureCRC64(data))
	bad := blob.TransferValidationTypeCRC64(azureCRC64(data) + 1)
	body := func() io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(data)) }
	want := base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, azureCRC64(data)))

	bb := cc.NewBlockBlobClient("put")
	if _, err := bb.Upload(ctx, body(), &blockblob.UploadOptions{TransactionalValidation: bad}); code(err) != "Crc64Mismatch" {
		t.Errorf("Put Blob with a wrong CRC-64: %v", err)
	}
	if _, err := bb.GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a Put Blob refused for its CRC-64 left a blob: %v", err)
	}
	if r, err := bb.Upload(ctx, body(), &blockblob.UploadOptions{TransactionalValidation: good}); err != nil || base64.StdEncoding.EncodeToString(r.ContentCRC64) != want {
		t.Errorf("Put Blob with the right CRC-64: %v, answered %x", err, r.ContentCRC64)
	}

	blocks := cc.NewBlockBlobClient("blocks")
	if _, err := blocks.StageBlock(ctx, blockID(0), body(), &blockblob.StageBlockOptions{TransactionalValidation: bad}); code(err) != "Crc64Mismatch" {
		t.Errorf("Put Block with a wrong CRC-64: %v", err)
	}
	if r, err := blocks.StageBlock(ctx, blockID(1), body(), &blockblob.StageBlockOptions{TransactionalValidation: good}); err != nil || base64.StdEncoding.EncodeToString(r.ContentCRC64) != want {
		t.Errorf("Put Block with the right CRC-64: %v, answered %x", err, r.ContentCRC64)
	}
	if l, err := blocks.GetBlockList(ctx, blockblob.BlockListTypeUncommitted, nil); err != nil || len(l.UncommittedBlocks) != 1 || *l.UncommittedBlocks[0].Name != blockID(1) {
		t.Errorf("uncommitted blocks after one refused and one staged: %v %+v", err, l.UncommittedBlocks)
	}

	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, body(), &appendblob.AppendBlockOptions{TransactionalValidation: bad}); code(err) != "Crc64Mismatch" {
		t.Errorf("Append Block with a wrong CRC-64: %v", err)
	}
	if _, err := ab.AppendBlock(ctx, body(), &appendblob.AppendBlockOptions{TransactionalValidation: good}); err != nil {
		t.Errorf("Append Block with the right CRC-64: %v", err)
	}
	if p, err := ab.GetProperties(ctx, nil); err != nil || *p.ContentLength != int64(len(data)) {
		t.Errorf("append blob after one refused and one accepted append: %v, %d bytes", err, *p.ContentLength)
	}

	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.UploadPages(ctx, body(), blob.HTTPRange{Count: int64(len(data))}, &pageblob.UploadPagesOptions{TransactionalValidation: bad}); code(err) != "Crc64Mismatch" {
		t.Errorf("Put Page with a wrong CRC-64: %v", err)
	}
	if got := download(t, pb.BlobClient(), nil); !bytes.Equal(got, make([]byte, len(data))) {
		t.Errorf("a Put Page refused for its CRC-64 wrote pages")
	}
	if _, err := pb.UploadPages(ctx, body(), blob.HTTPRange{Count: int64(len(data))}, &pageblob.UploadPagesOptions{TransactionalValidation: good}); err != nil {
		t.Errorf("Put Page with the right CRC-64: %v", err)
	}

	// From URL: x-ms-source-content-crc64 is checked against the bytes
	// read from the source, which the store reads only up to the length
	// it expects (Put Page From URL).
	srcURL := withReadSAS(t, cc, cc.NewBlobClient("put").URL())
	wrongSrc := blob.SourceContentValidationTypeCRC64(binary.LittleEndian.AppendUint64(nil, azureCRC64(data[:512])+1))
	rightSrc := blob.SourceContentValidationTypeCRC64(binary.LittleEndian.AppendUint64(nil, azureCRC64(data[:512])))
	pb2 := cc.NewPageBlobClient("disk2")
	if _, err := pb2.Create(ctx, 512, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pb2.UploadPagesFromURL(ctx, srcURL, 0, 0, 512, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: wrongSrc}); code(err) != "Crc64Mismatch" {
		t.Errorf("Put Page From URL with a wrong source CRC-64: %v", err)
	}
	if got := download(t, pb2.BlobClient(), nil); !bytes.Equal(got, make([]byte, 512)) {
		t.Errorf("a Put Page From URL refused for its CRC-64 wrote pages")
	}
	if _, err := pb2.UploadPagesFromURL(ctx, srcURL, 0, 0, 512, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: rightSrc}); err != nil {
		t.Errorf("Put Page From URL with the right source CRC-64: %v", err)
	}
	fromURL := cc.NewBlockBlobClient("fromurl")
	if _, err := fromURL.StageBlockFromURL(ctx, blockID(0), srcURL, &blockblob.StageBlockFromURLOptions{
		Range: blob.HTTPRange{Count: 512}, SourceContentValidation: wrongSrc}); code(err) != "Crc64Mismatch" {
		t.Errorf("Put Block From URL with a wrong source CRC-64: %v", err)
	}
	if _, err := fromURL.StageBlockFromURL(ctx, blockID(0), srcURL, &blockblob.StageBlockFromURLOptions{
		Range: blob.HTTPRange{Count: 512}, SourceContentValidation: rightSrc}); err != nil {
		t.Errorf("Put Block From URL with the right source CRC-64: %v", err)
	}

	// Content-MD5 and x-ms-content-crc64 together: 400.
	md5sum := md5.Sum(data)
	if _, err := cc.NewBlockBlobClient("both").StageBlock(ctx, blockID(0), body(), &blockblob.StageBlockOptions{
		TransactionalValidation: good}); err != nil {
		t.Fatal(err)
	}
	if st, got, _ := rawRequest(t, e, "PUT", "/crc/both?comp=block&blockid="+blockID(1), map[string]string{
		"Content-MD5": base64.StdEncoding.EncodeToString(md5sum[:]), "x-ms-content-crc64": want}, string(data)); st != 400 || got != "InvalidHeaderValue" {
		t.Errorf("Put Block with Content-MD5 and x-ms-content-crc64: %d %s, want 400 InvalidHeaderValue", st, got)
	}

	req := map[string]string{"x-ms-range": "bytes=0-511", "x-ms-range-get-content-crc64": "true"}
	st, hdr := rawRequestHeaders(t, e, "GET", "/crc/put", req)
	if wantRange := base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint64(nil, azureCRC64(data[:512]))); st != 206 || hdr.Get("x-ms-content-crc64") != wantRange {
		t.Errorf("Get Blob with x-ms-range-get-content-crc64: %d, CRC-64 %q, want %q", st, hdr.Get("x-ms-content-crc64"), wantRange)
	}
	if st, code, _ := rawRequest(t, e, "GET", "/crc/put", map[string]string{"x-ms-range-get-content-crc64": "true"}, ""); st != 400 || code != "OutOfRangeInput" {
		t.Errorf("x-ms-range-get-content-crc64 without a range: %d %s", st, code)
	}
}
