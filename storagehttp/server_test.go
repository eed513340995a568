package storagehttp

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestServerTooLargeHeadersAre400: a request whose headers exceed the
// service's limit is answered 400 with x-ms-error-code
// RequestHeaderFieldsTooLarge, as Azure answers 400 — also when they are
// megabytes (a 4 MiB MD5 sent base64, azblob's
// TestUploadPagesFromURLWithMD5), which net/http answered 431 before
// any handler ran; a request within the limit is served.
func TestServerTooLargeHeadersAre400(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	limits := Limits{MaxHeaderCount: 256, MaxHeaderBytes: 64 << 10, MaxBody: func(*http.Request) int64 { return 0 }}
	srv := NewServer(limits.Wrap(ok), 0, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	for _, tc := range []struct {
		name   string
		size   int
		status int
		code   string
	}{
		{"small", 100, http.StatusOK, ""},
		{"over the service's limit", 100 << 10, http.StatusBadRequest, CodeRequestHeaderTooLarge},
		{"megabytes (a 4 MiB MD5 in base64)", 5_592_408, http.StatusBadRequest, CodeRequestHeaderTooLarge},
	} {
		req, err := http.NewRequest(http.MethodPut, "http://"+ln.Addr().String()+"/a/c/b", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-source-content-md5", strings.Repeat("A", tc.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get(ErrorCodeHeader) != tc.code {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, resp.Header.Get(ErrorCodeHeader), tc.status, tc.code)
		}
	}
}
