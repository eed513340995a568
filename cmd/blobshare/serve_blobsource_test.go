package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/blobshare/blobshare/filerest"
	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// TestPutRangeFromBlobURL: a real serve; FileREST's Put Range From URL
// with x-ms-copy-source naming a blob of the same serve's Blob endpoint
// reads the blob's bytes when the blob URL carries a SAS that grants read,
// and is refused (403 CannotVerifyCopySource, nothing written) without
// one or with a SAS that does not; a source range beyond the blob is 400;
// an x-ms-source-content-crc64 that is not the blob range's fails the
// write before anything is committed (400 Crc64Mismatch).
func TestPutRangeFromBlobURL(t *testing.T) {
	ctx := context.Background()
	s, err := servetest.Start(blobshareBinary(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })

	bc := blobClient(t, s)
	if _, err := bc.CreateContainer(ctx, "src", nil); err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("blob bytes, "), 700) // 8400 bytes
	if _, err := bc.UploadBuffer(ctx, "src", "b.bin", content, nil); err != nil {
		t.Fatal(err)
	}
	blobURL := bc.ServiceClient().NewContainerClient("src").NewBlobClient("b.bin").URL()
	sasURL := func(p sas.BlobPermissions) string {
		u, err := bc.ServiceClient().NewContainerClient("src").NewBlobClient("b.bin").GetSASURL(p, time.Now().Add(time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	fsvc, err := service.NewClientFromConnectionString("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
		filerest.DevKey+";FileEndpoint="+s.RESTURL+";", nil)
	if err != nil {
		t.Fatal(err)
	}
	share := fsvc.NewShareClient("dst")
	if _, err := share.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	fc := share.NewRootDirectoryClient().NewFileClient("f.bin")
	const size = 16 << 10
	if _, err := fc.Create(ctx, size, nil); err != nil {
		t.Fatal(err)
	}
	h := storagehttp.NewCRC64() // Azure Storage's CRC-64
	h.Write(content[100:4196])
	crc := h.Sum64()

	for _, tt := range []struct {
		name     string
		source   string
		srcOff   int64
		n        int64
		crc      uint64
		code     string // "" success
		wantData []byte
	}{
		{"no SAS on a private container", blobURL, 0, 4096, 0, "CannotVerifyCopySource", nil},
		{"a SAS without read", sasURL(sas.BlobPermissions{Write: true}), 0, 4096, 0, "CannotVerifyCopySource", nil},
		{"a range beyond the blob", sasURL(sas.BlobPermissions{Read: true}), 8192, 4096, 0, "InvalidHeaderValue", nil},
		{"a wrong source CRC-64", sasURL(sas.BlobPermissions{Read: true}), 100, 4096, crc + 1, "Crc64Mismatch", nil},
		{"a read SAS", sasURL(sas.BlobPermissions{Read: true}), 100, 4096, crc, "", content[100:4196]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &file.UploadRangeFromURLOptions{}
			if tt.crc != 0 {
				o.SourceContentValidation = file.SourceContentValidationTypeCRC64(tt.crc)
			}
			_, err := fc.UploadRangeFromURL(ctx, tt.source, tt.srcOff, 0, tt.n, o)
			var re *azcore.ResponseError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("Put Range From URL: %v", err)
			case tt.code != "" && (!errors.As(err, &re) || re.ErrorCode != tt.code):
				t.Fatalf("got %v, want %s", err, tt.code)
			}
			want := tt.wantData
			if want == nil {
				want = make([]byte, tt.n) // nothing written: still zeros
			}
			r, err := fc.DownloadStream(ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: tt.n}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if !bytes.Equal(got, want) {
				t.Fatalf("the file's first %d bytes are not %s", tt.n, map[bool]string{true: "zeros", false: "the blob's range"}[tt.wantData == nil])
			}
		})
	}
}

// TestBlobSourceLinkOwns: FileREST takes a copy source for a blob when its
// host is production-style ACCOUNT.blob.… or it is path-style on the Blob
// listener's port (its host, or loopback for loopback); nothing before the
// Blob endpoint serves.
func TestBlobSourceLinkOwns(t *testing.T) {
	var l blobSourceLink
	if l.Owns(mustURL(t, "https://devstoreaccount1.blob.core.windows.net/c/b")) {
		t.Fatal("an unset link owns a blob URL")
	}
	l.set(nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10000})
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"https://devstoreaccount1.blob.core.windows.net/c/b", true},
		{"http://devstoreaccount1.blob.localhost:10000/c/b", true},
		{"http://127.0.0.1:10000/devstoreaccount1/c/b", true},
		{"http://localhost:10000/devstoreaccount1/c/b", true},
		{"http://127.0.0.1:10003/devstoreaccount1/share/f", false},
		{"https://devstoreaccount1.file.core.windows.net/share/f", false},
		{"http://192.0.2.1:10000/devstoreaccount1/c/b", false},
	} {
		if got := l.Owns(mustURL(t, tt.url)); got != tt.want {
			t.Errorf("Owns(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
