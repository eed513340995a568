package filerest_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blobshare/blobshare/filerest"
)

// rawResp is a response read whole.
type rawResp struct {
	status int
	header http.Header
	body   []byte
}

type errorDoc struct {
	Code        string `xml:"Code"`
	Message     string `xml:"Message"`
	HeaderName  string `xml:"HeaderName"`
	HeaderValue string `xml:"HeaderValue"`
	QueryName   string `xml:"QueryParameterName"`
}

// do sends a raw request; path is sent exactly as given (not cleaned).
func (e *env) do(t *testing.T, method, path string, headers map[string]string, body []byte) rawResp {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "" // keep RawPath verbatim through Opaque below
	pathPart, query, _ := strings.Cut(path, "?")
	req.URL.Opaque = "//" + req.URL.Host + pathPart
	req.URL.RawQuery = query
	if body == nil {
		req.Body = nil
		req.ContentLength = 0
	}
	req.Header.Set("x-ms-version", "2026-06-06")
	for k, v := range headers {
		if strings.EqualFold(k, "Transfer-Encoding") {
			req.TransferEncoding = []string{v}
			req.ContentLength = -1
			req.Body = io.NopCloser(bytes.NewReader(body))
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResp{resp.StatusCode, resp.Header, b}
}

var time7 = regexp.MustCompile(`\nTime:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$`)

// checkError asserts the full error contract of locking.md §6.1.
func checkError(t *testing.T, what string, r rawResp, method string, status int, code string) errorDoc {
	t.Helper()
	if r.status != status || r.header.Get("x-ms-error-code") != code {
		t.Fatalf("%s: %d %q (%s), want %d %s", what, r.status, r.header.Get("x-ms-error-code"), r.body, status, code)
	}
	reqID := r.header.Get("x-ms-request-id")
	if len(reqID) != 36 || r.header.Get("Date") == "" {
		t.Fatalf("%s: request id %q date %q", what, reqID, r.header.Get("Date"))
	}
	var doc errorDoc
	if method == http.MethodHead {
		if len(r.body) != 0 {
			t.Fatalf("%s: HEAD error has a body", what)
		}
		return doc
	}
	if !bytes.HasPrefix(r.body, []byte(`<?xml version="1.0" encoding="utf-8"?><Error>`)) || r.header.Get("Content-Type") != "application/xml" {
		t.Fatalf("%s: body %s", what, r.body)
	}
	if err := xml.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if doc.Code != code || !strings.Contains(doc.Message, "\nRequestId:"+reqID+"\n") || !time7.MatchString(doc.Message) {
		t.Fatalf("%s: error document %+v", what, doc)
	}
	return doc
}

func noAuth(c *filerest.Config) { c.DisableAuth = true }

func TestRawAuthentication(t *testing.T) {
	e := newEnv(t)
	e.mustShare("share")
	for _, m := range []string{"GET", "HEAD"} {
		r := e.do(t, m, "/devstoreaccount1/share?restype=share", map[string]string{
			"Authorization": "SharedKey devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
			"x-ms-date":     "Sat, 21 Nov 2026 10:00:00 GMT",
		}, nil)
		checkError(t, m+" bad signature", r, m, 403, "AuthenticationFailed")
	}
	r := e.do(t, "GET", "/devstoreaccount1/share?restype=share", nil, nil)
	checkError(t, "anonymous", r, "GET", 401, "NoAuthenticationInformation")
	r = e.do(t, "GET", "/devstoreaccount1/share?restype=share&sv=2026-06-06&sr=s&sp=r&se=2099-01-01T00:00:00Z&sig=bad", nil, nil)
	checkError(t, "bad SAS", r, "GET", 403, "AuthenticationFailed")
}

func TestRawVersionAndRequestID(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	r := e.do(t, "GET", "/devstoreaccount1/share?restype=share", map[string]string{"x-ms-version": "2099-12-31", "x-ms-client-request-id": "abc-123"}, nil)
	if r.status != 200 || r.header.Get("x-ms-version") != "2099-12-31" || r.header.Get("x-ms-client-request-id") != "abc-123" || r.header.Get("x-ms-request-id") == "" {
		t.Fatalf("future version: %d %v", r.status, r.header)
	}
	for _, v := range []string{"2026-6-6", "latest", "2026-02-30"} {
		r = e.do(t, "GET", "/devstoreaccount1/share?restype=share", map[string]string{"x-ms-version": v}, nil)
		doc := checkError(t, "version "+v, r, "GET", 400, "InvalidHeaderValue")
		if doc.HeaderName != "x-ms-version" || doc.HeaderValue != v {
			t.Fatalf("version detail %+v", doc)
		}
	}
}

// mustShareRaw creates a share through a raw request (auth disabled).
func (e *env) mustShareRaw(t *testing.T, name string) {
	t.Helper()
	if r := e.do(t, "PUT", "/devstoreaccount1/"+name+"?restype=share", nil, nil); r.status != 201 {
		t.Fatalf("create share: %d %s", r.status, r.body)
	}
}

func (e *env) mustFileRaw(t *testing.T, path string, content []byte) {
	t.Helper()
	r := e.do(t, "PUT", path, map[string]string{"x-ms-type": "file", "x-ms-content-length": strconv.Itoa(len(content))}, nil)
	if r.status != 201 {
		t.Fatalf("create %s: %d %s", path, r.status, r.body)
	}
	if len(content) > 0 {
		r = e.do(t, "PUT", path+"?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-" + strconv.Itoa(len(content)-1)}, content)
		if r.status != 201 {
			t.Fatalf("put range %s: %d %s", path, r.status, r.body)
		}
	}
}

func TestRawErrors(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	e.mustFileRaw(t, "/devstoreaccount1/share/f.txt", []byte("0123456789"))
	const f = "/devstoreaccount1/share/f.txt"
	big := make([]byte, 4<<20+1)
	tests := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		body    []byte
		status  int
		code    string
		detail  string // HeaderName or QueryParameterName expected
	}{
		{"range syntax", "GET", f, map[string]string{"x-ms-range": "bytes=abc"}, nil, 400, "InvalidHeaderValue", "x-ms-range"},
		{"suffix range", "GET", f, map[string]string{"Range": "bytes=-3"}, nil, 400, "InvalidHeaderValue", "Range"},
		{"reversed range", "GET", f, map[string]string{"x-ms-range": "bytes=5-2"}, nil, 400, "InvalidHeaderValue", "x-ms-range"},
		{"unsatisfiable range", "GET", f, map[string]string{"x-ms-range": "bytes=10-"}, nil, 416, "InvalidRange", ""},
		{"unsatisfiable range HEAD-less GET", "GET", f, map[string]string{"Range": "bytes=100-200"}, nil, 416, "InvalidRange", ""},
		{"md5 of too large range", "GET", f, map[string]string{"x-ms-range": "bytes=0-", "x-ms-range-get-content-md5": "true"}, nil, 400, "InvalidHeaderValue", "x-ms-range-get-content-md5"},
		{"put range open-ended", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-"}, []byte("x"), 400, "InvalidHeaderValue", "x-ms-range"},
		{"put range over 4 MiB", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-4194304"}, big, 413, "RequestBodyTooLarge", ""},
		{"put range length mismatch", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-3"}, []byte("ab"), 400, "InvalidHeaderValue", "Content-Length"},
		{"put range past end", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=9-10"}, []byte("ab"), 416, "InvalidRange", ""},
		{"put range bad write", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "append", "x-ms-range": "bytes=0-1"}, []byte("ab"), 400, "InvalidHeaderValue", "x-ms-write"},
		{"put range no write", "PUT", f + "?comp=range", map[string]string{"x-ms-range": "bytes=0-1"}, []byte("ab"), 400, "MissingRequiredHeader", "x-ms-write"},
		{"clear with md5", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "clear", "x-ms-range": "bytes=0-1", "Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="}, nil, 400, "InvalidHeaderValue", "Content-MD5"},
		{"bad content md5", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-1", "Content-MD5": "nope"}, []byte("ab"), 400, "InvalidHeaderValue", "Content-MD5"},
		{"create bad length", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "abc"}, nil, 400, "InvalidHeaderValue", "x-ms-content-length"},
		{"create negative length", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "-1"}, nil, 400, "OutOfRangeInput", "x-ms-content-length"},
		{"create no length", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "file"}, nil, 400, "MissingRequiredHeader", "x-ms-content-length"},
		{"create bad type", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "directory", "x-ms-content-length": "1"}, nil, 400, "InvalidHeaderValue", "x-ms-type"},
		{"create no type", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-content-length": "1"}, nil, 400, "MissingRequiredHeader", "x-ms-type"},
		{"bad attributes", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-attributes": "ReadOnly|Bogus"}, nil, 400, "InvalidHeaderValue", "x-ms-file-attributes"},
		{"bad smb time", "PUT", "/devstoreaccount1/share/n.txt", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-creation-time": "yesterday"}, nil, 400, "InvalidHeaderValue", "x-ms-file-creation-time"},
		{"bad metadata name", "PUT", f + "?comp=metadata", map[string]string{"x-ms-meta-1bad": "v"}, nil, 400, "InvalidMetadata", "x-ms-meta-1bad"},
		{"bad lease id", "PUT", f + "?comp=metadata", map[string]string{"x-ms-lease-id": "not-a-guid"}, nil, 400, "InvalidHeaderValue", "x-ms-lease-id"},
		{"lease duration", "PUT", f + "?comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "15"}, nil, 400, "InvalidHeaderValue", "x-ms-lease-duration"},
		{"lease renew", "PUT", f + "?comp=lease", map[string]string{"x-ms-lease-action": "renew"}, nil, 400, "InvalidHeaderValue", "x-ms-lease-action"},
		{"lease no action", "PUT", f + "?comp=lease", nil, nil, 400, "MissingRequiredHeader", "x-ms-lease-action"},
		{"force close no id", "PUT", f + "?comp=forceclosehandles", nil, nil, 400, "MissingRequiredHeader", "x-ms-handle-id"},
		{"force close recursive on file", "PUT", f + "?comp=forceclosehandles", map[string]string{"x-ms-handle-id": "*", "x-ms-recursive": "true"}, nil, 400, "InvalidHeaderValue", "x-ms-recursive"},
		{"bad recursive", "GET", f + "?comp=listhandles", map[string]string{"x-ms-recursive": "maybe"}, nil, 400, "InvalidHeaderValue", "x-ms-recursive"},
		{"unknown comp", "GET", f + "?comp=bogus", nil, nil, 400, "InvalidQueryParameterValue", "comp"},
		{"unknown restype", "GET", f + "?restype=bogus", nil, nil, 400, "InvalidQueryParameterValue", "restype"},
		{"wrong verb", "POST", f, nil, nil, 405, "UnsupportedHttpVerb", ""},
		{"zero maxresults", "GET", "/devstoreaccount1/share?restype=directory&comp=list&maxresults=0", nil, nil, 400, "OutOfRangeQueryParameterValue", "maxresults"},
		{"bad include", "GET", "/devstoreaccount1/share?restype=directory&comp=list&include=Everything", nil, nil, 400, "InvalidQueryParameterValue", "include"},
		{"bad quota", "PUT", "/devstoreaccount1/share?restype=share&comp=properties", map[string]string{"x-ms-share-quota": "-5"}, nil, 400, "InvalidHeaderValue", "x-ms-share-quota"},
		{"share name", "PUT", "/devstoreaccount1/Bad_Share?restype=share", nil, nil, 400, "InvalidResourceName", ""},
		{"other account", "GET", "/otheraccount/share?restype=share", nil, nil, 400, "InvalidUri", ""},
		{"file op on share", "GET", "/devstoreaccount1/share", nil, nil, 400, "InvalidUri", ""},
		{"file props on dir", "HEAD", "/devstoreaccount1/share/d", nil, nil, 404, "ResourceNotFound", ""},
		{"missing share", "GET", "/devstoreaccount1/nosuch?restype=share", nil, nil, 404, "ShareNotFound", ""},
		{"copy source elsewhere", "PUT", "/devstoreaccount1/share/c.txt", map[string]string{"x-ms-copy-source": "http://example.com/otheraccount/share/f.txt"}, nil, 400, "CannotVerifyCopySource", "x-ms-copy-source"},
		{"rename across shares", "PUT", "/devstoreaccount1/share/r.txt?comp=rename", map[string]string{"x-ms-file-rename-source": "http://127.0.0.1/devstoreaccount1/other/f.txt"}, nil, 400, "InvalidInput", "x-ms-file-rename-source"},
		{"copy source traversal", "PUT", "/devstoreaccount1/share/c.txt", map[string]string{"x-ms-copy-source": "http://127.0.0.1/devstoreaccount1/share/../other/secret.txt"}, nil, 400, "InvalidFileOrDirectoryPathName", ""},
		{"rename source traversal", "PUT", "/devstoreaccount1/share/r.txt?comp=rename", map[string]string{"x-ms-file-rename-source": "http://127.0.0.1/devstoreaccount1/share/%2e%2e/f.txt"}, nil, 400, "InvalidFileOrDirectoryPathName", ""},
		{"rename source not a URL", "PUT", "/devstoreaccount1/share/r.txt?comp=rename", map[string]string{"x-ms-file-rename-source": "f.txt"}, nil, 400, "InvalidHeaderValue", "x-ms-file-rename-source"},
		{"force close bad id", "PUT", f + "?comp=forceclosehandles", map[string]string{"x-ms-handle-id": "abc"}, nil, 400, "InvalidHeaderValue", "x-ms-handle-id"},
		{"list handles bad marker", "GET", f + "?comp=listhandles&marker=xyz", nil, nil, 400, "InvalidQueryParameterValue", "marker"},
		{"abort copy without id", "PUT", f + "?comp=copy", map[string]string{"x-ms-copy-action": "abort"}, nil, 400, "MissingRequiredQueryParameter", "copyid"},
		{"put range chunked", "PUT", f + "?comp=range", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-1", "Transfer-Encoding": "chunked"}, []byte("ab"), 411, "MissingContentLengthHeader", ""},
		{"get body too large", "GET", f, nil, make([]byte, 70<<10), 413, "RequestBodyTooLarge", ""},
		{"malformed service properties XML", "PUT", "/devstoreaccount1/?restype=service&comp=properties", nil, []byte("<StorageServiceProperties><HourMetrics>"), 400, "InvalidXmlDocument", ""},
		{"service properties wrong root", "PUT", "/devstoreaccount1/?restype=service&comp=properties", nil, []byte("<Other/>"), 400, "InvalidXmlDocument", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, tt.method, tt.path, tt.headers, tt.body)
			doc := checkError(t, tt.name, r, tt.method, tt.status, tt.code)
			if tt.detail != "" && doc.HeaderName != tt.detail && doc.QueryName != tt.detail {
				t.Fatalf("detail %+v, want %s", doc, tt.detail)
			}
		})
	}
}

func TestRawHeaderLimits(t *testing.T) {
	e := newEnv(t, noAuth)
	h := map[string]string{}
	for i := 0; i < 300; i++ {
		h["x-ms-h"+strconv.Itoa(i)] = "v"
	}
	r := e.do(t, "GET", "/devstoreaccount1/?comp=list", h, nil)
	checkError(t, "too many headers", r, "GET", 400, "RequestHeaderFieldsTooLarge")
}

// snapshot records every path and size under dir.
func snapshot(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") || strings.HasSuffix(p, ".db") {
			return nil // the database changes with every request
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRawPathTraversal(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	e.mustShareRaw(t, "other")
	e.mustFileRaw(t, "/devstoreaccount1/other/secret.txt", []byte("secret"))
	e.mustFileRaw(t, "/devstoreaccount1/share/in.txt", []byte("in"))
	outside := filepath.Join(filepath.Dir(e.dataDir), "outside.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	parentBefore := snapshot(t, filepath.Dir(e.dataDir))
	paths := []string{
		"/devstoreaccount1/share/../other/secret.txt",
		"/devstoreaccount1/share/%2e%2e/other/secret.txt",
		"/devstoreaccount1/share/%2E%2E%2Fother%2Fsecret.txt",
		"/devstoreaccount1/share/..%5Cother%5Csecret.txt",
		`/devstoreaccount1/share/..\other\secret.txt`,
		"/devstoreaccount1/share/./in.txt",
		"/devstoreaccount1/share/%2e/in.txt",
		"/devstoreaccount1/share/a/../../../../outside.txt",
		"/devstoreaccount1/share/%00",
		"/devstoreaccount1/share/a%0Ab",
	}
	for _, p := range paths {
		for _, m := range []struct {
			method  string
			query   string
			headers map[string]string
		}{
			{"GET", "", nil},
			{"PUT", "", map[string]string{"x-ms-type": "file", "x-ms-content-length": "3"}},
			{"DELETE", "", nil},
			{"PUT", "?restype=directory", nil},
		} {
			r := e.do(t, m.method, p+m.query, m.headers, nil)
			checkError(t, m.method+" "+p, r, m.method, 400, "InvalidFileOrDirectoryPathName")
		}
	}
	// The other share's file is intact, nothing appeared anywhere.
	r := e.do(t, "GET", "/devstoreaccount1/other/secret.txt", nil, nil)
	if r.status != 200 || string(r.body) != "secret" {
		t.Fatalf("other share's file: %d %q", r.status, r.body)
	}
	after := snapshot(t, filepath.Dir(e.dataDir))
	for p, size := range after {
		if before, ok := parentBefore[p]; !ok || before != size {
			t.Errorf("changed on disk: %s (%d → %d)", p, before, size)
		}
	}
	for p := range parentBefore {
		if _, ok := after[p]; !ok {
			t.Errorf("removed from disk: %s", p)
		}
	}
	for _, share := range []string{"share", "other"} {
		res := e.do(t, "GET", "/devstoreaccount1/"+share+"?restype=directory&comp=list", nil, nil)
		n := strings.Count(string(res.body), "<File>") + strings.Count(string(res.body), "<Directory>")
		if n != 1 {
			t.Errorf("share %s has %d entries: %s", share, n, res.body)
		}
	}
}

// TestRawPropertiesReads checks GET and HEAD wherever properties are read
// (filerest.md §2) and the headers of each.
func TestRawPropertiesReads(t *testing.T) {
	e := newEnv(t, noAuth)
	e.mustShareRaw(t, "share")
	if r := e.do(t, "PUT", "/devstoreaccount1/share/d?restype=directory", map[string]string{"x-ms-meta-k": "v"}, nil); r.status != 201 {
		t.Fatalf("create dir %d %s", r.status, r.body)
	}
	e.mustFileRaw(t, "/devstoreaccount1/share/d/f.txt", []byte("abc"))
	tests := []struct {
		path   string
		header string // a header the answer must carry
	}{
		{"/devstoreaccount1/share?restype=share", "x-ms-share-quota"},
		{"/devstoreaccount1/share?restype=share&comp=metadata", "ETag"},
		{"/devstoreaccount1/share?restype=directory", "x-ms-file-attributes"},
		{"/devstoreaccount1/share/d?restype=directory", "x-ms-meta-k"},
		{"/devstoreaccount1/share/d?restype=directory&comp=metadata", "x-ms-meta-k"},
		{"/devstoreaccount1/share/d/f.txt?comp=metadata", "x-ms-file-creation-time"},
	}
	for _, tt := range tests {
		for _, m := range []string{"GET", "HEAD"} {
			r := e.do(t, m, tt.path, nil, nil)
			if r.status != 200 || r.header.Get(tt.header) == "" || len(r.body) != 0 {
				t.Errorf("%s %s: %d, %s=%q, body %q", m, tt.path, r.status, tt.header, r.header.Get(tt.header), r.body)
			}
		}
	}
	r := e.do(t, "HEAD", "/devstoreaccount1/share/d/f.txt", nil, nil)
	if r.status != 200 || r.header.Get("Content-Length") != "3" || r.header.Get("x-ms-type") != "File" {
		t.Fatalf("HEAD file: %d %v", r.status, r.header)
	}
	for _, h := range []string{"x-ms-file-creation-time", "x-ms-file-last-write-time", "x-ms-file-change-time"} {
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$`).MatchString(r.header.Get(h)) {
			t.Errorf("%s = %q: want 7 fractional digits", h, r.header.Get(h))
		}
	}
}
