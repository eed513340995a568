package blob_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	blobsvc "github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/storagehttp"
)

// TestSDKBatch: Blob Batch through azblob's BatchBuilder, on a container
// and on the account: each sub-request runs as if alone (a missing blob
// answers its own 404 BlobNotFound while the others succeed, a leased blob
// its 412), Set Blob Tier in batch sets tiers, a container SAS signs a
// batch, and a batch mixing kinds is refused whole.
func TestSDKBatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "batch", nil); err != nil {
		t.Fatal(err)
	}
	cc := c.ServiceClient().NewContainerClient("batch")
	for _, n := range []string{"a", "b", "c", "leased", "cool1", "cool2"} {
		if _, err := cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte(n), nil); err != nil {
			t.Fatal(err)
		}
	}
	lc, err := lease.NewBlobClient(cc.NewBlobClient("leased"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.AcquireLease(ctx, -1, nil); err != nil {
		t.Fatal(err)
	}

	bb, err := cc.NewBatchBuilder()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "missing", "b", "leased"} {
		if err := bb.Delete(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cc.SubmitBatch(ctx, bb, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCodes := []string{"", "BlobNotFound", "", "LeaseIdMissing"}
	if len(resp.Responses) != len(wantCodes) {
		t.Fatalf("%d sub-responses, want %d", len(resp.Responses), len(wantCodes))
	}
	for i, r := range resp.Responses {
		if got := code(r.Error); got != wantCodes[i] {
			t.Errorf("sub-response %d: %v, want %q", i, r.Error, wantCodes[i])
		}
	}
	for n, gone := range map[string]bool{"a": true, "b": true, "c": false, "leased": false} {
		_, err := cc.NewBlobClient(n).GetProperties(ctx, nil)
		if gone != (code(err) == "BlobNotFound") {
			t.Errorf("after the batch, %s: %v (deleted: want %v)", n, err, gone)
		}
	}

	// Set Blob Tier in a batch on the account.
	sb, err := c.ServiceClient().NewBatchBuilder()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"cool1", "cool2"} {
		if err := sb.SetTier("batch", n, blob.AccessTierCool, nil); err != nil {
			t.Fatal(err)
		}
	}
	sresp, err := c.ServiceClient().SubmitBatch(ctx, sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range sresp.Responses {
		if r.Error != nil {
			t.Errorf("set tier sub-response %d: %v", i, r.Error)
		}
	}
	for _, n := range []string{"cool1", "cool2"} {
		if p, err := cc.NewBlobClient(n).GetProperties(ctx, nil); err != nil || *p.AccessTier != "Cool" {
			t.Errorf("tier of %s after the batch: %v %v", n, err, p.AccessTier)
		}
	}

	// A container SAS with delete signs the sub-requests.
	signed, err := cc.GetSASURL(sas.ContainerPermissions{Delete: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	sasClient, err := container.NewClientWithNoCredential(signed, nil)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := sasClient.NewBatchBuilder()
	if err != nil {
		t.Fatal(err)
	}
	if err := kb.Delete("c", nil); err != nil {
		t.Fatal(err)
	}
	kresp, err := sasClient.SubmitBatch(ctx, kb, nil)
	if err != nil || len(kresp.Responses) != 1 || kresp.Responses[0].Error != nil {
		t.Fatalf("a batch signed with a container SAS: %v %+v", err, kresp)
	}
	if _, err := cc.NewBlobClient("c").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("c after the SAS batch: %v", err)
	}

	if _, err := cc.NewBlobClient("cool1").GetProperties(ctx, nil); err != nil {
		t.Errorf("cool1 after the batches: %v", err)
	}
}

// batchBody builds a Blob Batch body of sub-requests "METHOD /path?query",
// each signed with the development key unless its entry says "bad-sig"
// (then a signature that does not verify) or carries a SAS (then none).
func batchBody(t *testing.T, subs []string) (contentType, body string) {
	t.Helper()
	sg, err := storagehttp.NewSigner(blobsvc.DevAccount, blobsvc.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	const boundary = "batch_test"
	for i, sub := range subs {
		method, target, _ := strings.Cut(sub, " ")
		target, badSig := strings.CutSuffix(target, " bad-sig")
		req, err := http.NewRequest(method, "http://x"+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Content-Length", "0")
		if strings.Contains(target, "comp=tier") {
			req.Header.Set("x-ms-access-tier", "Cool")
		}
		if !strings.Contains(target, "sig=") { // a SAS needs no Authorization
			sig := sg.Sign(storagehttp.StringToSign(blobsvc.DevAccount, req))
			if badSig {
				sig = "AAAA" + sig[4:]
			}
			req.Header.Set("Authorization", "SharedKey "+blobsvc.DevAccount+":"+sig)
		}
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", boundary, i)
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, target)
		for k, v := range req.Header {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v[0])
		}
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/mixed; boundary=" + boundary, b.String()
}

// TestBatchRaw: what the SDK never sends. A sub-request whose signature
// does not verify fails alone (403 in its part) while the one beside it
// is done; a batch mixing Delete and Set Tier, one holding another kind
// of operation (a nested batch), one addressing another container from a
// container batch, more than 256 sub-requests, none, or a body that is no
// multipart/mixed are refused whole with 400, and touch nothing.
func TestBatchRaw(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	for _, ct := range []string{"raw", "other"} {
		if _, err := c.CreateContainer(ctx, ct, nil); err != nil {
			t.Fatal(err)
		}
	}
	cc := c.ServiceClient().NewContainerClient("raw")
	for _, n := range []string{"a", "b", "keep"} {
		if _, err := cc.NewBlockBlobClient(n).UploadBuffer(ctx, []byte(n), nil); err != nil {
			t.Fatal(err)
		}
	}
	post := func(path string, subs []string) (int, string, string) {
		ct, body := batchBody(t, subs)
		return rawRequest(t, e, "POST", path, map[string]string{"Content-Type": ct}, body)
	}

	st, ecode, body := post("/raw?restype=container&comp=batch", []string{
		"DELETE /devstoreaccount1/raw/a bad-sig",
		"DELETE /devstoreaccount1/raw/b",
	})
	if st != 202 {
		t.Fatalf("batch with one bad signature: %d %s\n%s", st, ecode, body)
	}
	if !strings.Contains(body, "HTTP/1.1 403 Forbidden") || !strings.Contains(body, "HTTP/1.1 202 Accepted") {
		t.Errorf("sub-responses: want one 403 and one 202:\n%s", body)
	}
	if _, err := cc.NewBlobClient("a").GetProperties(ctx, nil); err != nil {
		t.Errorf("a, whose sub-request did not verify: %v", err)
	}
	if _, err := cc.NewBlobClient("b").GetProperties(ctx, nil); code(err) != "BlobNotFound" {
		t.Errorf("b, whose sub-request verified: %v", err)
	}

	// A sub-request's own SAS is checked against its own operation: read
	// does not delete.
	st, ecode, body = post("/raw?restype=container&comp=batch", []string{
		"DELETE " + withReadSAS(t, cc, "/devstoreaccount1/raw/a"),
	})
	if st != 202 || !strings.Contains(body, "HTTP/1.1 403 Forbidden") || !strings.Contains(body, "AuthorizationPermissionMismatch") {
		t.Errorf("a sub-request whose SAS grants only read: %d %s\n%s", st, ecode, body)
	}
	if _, err := cc.NewBlobClient("a").GetProperties(ctx, nil); err != nil {
		t.Errorf("a, whose sub-request's SAS could not delete: %v", err)
	}

	many := make([]string, 257)
	for i := range many {
		many[i] = "DELETE /devstoreaccount1/raw/keep"
	}
	for _, tc := range []struct {
		name, path string
		subs       []string
		code       string
	}{
		{"mixed kinds", "/raw?restype=container&comp=batch", []string{"DELETE /devstoreaccount1/raw/keep", "PUT /devstoreaccount1/raw/a?comp=tier"}, "InvalidInput"},
		{"a nested batch", "/?comp=batch", []string{"POST /devstoreaccount1/?comp=batch"}, "InvalidInput"},
		{"another operation", "/?comp=batch", []string{"PUT /devstoreaccount1/raw/keep?comp=metadata"}, "InvalidInput"},
		{"another container", "/raw?restype=container&comp=batch", []string{"DELETE /devstoreaccount1/other/x"}, "InvalidUri"},
		{"257 sub-requests", "/?comp=batch", many, "ExceedsMaxBatchRequestCount"},
		{"no sub-request", "/?comp=batch", nil, "InvalidInput"},
	} {
		if st, got, body := post(tc.path, tc.subs); st != 400 || got != tc.code {
			t.Errorf("%s: %d %s, want 400 %s\n%s", tc.name, st, got, tc.code, body)
		}
	}
	if st, got, _ := rawRequest(t, e, "POST", "/?comp=batch", map[string]string{"Content-Type": "text/plain"}, "DELETE /x HTTP/1.1\r\n\r\n"); st != 400 || got != "InvalidHeaderValue" {
		t.Errorf("a body that is no multipart/mixed: %d %s", st, got)
	}
	if _, err := cc.NewBlobClient("keep").GetProperties(ctx, nil); err != nil {
		t.Errorf("keep, after the refused batches: %v", err)
	}
}
