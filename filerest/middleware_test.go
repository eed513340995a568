package filerest

import (
	"bytes"
	"fmt"
	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/storagehttp"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRecoverGives500(t *testing.T) {
	var logged bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logged, nil)), now: time.Now}
	h := storagehttp.RequestID(s.now, storagehttp.Recover(s.log, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	for _, m := range []string{"GET", "HEAD"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/devstoreaccount1/", nil))
		if rec.Code != 500 || rec.Header().Get("x-ms-error-code") != CodeInternalError {
			t.Fatalf("%s: %d %q", m, rec.Code, rec.Header().Get("x-ms-error-code"))
		}
		body, _ := io.ReadAll(rec.Body)
		if (m == "HEAD") != (len(body) == 0) {
			t.Fatalf("%s: body %q", m, body)
		}
	}
	if !strings.Contains(logged.String(), "boom") {
		t.Fatalf("panic not logged: %s", logged.String())
	}
}

func TestWriteErrorDetails(t *testing.T) {
	s := &Server{log: slog.Default(), now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.UTC) }}
	h := storagehttp.RequestID(s.now, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"stale"`)
		writeError(w, r, errInvalidHeader("x-ms-foo", "a<b"))
	}))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/devstoreaccount1/", nil)
	req.Header.Set("x-ms-client-request-id", "cid")
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	want := `<Code>InvalidHeaderValue</Code><Message>The value for one of the HTTP headers is not in the correct format.&#xA;RequestId:`
	if !strings.Contains(body, want) || !strings.Contains(body, "Time:2026-01-02T03:04:05.1234567Z</Message><HeaderName>x-ms-foo</HeaderName><HeaderValue>a&lt;b</HeaderValue></Error>") {
		t.Fatalf("body %s", body)
	}
	if rec.Header().Get("ETag") != "" || rec.Header().Get("x-ms-client-request-id") != "cid" || rec.Header().Get("Date") != "Fri, 02 Jan 2026 03:04:05 GMT" {
		t.Fatalf("headers %v", rec.Header())
	}
}

func TestToErrorTable(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{io.ErrUnexpectedEOF, 400, CodeInvalidInput},
		{&http.MaxBytesError{Limit: 1}, 413, CodeRequestBodyTooLarge},
		{io.ErrClosedPipe, 500, CodeInternalError},
		{fmt.Errorf("f: %w", locks.ErrSharingViolation), 409, CodeSharingViolation},
		{fmt.Errorf("f: %w", locks.ErrDeletePending), 409, CodeSMBDeletePending},
		{fmt.Errorf("f: %w", locks.ErrLockConflict), 409, CodeFileLockConflict},
		{fmt.Errorf("f: %w", locks.ErrReadOnly), 412, CodeReadOnlyAttribute},
		{fmt.Errorf("f: %w", locks.ErrHandleLimit), 400, CodeHandleLimitExceeded},
		{&locks.LeaseError{Code: locks.LeaseIDMissing}, 412, "LeaseIdMissing"},
		{fmt.Errorf("w: %w", &locks.LeaseError{Code: locks.LeaseAlreadyPresent}), 409, "LeaseAlreadyPresent"},
		{&fs.Error{Op: "stat", Path: "s/x", Err: fs.ErrNotFound}, 404, CodeResourceNotFound},
		{&fs.Error{Op: "create", Path: "s/x/y", Err: fs.ErrParentNotFound}, 404, CodeParentNotFound},
		{&fs.Error{Op: "share", Path: "s", Err: fs.ErrShareNotFound}, 404, CodeShareNotFound},
		{&fs.Error{Op: "mkdir", Path: "s/d", Err: fs.ErrExist}, 409, CodeResourceAlreadyExists},
		{&fs.Error{Op: "rmdir", Path: "s/d", Err: fs.ErrNotEmpty}, 409, CodeDirectoryNotEmpty},
		{&fs.Error{Op: "get", Path: "s/f", Err: fs.ErrInvalidRange}, 416, CodeInvalidRange},
	}
	for _, tt := range tests {
		e := toError(tt.err)
		if e.Status != tt.status || e.Code != tt.code {
			t.Errorf("toError(%v) = %d %s", tt.err, e.Status, e.Code)
		}
	}
}

func TestNewValidatesConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without FS succeeded")
	}
	fsys := new(fs.FileSystem) // never called: New only checks the config
	for _, cfg := range []Config{
		{FS: fsys, Key: "not base64!"},
		{FS: fsys, Account: "Bad-Account"},
		{FS: fsys, Account: "ab"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	if _, err := New(Config{FS: fsys}); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
