package blob_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/blobshare/blobshare/storagehttp"
)

func smData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>9)
	}
	return b
}

// smValidation is the azblob option that frames uploads as structured
// messages (segments of seg bytes; 0: the SDK's 4 MiB) and asks for
// structured downloads.
func smValidation(seg int) blob.TransferValidationType {
	return blob.TransferValidationTypeComputeStructuredMessageCRC64(seg)
}

// TestSDKStructuredMessage drives every write and read the azblob SDK
// frames as a structured message (TransferValidationTypeComputeStructured
// MessageCRC64, azblob v1.8.3): Upload (Put Blob), Stage Block and
// UploadBuffer (Put Block), Append Block, Upload Pages (Put Page), and
// DownloadStream / DownloadBuffer asking for structured bodies. What is
// stored is the data, never the framing (a plain download shows it), and
// every write answers x-ms-structured-body, as Azure does.
func TestSDKStructuredMessage(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "smc", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("smc")
	plain := func(name string) []byte {
		t.Helper()
		r, err := cc.NewBlobClient(name).DownloadStream(ctx, nil)
		if err != nil {
			t.Fatalf("download %s: %v", name, err)
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	echoed := func(what string, v *string) {
		t.Helper()
		if v == nil || *v != storagehttp.StructuredBodyCRC64 {
			t.Errorf("%s: x-ms-structured-body answered %v", what, v)
		}
	}

	for _, tc := range []struct {
		name string
		size int
		seg  int
	}{{"empty", 0, 0}, {"small", 4096, 0}, {"segments", 10_000, 1024}} {
		data := smData(tc.size)
		bb := cc.NewBlockBlobClient("upload-" + tc.name)
		resp, err := bb.Upload(ctx, rsc(data), &blockblob.UploadOptions{TransactionalValidation: smValidation(tc.seg)})
		if err != nil {
			t.Fatalf("%s: upload: %v", tc.name, err)
		}
		echoed("Put Blob", resp.StructuredBodyType)
		if got := plain("upload-" + tc.name); !bytes.Equal(got, data) {
			t.Fatalf("%s: stored %d bytes, sent %d", tc.name, len(got), len(data))
		}
		dr, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{TransactionalValidation: smValidation(0)})
		if err != nil {
			t.Fatalf("%s: structured download: %v", tc.name, err)
		}
		got, err := io.ReadAll(dr.Body)
		dr.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: structured download: %d bytes, %v", tc.name, len(got), err)
		}
		if dr.StructuredContentLength == nil || *dr.StructuredContentLength != int64(tc.size) {
			t.Errorf("%s: x-ms-structured-content-length %v", tc.name, dr.StructuredContentLength)
		}
	}

	// Put Block (Stage Block and the SDK's chunked UploadBuffer), then
	// ranged structured downloads of the committed blob.
	data := smData(16 * 1024)
	bb := cc.NewBlockBlobClient("blocks")
	sr, err := bb.StageBlock(ctx, blockID(0), rsc(data[:5000]), &blockblob.StageBlockOptions{TransactionalValidation: smValidation(0)})
	if err != nil {
		t.Fatal(err)
	}
	echoed("Put Block", sr.StructuredBodyType)
	if _, err := bb.StageBlock(ctx, blockID(1), rsc(data[5000:]), &blockblob.StageBlockOptions{TransactionalValidation: smValidation(777)}); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{blockID(0), blockID(1)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := plain("blocks"); !bytes.Equal(got, data) {
		t.Fatalf("staged blocks: stored %d bytes", len(got))
	}
	dr, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{TransactionalValidation: smValidation(0), Range: blob.HTTPRange{Offset: 1024, Count: 2048}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(dr.Body)
	dr.Body.Close()
	if err != nil || !bytes.Equal(got, data[1024:3072]) {
		t.Fatalf("ranged structured download: %d bytes, %v", len(got), err)
	}
	buf := make([]byte, len(data))
	if n, err := bb.DownloadBuffer(ctx, buf, &blob.DownloadBufferOptions{TransactionalValidation: smValidation(0), BlockSize: 4096}); err != nil || n != int64(len(data)) || !bytes.Equal(buf, data) {
		t.Fatalf("DownloadBuffer: %d, %v", n, err)
	}
	ub := cc.NewBlockBlobClient("uploadbuffer")
	if _, err := ub.UploadBuffer(ctx, data, &blockblob.UploadBufferOptions{TransactionalValidation: smValidation(0), BlockSize: 4096, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	if got := plain("uploadbuffer"); !bytes.Equal(got, data) {
		t.Fatalf("UploadBuffer: stored %d bytes", len(got))
	}

	// A blob of several of blobshare's 4 MiB segments, uploaded plain and
	// downloaded structured: the SDK's decoder checks blobshare's framing.
	big := smData(9<<20 + 123)
	bigc := cc.NewBlockBlobClient("big")
	if _, err := bigc.UploadBuffer(ctx, big, nil); err != nil {
		t.Fatal(err)
	}
	dr, err = bigc.DownloadStream(ctx, &blob.DownloadStreamOptions{TransactionalValidation: smValidation(0)})
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(dr.Body)
	dr.Body.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("structured download of %d bytes: %d bytes, %v", len(big), len(got), err)
	}
	// And back: one Put Blob of three of the SDK's 4 MiB segments.
	if _, err := bigc.Upload(ctx, rsc(big[:len(big)-1]), &blockblob.UploadOptions{TransactionalValidation: smValidation(0)}); err != nil {
		t.Fatal(err)
	}
	if got := plain("big"); !bytes.Equal(got, big[:len(big)-1]) {
		t.Fatalf("structured upload of %d bytes: stored %d", len(big)-1, len(got))
	}

	// Append Block.
	ab := cc.NewAppendBlobClient("append")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		ar, err := ab.AppendBlock(ctx, rsc(data[i*3000:(i+1)*3000]), &appendblob.AppendBlockOptions{TransactionalValidation: smValidation(1000)})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		echoed("Append Block", ar.StructuredBodyType)
	}
	if got := plain("append"); !bytes.Equal(got, data[:6000]) {
		t.Fatalf("append: stored %d bytes", len(got))
	}

	// Put Page: the range is the content's length, not the message's.
	pb := cc.NewPageBlobClient("pages")
	if _, err := pb.Create(ctx, 8192, nil); err != nil {
		t.Fatal(err)
	}
	pr, err := pb.UploadPages(ctx, rsc(data[:1024]), blob.HTTPRange{Offset: 512, Count: 1024}, &pageblob.UploadPagesOptions{TransactionalValidation: smValidation(0)})
	if err != nil {
		t.Fatalf("upload pages: %v", err)
	}
	echoed("Put Page", pr.StructuredBodyType)
	want := make([]byte, 8192)
	copy(want[512:], data[:1024])
	if got := plain("pages"); !bytes.Equal(got, want) {
		t.Fatal("pages: stored content differs")
	}
}

// framed is data framed by the encoder.
func framed(t testing.TB, data []byte) []byte {
	t.Helper()
	b, err := io.ReadAll(storagehttp.NewStructuredEncoder(bytes.NewReader(data), int64(len(data))))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func smHeaders(content int) map[string]string {
	return map[string]string{
		"x-ms-structured-body":           storagehttp.StructuredBodyCRC64,
		"x-ms-structured-content-length": strconv.Itoa(content),
	}
}

// corruptions are bad messages for data: each must be refused with its
// status and code, and store nothing.
func corruptions(t testing.TB, data []byte) []struct {
	name   string
	msg    []byte
	hdr    map[string]string
	status int
	code   string
} {
	good := framed(t, data)
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x10
		return b
	}
	wrongLen := smHeaders(len(data) - 1)
	otherType := smHeaders(len(data))
	otherType["x-ms-structured-body"] = "XSM/1.0; properties=md5"
	noLen := smHeaders(len(data))
	delete(noLen, "x-ms-structured-content-length")
	badVersion := flip(0)
	badNum := append([]byte(nil), good...)
	binary.LittleEndian.PutUint16(badNum[13:], 2)
	return []struct {
		name   string
		msg    []byte
		hdr    map[string]string
		status int
		code   string
	}{
		{"data flipped", flip(13 + 10 + 7), smHeaders(len(data)), 400, "Crc64Mismatch"},
		{"segment CRC flipped", flip(len(good) - 9), smHeaders(len(data)), 400, "Crc64Mismatch"},
		{"trailer flipped", flip(len(good) - 1), smHeaders(len(data)), 400, "Crc64Mismatch"},
		{"version 2", badVersion, smHeaders(len(data)), 400, "InvalidInput"},
		{"segment numbered 2", badNum, smHeaders(len(data)), 400, "InvalidInput"},
		{"content length disagrees", good, wrongLen, 400, "InvalidHeaderValue"},
		{"unsupported properties", good, otherType, 400, "InvalidHeaderValue"},
		{"no content length", good, noLen, 400, "MissingRequiredHeader"},
		{"framing sent as data", data, smHeaders(len(data)), 400, "InvalidHeaderValue"},
	}
}

// TestRawStructuredWritesStoreNothingOnFailure: Put Blob, Put Block,
// Append Block and Put Page with a corrupt or inconsistent structured body
// are refused with 400, and the blob keeps its old content, ETag and
// block list. The same good message then succeeds, answering
// x-ms-structured-body.
func TestRawStructuredWritesStoreNothingOnFailure(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "raw", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("raw")
	old := []byte("the old content, which must survive")
	data := smData(1024)

	state := func(name string) (string, []byte) {
		t.Helper()
		r, err := cc.NewBlobClient(name).DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(*r.ETag), b
	}
	if _, err := cc.NewBlockBlobClient("block").Upload(ctx, rsc(old), nil); err != nil {
		t.Fatal(err)
	}
	ab := cc.NewAppendBlobClient("append")
	if _, err := ab.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ab.AppendBlock(ctx, rsc(old), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewPageBlobClient("page").Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}

	ops := []struct {
		name, blob, path string
		hdr              map[string]string
	}{
		{"Put Blob", "block", "/raw/block", map[string]string{"x-ms-blob-type": "BlockBlob"}},
		{"Put Block", "block", "/raw/block?comp=block&blockid=" + blockID(9), nil},
		{"Append Block", "append", "/raw/append?comp=appendblock", nil},
		{"Put Page", "page", "/raw/page?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=1024-2047"}},
	}
	for _, op := range ops {
		for _, tc := range corruptions(t, data) {
			etag, before := state(op.blob)
			hdr := map[string]string{}
			for k, v := range op.hdr {
				hdr[k] = v
			}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			resp, body := rawDo(t, e, "PUT", op.path, hdr, string(tc.msg))
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
				t.Errorf("%s, %s: %d %s, want %d %s\n%s", op.name, tc.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, body)
			}
			if tc.code == "Crc64Mismatch" && (!bytes.Contains(body, []byte("<UserSpecifiedCrc>")) || !bytes.Contains(body, []byte("<ServerCalculatedCrc>"))) {
				t.Errorf("%s, %s: Crc64Mismatch without Azure's detail elements\n%s", op.name, tc.name, body)
			}
			if etag2, after := state(op.blob); etag2 != etag || !bytes.Equal(after, before) {
				t.Errorf("%s, %s: the blob changed", op.name, tc.name)
			}
		}
		bl, err := cc.NewBlockBlobClient("block").GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(bl.UncommittedBlocks) != 0 {
			t.Errorf("%s: %d blocks staged by refused requests", op.name, len(bl.UncommittedBlocks))
		}
	}
	// The good message.
	for _, op := range ops {
		hdr := smHeaders(len(data))
		for k, v := range op.hdr {
			hdr[k] = v
		}
		resp, body := rawDo(t, e, "PUT", op.path, hdr, string(framed(t, data)))
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("x-ms-structured-body") != storagehttp.StructuredBodyCRC64 {
			t.Errorf("%s: %d, x-ms-structured-body %q\n%s", op.name, resp.StatusCode, resp.Header.Get("x-ms-structured-body"), body)
		}
	}
	if _, got := state("block"); !bytes.Equal(got, data) {
		t.Error("Put Blob stored something else than the data")
	}
	if _, got := state("append"); !bytes.Equal(got, append(append([]byte(nil), old...), data...)) {
		t.Error("Append Block stored something else than the data")
	}
	if _, got := state("page"); !bytes.Equal(got[1024:2048], data) {
		t.Error("Put Page stored something else than the data")
	}
}

// TestRawStructuredRefusals: the structured headers where no body carries
// content (a From-URL write, a page clear, Put Blob of a page blob) are
// refused, not ignored.
func TestRawStructuredRefusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ref", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("ref")
	if _, err := cc.NewBlockBlobClient("src").Upload(ctx, rsc([]byte("source")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.NewPageBlobClient("page").Create(ctx, 4096, nil); err != nil {
		t.Fatal(err)
	}
	src := e.URL + "/ref/src"
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
	}{
		{"Put Blob From URL", "/ref/dst", map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-copy-source": src}},
		{"Put Block From URL", "/ref/dst?comp=block&blockid=" + blockID(1), map[string]string{"x-ms-copy-source": src}},
		{"Put Page clear", "/ref/page?comp=page", map[string]string{"x-ms-page-write": "clear", "x-ms-range": "bytes=0-511"}},
		{"Put Blob of a page blob", "/ref/page2", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "512"}},
	} {
		hdr := smHeaders(0)
		for k, v := range tc.hdr {
			hdr[k] = v
		}
		st, code, body := rawRequest(t, e, "PUT", tc.path, hdr, "")
		if st != http.StatusBadRequest || code != "InvalidHeaderValue" {
			t.Errorf("%s: %d %s\n%s", tc.name, st, code, body)
		}
	}
	if _, err := cc.NewBlobClient("dst").GetProperties(ctx, nil); err == nil {
		t.Error("a refused From-URL write created the blob")
	}
}

// TestRawStructuredGet: Get Blob with x-ms-structured-body answers a
// message (Content-Length its length, x-ms-structured-content-length and
// Content-Range the data's) that decodes to the data; a value other than
// XSM/1.0; properties=crc64 is 400.
func TestRawStructuredGet(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "get", nil); err != nil {
		t.Fatal(err)
	}
	data := smData(5000)
	if _, err := c.ServiceClient().NewContainerClient("get").NewBlockBlobClient("b").Upload(ctx, rsc(data), &blockblob.UploadOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rng        string
		from, to   int
		status     int
		contentRng string
	}{
		{"", 0, 5000, 200, ""},
		{"bytes=100-1099", 100, 1100, 206, "bytes 100-1099/5000"},
		{"bytes=4990-", 4990, 5000, 206, "bytes 4990-4999/5000"},
	} {
		hdr := map[string]string{"x-ms-structured-body": storagehttp.StructuredBodyCRC64}
		if tc.rng != "" {
			hdr["x-ms-range"] = tc.rng
		}
		resp, body := rawDo(t, e, "GET", "/get/b", hdr, "")
		n := tc.to - tc.from
		if resp.StatusCode != tc.status || resp.Header.Get("x-ms-structured-body") != storagehttp.StructuredBodyCRC64 ||
			resp.Header.Get("x-ms-structured-content-length") != strconv.Itoa(n) || resp.Header.Get("Content-Range") != tc.contentRng ||
			resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) || len(body) != int(storagehttp.StructuredLength(int64(n))) {
			t.Fatalf("%q: %d %v, %d bytes", tc.rng, resp.StatusCode, resp.Header, len(body))
		}
		got, err := io.ReadAll(storagehttp.NewStructuredReader(bytes.NewReader(body), int64(len(body)), int64(n)))
		if err != nil || !bytes.Equal(got, data[tc.from:tc.to]) {
			t.Fatalf("%q: decoded %d bytes, %v", tc.rng, len(got), err)
		}
	}
	st, code, _ := rawRequest(t, e, "GET", "/get/b", map[string]string{"x-ms-structured-body": "XSM/2.0; properties=crc64"}, "")
	if st != 400 || code != "InvalidHeaderValue" {
		t.Errorf("XSM/2.0: %d %s", st, code)
	}
}
