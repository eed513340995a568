package reliability

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
)

const hostileShare = "hostile"

// rawReply is what a raw request got back.
type rawReply struct {
	status int
	code   string // x-ms-error-code
	body   []byte
	err    error // transport: the server closed the connection, …
}

func (r rawReply) String() string {
	if r.err != nil {
		return "transport error: " + r.err.Error()
	}
	return fmt.Sprintf("%d %s", r.status, r.code)
}

// rawDo writes head (request line and headers, CRLF-terminated, without the
// blank line) and then body (which may stream forever; it is stopped when
// the reply arrives) on a fresh connection and reads the reply.
func rawDo(addr, head string, body func(w io.Writer) error) rawReply {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return rawReply{err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	go func() {
		w := bufio.NewWriterSize(c, 64<<10)
		if _, err := io.WriteString(w, head+"\r\n"); err != nil {
			return
		}
		if body != nil {
			if err := body(w); err != nil {
				return
			}
		}
		w.Flush()
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return rawReply{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return rawReply{status: resp.StatusCode, code: resp.Header.Get("x-ms-error-code"), body: b}
}

// TestHostileInput sends absurd, malformed, unauthenticated and
// path-traversing requests to a running serve over raw TCP. Each must be
// refused with its Azure status and code, the server's peak memory must
// stay bounded, and nothing outside --data may be read or written.
func TestHostileInput(t *testing.T) {
	top := t.TempDir()
	data := filepath.Join(top, "data")
	const secret = "CANARY-SECRET-7f3a9c"
	canary := filepath.Join(top, "canary")
	if err := os.WriteFile(canary, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, data, "--debug") // --debug logs each failed request: the truncated upload's end
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	svc := serviceClient(t, s.RESTURL, 3)
	if _, err := svc.CreateShare(ctx, hostileShare, nil); err != nil {
		t.Fatal(err)
	}
	content := record(1, 0, 1, 100_000)
	fc := svc.NewShareClient(hostileShare).NewRootDirectoryClient().NewFileClient("f")
	if _, err := fc.Create(ctx, int64(len(content)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader(content)), nil); err != nil {
		t.Fatal(err)
	}
	good := mustQuery(t, "?"+accountSAS(t, svc))
	expiredURL, err := svc.GetSASURL(sas.AccountResourceTypes{Service: true, Container: true, Object: true},
		sas.AccountPermissions{Read: true}, time.Now().Add(-time.Hour), &sasStart)
	if err != nil {
		t.Fatal(err)
	}
	expired := mustQuery(t, expiredURL)
	tampered := cloneQuery(good)
	sig := []byte(tampered.Get("sig"))
	sig[0] ^= 1
	if sig[0] == '+' || sig[0] == '/' || sig[0] == '=' {
		sig[0] = 'A'
	}
	tampered.Set("sig", string(sig))
	widened := cloneQuery(good)
	widened.Set("sp", "rwdlacup") // permissions the signature did not cover

	hwm0, err := vmHWM(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	acct := "/" + devAccount
	fpath := acct + "/" + hostileShare + "/f"
	q := "?" + good.Encode()
	hostHdr := "Host: " + s.Addr + "\r\nx-ms-version: 2025-05-05\r\n"
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\n" + hostHdr }
	put := func(path, hdrs string) string { return "PUT " + path + " HTTP/1.1\r\n" + hostHdr + hdrs }

	manyHeaders := new(strings.Builder)
	for i := 0; i < 10_000; i++ {
		fmt.Fprintf(manyHeaders, "x-ms-meta-h%d: v\r\n", i)
	}
	bigValue := "x-ms-meta-big: " + strings.Repeat("a", 1<<20) + "\r\n"
	hugeValue := "x-ms-source-content-md5: " + strings.Repeat("A", 5_592_408) + "\r\n"
	endless := func(w io.Writer) error { // chunked, never ends
		chunk := fmt.Sprintf("%x\r\n%s\r\n", 64<<10, bytes.Repeat([]byte{'z'}, 64<<10))
		for {
			if _, err := io.WriteString(w, chunk); err != nil {
				return err
			}
		}
	}
	cases := []struct {
		name   string
		head   string
		body   func(io.Writer) error
		status int    // 0: the connection may also be refused or closed
		code   string // "" when net/http answers before blobshare sees it; "A|B": either
	}{
		{"content length 2^63", put(fpath+q+"&comp=range", "x-ms-write: update\r\nx-ms-range: bytes=0-9\r\nContent-Length: 9223372036854775808\r\n"), nil, 400, ""},
		{"content length 2^63-1", put(fpath+q+"&comp=range", "x-ms-write: update\r\nx-ms-range: bytes=0-9\r\nContent-Length: 9223372036854775807\r\n"), nil, 413, "RequestBodyTooLarge"},
		{"x-ms-content-length 2^63", put(acct+"/"+hostileShare+"/big"+q, "x-ms-type: file\r\nx-ms-content-length: 9223372036854775808\r\nContent-Length: 0\r\n"), nil, 400, "InvalidHeaderValue"},
		{"x-ms-content-length 2^63-1", put(acct+"/"+hostileShare+"/big"+q, "x-ms-type: file\r\nx-ms-content-length: 9223372036854775807\r\nContent-Length: 0\r\n"), nil, 400, "OutOfRangeInput"},
		{"resize to 2^63", put(fpath+q+"&comp=properties", "x-ms-content-length: 9223372036854775808\r\nContent-Length: 0\r\n"), nil, 400, "InvalidHeaderValue"},
		{"read range to 2^63", get(fpath+q) + "x-ms-range: bytes=0-9223372036854775808\r\n", nil, 400, "InvalidHeaderValue"},
		{"write range to 2^63-1", put(fpath+q+"&comp=range", "x-ms-write: update\r\nx-ms-range: bytes=0-9223372036854775807\r\nContent-Length: 0\r\n"), nil, 400, "InvalidHeaderValue"},
		{"10,000 headers", get(fpath+q) + manyHeaders.String(), nil, 400, "RequestHeaderFieldsTooLarge"},
		{"1 MB header value", get(fpath+q) + bigValue, nil, 400, "RequestHeaderFieldsTooLarge"},
		// 5.6 MB: azblob's TestUploadPagesFromURLWithMD5 sends a 4 MiB
		// x-ms-source-content-md5; Azure answers 400, net/http's own cap
		// answered 431 (storagehttp.MaxRequestHeaderBytes).
		{"6 MB header value", get(fpath+q) + hugeValue, nil, 400, "RequestHeaderFieldsTooLarge"},
		{"endless chunked body", put(fpath+q+"&comp=range", "x-ms-write: update\r\nx-ms-range: bytes=0-9\r\nTransfer-Encoding: chunked\r\n"), endless, 411, "MissingContentLengthHeader"},
		{"malformed XML", put(acct+q+"&restype=service&comp=properties", "Content-Length: 21\r\n"), str("<StorageServiceProp<<"), 400, "InvalidXmlDocument"},
		{"absurd maxresults", get(acct + "/" + hostileShare + q + "&restype=directory&comp=list&maxresults=99999999999999999999999"), nil, 400, "InvalidQueryParameterValue"},
		{"negative maxresults", get(acct + "/" + hostileShare + q + "&restype=directory&comp=list&maxresults=-5"), nil, 400, "OutOfRangeInput|OutOfRangeQueryParameterValue|InvalidQueryParameterValue"},
		{"unsigned", get(fpath), nil, 401, "NoAuthenticationInformation"},
		{"wrong key", get(fpath) + "Authorization: SharedKey " + devAccount + ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\nx-ms-date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n", nil, 403, "AuthenticationFailed"},
		{"expired SAS", get(fpath + "?" + expired.Encode()), nil, 403, "AuthenticationFailed"},
		{"tampered SAS signature", get(fpath + "?" + tampered.Encode()), nil, 403, "AuthenticationFailed"},
		{"SAS permissions widened", get(fpath + "?" + widened.Encode()), nil, 403, "AuthenticationFailed"},
		{"wrong account", get("/otheraccount/" + hostileShare + "/f" + q), nil, 400, "InvalidUri|AuthenticationFailed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := rawDo(s.Addr, tc.head, tc.body)
			t.Logf("%s → %v", tc.name, rep)
			if bytes.Contains(rep.body, []byte(secret)) {
				t.Fatalf("reply leaks the canary: %q", rep.body)
			}
			if tc.status == 0 {
				if rep.err == nil && rep.status < 400 {
					t.Fatalf("got %v; want a refusal", rep)
				}
				return
			}
			if rep.err != nil || rep.status != tc.status || !oneOf(rep.code, tc.code) {
				t.Fatalf("got %v; want %d %s", rep, tc.status, tc.code)
			}
		})
	}

	// Path traversal: every spelling is refused before it reaches fs, on
	// reads and on writes, and the canary beside --data is never served
	// nor changed.
	traversals := []string{
		"/" + hostileShare + "/../../canary",
		"/" + hostileShare + "/..%2f..%2fcanary",
		"/" + hostileShare + "/%2e%2e/%2e%2e/canary",
		"/" + hostileShare + "/%2E%2E%2F%2E%2E%2Fcanary",
		"/" + hostileShare + "/..%5c..%5ccanary",
		"/" + hostileShare + "/a%00b",
		"/" + hostileShare + "/dir%2f..%2f..%2f..%2fcanary",
		"/..%2fcanary",
		"/%2e%2e",
	}
	for _, p := range traversals {
		for _, method := range []string{"GET", "PUT"} {
			t.Run(method+" "+p, func(t *testing.T) {
				head := method + " " + acct + p + q + " HTTP/1.1\r\n" + hostHdr
				if method == "PUT" {
					head += "x-ms-type: file\r\nx-ms-content-length: 16\r\nContent-Length: 0\r\n"
				}
				rep := rawDo(s.Addr, head, nil)
				t.Logf("%s %s → %v", method, p, rep)
				if bytes.Contains(rep.body, []byte(secret)) {
					t.Fatalf("reply leaks the canary: %q", rep.body)
				}
				if rep.err != nil || rep.status < 400 || rep.status >= 500 {
					t.Fatalf("got %v; want a 4xx refusal", rep)
				}
			})
		}
	}

	// A truncated body (the client dies half-way) writes nothing.
	t.Run("truncated body", func(t *testing.T) {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "%s", put(fpath+q+"&comp=range", "x-ms-write: update\r\nx-ms-range: bytes=0-999\r\nContent-Length: 1000\r\n")+"\r\n")
		c.Write(bytes.Repeat([]byte{'T'}, 500))
		c.Close()
	})
	// The server is done with the truncated upload when it logs it as a
	// failed request (serve --debug): compare only then.
	truncatedDone := regexp.MustCompile(`msg="request failed" method=PUT path=` + regexp.QuoteMeta(fpath) + ` status=4\d\d`)
	for deadline := time.Now().Add(30 * time.Second); !truncatedDone.MatchString(s.Stderr.String()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve never logged the truncated upload as failed:\n%s", lastLines(s.Stderr.String(), 40))
		}
	}
	got, _, err := download(ctx, fc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("the stored file changed under hostile requests (%d bytes, want %d unchanged)", len(got), len(content))
	}
	if b, err := os.ReadFile(canary); err != nil || string(b) != secret {
		t.Errorf("canary beside --data changed: %q, %v", b, err)
	}
	ents, err := os.ReadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "data" && e.Name() != "canary" {
			t.Errorf("something was created beside --data: %s", e.Name())
		}
	}
	hwm, err := vmHWM(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server VmHWM: %d KiB before the hostile requests, %d KiB after", hwm0, hwm)
	fmt.Printf("hostile input: server VmHWM %d KiB → %d KiB\n", hwm0, hwm)
	if hwm-hwm0 > 96<<10 {
		t.Errorf("server peak memory grew by %d KiB under hostile requests; want bounded (< 96 MiB)", hwm-hwm0)
	}
	// And it still answers.
	if _, err := fc.GetProperties(ctx, nil); err != nil {
		t.Errorf("server no longer answers after the hostile requests: %v", err)
	}
}

var sasStart = service.GetSASURLOptions{StartTime: ptrTime(time.Now().Add(-2 * time.Hour))}

func ptrTime(t time.Time) *time.Time { return &t }

func str(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func mustQuery(t *testing.T, u string) url.Values {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query()
}

func cloneQuery(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// oneOf reports whether code is one of the |-separated alternatives.
func oneOf(code, alts string) bool {
	for _, a := range strings.Split(alts, "|") {
		if code == a {
			return true
		}
	}
	return false
}

// accountSAS returns the query of an account SAS allowing everything for
// an hour.
func accountSAS(t *testing.T, svc *service.Client) string {
	t.Helper()
	u, err := svc.GetSASURL(sas.AccountResourceTypes{Service: true, Container: true, Object: true},
		sas.AccountPermissions{Read: true, Write: true, Create: true, Delete: true, List: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.RawQuery
}
