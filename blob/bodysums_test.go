package blob_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/blobshare/blobshare/storagehttp"
)

// TestTransactionalSumsOfDocuments: Put Block List and Set Blob Tags check
// the Content-MD5 and x-ms-content-crc64 of their request documents (the
// REST pages' "used to verify the integrity of the request content during
// transport"), which were ignored: a wrong one is 400 and commits nothing,
// a right one passes (its CRC-64 answered back).
func TestTransactionalSumsOfDocuments(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "sums", nil); err != nil {
		t.Fatal(err)
	}
	bb := c.ServiceClient().NewContainerClient("sums").NewBlockBlobClient("b")
	if _, err := bb.StageBlock(ctx, blockID(0), rsc([]byte("block")), nil); err != nil {
		t.Fatal(err)
	}
	// azblob refuses to send these (its checksums cannot cover a commit),
	// so the requests are built by hand.
	doc := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<BlockList><Latest>" + blockID(0) + "</Latest></BlockList>"
	for _, tc := range []struct{ header, value, code string }{
		{"Content-MD5", base64.StdEncoding.EncodeToString(make([]byte, 16)), "Md5Mismatch"},
		{"x-ms-content-crc64", "AAAAAAAAAAA=", "Crc64Mismatch"},
	} {
		st, cd, body := rawRequest(t, e, "PUT", "/sums/b?comp=blocklist", map[string]string{tc.header: tc.value}, doc)
		if st != http.StatusBadRequest || cd != tc.code {
			t.Fatalf("Put Block List with a wrong %s: %d %s\n%s", tc.header, st, cd, body)
		}
		if _, err := bb.GetProperties(ctx, nil); status(err) != http.StatusNotFound {
			t.Fatalf("the refused block list was committed: %v", err)
		}
	}
	// The same document, hashed right, passes.
	crc := storagehttp.NewCRC64()
	crc.Write([]byte(doc))
	want := base64.StdEncoding.EncodeToString(storagehttp.CRC64Bytes(crc.Sum64()))
	resp, body := rawDo(t, e, "PUT", "/sums/b?comp=blocklist", map[string]string{"x-ms-content-crc64": want}, doc)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("x-ms-content-crc64") != want {
		t.Fatalf("Put Block List with its CRC-64: %d %q\n%s", resp.StatusCode, resp.Header.Get("x-ms-content-crc64"), body)
	}

	tags := "<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>"
	st, cd, _ := rawRequest(t, e, "PUT", "/sums/b?comp=tags", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, tags)
	if st != http.StatusBadRequest || cd != "Md5Mismatch" {
		t.Fatalf("Set Blob Tags with a wrong Content-MD5: %d %s", st, cd)
	}
	got, err := bb.GetTags(ctx, nil)
	if err != nil || len(got.BlobTagSet) != 0 {
		t.Fatalf("the refused tags were set: %v %v", got.BlobTagSet, err)
	}
	sum := md5.Sum([]byte(tags))
	if st, cd, body := rawRequest(t, e, "PUT", "/sums/b?comp=tags", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(sum[:])}, tags); st != http.StatusNoContent {
		t.Fatalf("Set Blob Tags with its MD5: %d %s\n%s", st, cd, body)
	}
	if got, err := bb.GetTags(ctx, nil); err != nil || len(got.BlobTagSet) != 1 {
		t.Fatalf("tags after Set Blob Tags with its MD5: %v %v", got.BlobTagSet, err)
	}
}
