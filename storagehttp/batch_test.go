package storagehttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const fuzzBatch = "--b\r\nContent-Type: application/http\r\nContent-ID: 0\r\n\r\n" +
	"DELETE /acct/c/x HTTP/1.1\r\nx-ms-date: Thu, 01 Jan 2026 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n" +
	"\r\n--b--\r\n"

// TestBatchRoundTrip: ReadBatch hands each part to the handler as its own
// request (method, path, headers, the batch's x-ms-version) and
// WriteBatch answers 202 with their responses in order, each with its
// part's Content-ID.
func TestBatchRoundTrip(t *testing.T) {
	body := strings.Replace(fuzzBatch, "\r\n--b--", "\r\n--b\r\nContent-Type: application/http\r\nContent-ID: seven\r\n\r\nPUT /acct/c/y?comp=tier HTTP/1.1\r\n\r\n--b--", 1)
	outer := httptest.NewRequest("POST", "/acct/?comp=batch", strings.NewReader(body))
	outer.Header.Set("Content-Type", "multipart/mixed; boundary=b")
	outer.Header.Set(VersionHeader, "2025-01-05")
	subs, err := ReadBatch(outer)
	if err != nil || len(subs) != 2 {
		t.Fatalf("ReadBatch: %d sub-requests, %v", len(subs), err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-seen", r.Method+" "+r.URL.Path+" "+requestVersion(r))
		w.WriteHeader(http.StatusAccepted)
	})
	rec := httptest.NewRecorder()
	if err := WriteBatch(rec, h, subs); err != nil {
		t.Fatal(err)
	}
	got := rec.Body.String()
	if rec.Code != http.StatusAccepted || !strings.HasPrefix(rec.Header().Get("Content-Type"), "multipart/mixed; boundary=batchresponse_") {
		t.Fatalf("answer %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{"Content-ID: 0", "X-Seen: DELETE /acct/c/x 2025-01-05", "Content-ID: seven", "X-Seen: PUT /acct/c/y 2025-01-05"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "/c/x") > strings.Index(got, "/c/y") {
		t.Errorf("sub-responses out of order:\n%s", got)
	}
}

// FuzzReadBatch: whatever the body and Content-Type, ReadBatch returns
// requests or an *Error, never panics, and never more than
// MaxBatchRequests.
func FuzzReadBatch(f *testing.F) {
	f.Add("multipart/mixed; boundary=b", fuzzBatch)
	f.Add("multipart/mixed; boundary=b", "--b\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n--b--")
	f.Add("multipart/mixed", "")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		r := httptest.NewRequest("POST", "/a/?comp=batch", bytes.NewReader([]byte(body)))
		r.Header.Set("Content-Type", contentType)
		subs, err := ReadBatch(r)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(subs) == 0 || len(subs) > MaxBatchRequests {
			t.Fatalf("%d sub-requests", len(subs))
		}
		for _, s := range subs {
			if s.Request.URL == nil || s.Request.Method == "" {
				t.Fatalf("sub-request without a method or URL: %+v", s)
			}
		}
	})
}
