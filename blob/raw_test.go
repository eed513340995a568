package blob_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blob"
	"github.com/blobshare/blobshare/storagehttp"
)

// rawRequest sends a SharedKey-signed request built by hand (for bodies
// and headers the SDK never sends). pathAndQuery is relative to the
// account URL. It returns the status, the error code header and the body.
func rawRequest(t testing.TB, e *env, method, pathAndQuery string, hdr map[string]string, body string) (int, string, string) {
	t.Helper()
	resp, b := rawDo(t, e, method, pathAndQuery, hdr, body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
}

// rawRequestHeaders is rawRequest without a body, answering the status
// and the response's headers.
func rawRequestHeaders(t testing.TB, e *env, method, pathAndQuery string, hdr map[string]string) (int, http.Header) {
	t.Helper()
	resp, _ := rawDo(t, e, method, pathAndQuery, hdr, "")
	return resp.StatusCode, resp.Header
}

// rawDo sends a request signed with the development key and returns the
// response with its body read.
func rawDo(t testing.TB, e *env, method, pathAndQuery string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+pathAndQuery, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header.Set("x-ms-version", "2025-01-05")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if req.ContentLength > 0 {
		req.Header.Set("Content-Length", itoa(req.ContentLength))
	}
	sg, err := storagehttp.NewSigner(blob.DevAccount, blob.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "SharedKey "+blob.DevAccount+":"+sg.Sign(storagehttp.StringToSign(blob.DevAccount, req)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// commitRaw sends a Put Block List body as is and checks the status.
func commitRaw(t testing.TB, e *env, container, name, body string, want int) {
	t.Helper()
	st, code, resp := rawRequest(t, e, "PUT", "/"+container+"/"+name+"?comp=blocklist", nil, body)
	if st != want {
		t.Fatalf("Put Block List %s: %d %s, want %d\n%s", body, st, code, want, resp)
	}
}
