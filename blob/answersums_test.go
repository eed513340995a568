package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
)

// TestWriteAnswersSums: every write of content answers the CRC-64 Azure
// computed (x-ms-content-crc64) and, when the request sent one, the MD5
// it checked (Content-MD5): Put Blob, Put Block, Append Block, Put Page,
// their From URL forms and Copy Blob From URL, as the azblob live tests
// and the SDK recordings show. A wrong MD5 (Content-MD5 on Put Page, the
// source MD5 of a From URL write) is 400 Md5Mismatch and writes nothing.
// Create Append Blob stores no MD5 (Azure stores none without
// x-ms-blob-content-md5).
func TestWriteAnswersSums(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "sums", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("sums")
	data := bytes.Repeat([]byte("answer sums "), 100)[:1024]
	crc := binary.LittleEndian.AppendUint64(nil, azureCRC64(data))
	sum := md5.Sum(data)
	wrong := md5.Sum([]byte("other"))

	type answer struct {
		name     string
		err      error
		md5, crc []byte
		wantMD5  []byte
	}
	var got []answer

	bb := cc.NewBlockBlobClient("put")
	up, err := bb.Upload(ctx, rsc(data), nil)
	got = append(got, answer{"Put Blob", err, up.ContentMD5, up.ContentCRC64, sum[:]})

	sb, err := bb.StageBlock(ctx, blockID(0), rsc(data), nil)
	got = append(got, answer{"Put Block", err, sb.ContentMD5, sb.ContentCRC64, nil})
	sb, err = bb.StageBlock(ctx, blockID(1), rsc(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
	got = append(got, answer{"Put Block with Content-MD5", err, sb.ContentMD5, sb.ContentCRC64, sum[:]})

	ab := cc.NewAppendBlobClient("log")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Create Append Blob stores no Content-MD5 (azblob's
	// TestBlobCreateAppendHTTPHeaders, recorded against Azure).
	if p, err := ab.GetProperties(ctx, nil); err != nil || p.ContentMD5 != nil {
		t.Errorf("Create Append Blob: %v, Content-MD5 %x, want none", err, p.ContentMD5)
	}
	ar, err := ab.AppendBlock(ctx, rsc(data), nil)
	got = append(got, answer{"Append Block", err, ar.ContentMD5, ar.ContentCRC64, nil})
	ar, err = ab.AppendBlock(ctx, rsc(data), &appendblob.AppendBlockOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
	got = append(got, answer{"Append Block with Content-MD5", err, ar.ContentMD5, ar.ContentCRC64, sum[:]})

	pb := cc.NewPageBlobClient("disk")
	if _, err := pb.Create(ctx, 2048, nil); err != nil {
		t.Fatal(err)
	}
	pr, err := pb.UploadPages(ctx, rsc(data), blob.HTTPRange{Count: 1024}, nil)
	got = append(got, answer{"Put Page", err, pr.ContentMD5, pr.ContentCRC64, nil})
	pr, err = pb.UploadPages(ctx, rsc(data), blob.HTTPRange{Offset: 1024, Count: 1024}, &pageblob.UploadPagesOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
	got = append(got, answer{"Put Page with Content-MD5", err, pr.ContentMD5, pr.ContentCRC64, sum[:]})

	src := withReadSAS(t, cc, bb.URL())
	fb := cc.NewBlockBlobClient("fromurl")
	fr, err := fb.StageBlockFromURL(ctx, blockID(0), src, nil)
	got = append(got, answer{"Put Block From URL", err, fr.ContentMD5, fr.ContentCRC64, nil})
	fr, err = fb.StageBlockFromURL(ctx, blockID(1), src, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(sum[:])})
	got = append(got, answer{"Put Block From URL with x-ms-source-content-md5", err, fr.ContentMD5, fr.ContentCRC64, sum[:]})

	ab2 := cc.NewAppendBlobClient("log2")
	if _, err := ab2.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	afr, err := ab2.AppendBlockFromURL(ctx, src, &appendblob.AppendBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(sum[:])})
	got = append(got, answer{"Append Block From URL with x-ms-source-content-md5", err, afr.ContentMD5, afr.ContentCRC64, sum[:]})

	pb2 := cc.NewPageBlobClient("disk2")
	if _, err := pb2.Create(ctx, 1024, nil); err != nil {
		t.Fatal(err)
	}
	pfr, err := pb2.UploadPagesFromURL(ctx, src, 0, 0, 1024, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(sum[:])})
	got = append(got, answer{"Put Page From URL with x-ms-source-content-md5", err, pfr.ContentMD5, pfr.ContentCRC64, sum[:]})

	cr, err := cc.NewBlobClient("copy").CopyFromURL(ctx, src, nil)
	got = append(got, answer{"Copy Blob From URL", err, cr.ContentMD5, cr.ContentCRC64, nil})
	cr, err = cc.NewBlobClient("copy2").CopyFromURL(ctx, src, &blob.CopyFromURLOptions{SourceContentMD5: sum[:]})
	got = append(got, answer{"Copy Blob From URL with x-ms-source-content-md5", err, cr.ContentMD5, cr.ContentCRC64, sum[:]})

	pub, err := cc.NewBlockBlobClient("putfromurl").UploadBlobFromURL(ctx, src, nil)
	got = append(got, answer{"Put Blob From URL", err, pub.ContentMD5, pub.ContentCRC64, sum[:]})

	for _, a := range got {
		if a.err != nil {
			t.Errorf("%s: %v", a.name, a.err)
			continue
		}
		if !bytes.Equal(a.crc, crc) {
			t.Errorf("%s: x-ms-content-crc64 %x, want %x", a.name, a.crc, crc)
		}
		if !bytes.Equal(a.md5, a.wantMD5) {
			t.Errorf("%s: Content-MD5 %x, want %x", a.name, a.md5, a.wantMD5)
		}
	}

	// A wrong MD5 is refused and writes nothing.
	if _, err := pb.UploadPages(ctx, rsc(bytes.Repeat([]byte{7}, 512)), blob.HTTPRange{Count: 512}, &pageblob.UploadPagesOptions{TransactionalValidation: blob.TransferValidationTypeMD5(wrong[:])}); code(err) != "Md5Mismatch" {
		t.Errorf("Put Page with a wrong Content-MD5: %v, want Md5Mismatch", err)
	}
	if b := download(t, pb.BlobClient(), nil); !bytes.Equal(b[:1024], data) {
		t.Errorf("a Put Page refused for its MD5 wrote pages")
	}
	if _, err := fb.StageBlockFromURL(ctx, blockID(2), src, &blockblob.StageBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(wrong[:])}); code(err) != "Md5Mismatch" {
		t.Errorf("Put Block From URL with a wrong source MD5: %v, want Md5Mismatch", err)
	}
	if _, err := ab2.AppendBlockFromURL(ctx, src, &appendblob.AppendBlockFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(wrong[:])}); code(err) != "Md5Mismatch" {
		t.Errorf("Append Block From URL with a wrong source MD5: %v, want Md5Mismatch", err)
	}
	if _, err := pb2.UploadPagesFromURL(ctx, src, 0, 0, 1024, &pageblob.UploadPagesFromURLOptions{SourceContentValidation: blob.SourceContentValidationTypeMD5(wrong[:])}); code(err) != "Md5Mismatch" {
		t.Errorf("Put Page From URL with a wrong source MD5: %v, want Md5Mismatch", err)
	}
	if _, err := cc.NewBlobClient("copy3").CopyFromURL(ctx, src, &blob.CopyFromURLOptions{SourceContentMD5: wrong[:]}); code(err) != "Md5Mismatch" {
		t.Errorf("Copy Blob From URL with a wrong source MD5: %v, want Md5Mismatch", err)
	}
	if _, err := cc.NewBlobClient("copy3").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("a Copy Blob From URL refused for its MD5 left a blob: %v", err)
	}
}
