package blob_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestHostileInput sends malformed and malicious requests by hand and
// checks each gets its documented status and error code — never a 5xx
// (a panic would be a 500 from the recovery middleware).
func TestHostileInput(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "ctr", "small", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	longID := base64.StdEncoding.EncodeToString(make([]byte, 65))
	put := map[string]string{"x-ms-blob-type": "BlockBlob"}
	cases := []struct {
		name         string
		method, path string
		hdr          map[string]string
		body         string
		status       int
		code         string
	}{
		{"block list not XML", "PUT", "/ctr/bl?comp=blocklist", nil, "<BlockList><Latest>", 400, "InvalidXmlDocument"},
		{"block list wrong root", "PUT", "/ctr/bl?comp=blocklist", nil, "<Foo/>", 400, "InvalidXmlDocument"},
		{"block list unknown element", "PUT", "/ctr/bl?comp=blocklist", nil, "<BlockList><Newest>QUFB</Newest></BlockList>", 400, "InvalidXmlDocument"},
		{"block list nested element", "PUT", "/ctr/bl?comp=blocklist", nil, "<BlockList><Latest><x/></Latest></BlockList>", 400, "InvalidXmlDocument"},
		{"block list two roots", "PUT", "/ctr/bl?comp=blocklist", nil, "<BlockList/><BlockList/>", 400, "InvalidXmlDocument"},
		{"block list id not base64", "PUT", "/ctr/bl?comp=blocklist", nil, "<BlockList><Latest>!!!</Latest></BlockList>", 400, "InvalidBlockList"},
		{"block id not base64", "PUT", "/ctr/bl?comp=block&blockid=%21%21", nil, "data", 400, "InvalidBlockId"},
		{"block id too long", "PUT", "/ctr/bl?comp=block&blockid=" + longID, nil, "data", 400, "InvalidBlockId"},
		{"block id missing", "PUT", "/ctr/bl?comp=block", nil, "data", 400, "MissingRequiredQueryParameter"},
		{"bad If-Modified-Since", "GET", "/ctr/small", map[string]string{"If-Modified-Since": "yesterday"}, "", 400, "InvalidHeaderValue"},
		{"bad If-Unmodified-Since", "PUT", "/ctr/small?comp=metadata", map[string]string{"If-Unmodified-Since": "2026-13-45"}, "", 400, "InvalidHeaderValue"},
		{"range reversed", "GET", "/ctr/small", map[string]string{"x-ms-range": "bytes=5-2"}, "", 400, "InvalidHeaderValue"},
		{"range garbage", "GET", "/ctr/small", map[string]string{"Range": "bytes=abc"}, "", 400, "InvalidHeaderValue"},
		{"range negative", "GET", "/ctr/small", map[string]string{"x-ms-range": "bytes=-5"}, "", 400, "InvalidHeaderValue"},
		{"range past the end", "GET", "/ctr/small", map[string]string{"x-ms-range": "bytes=10-"}, "", 416, "InvalidRange"},
		{"range md5 too large", "GET", "/ctr/small", map[string]string{"x-ms-range": "bytes=0-", "x-ms-range-get-content-md5": "true"}, "", 400, "OutOfRangeInput"},
		{"container name ..", "PUT", "/%2E%2E?restype=container", nil, "", 400, "InvalidResourceName"},
		{"container name upper case", "PUT", "/ABC?restype=container", nil, "", 400, "InvalidResourceName"},
		{"blob name with NUL", "PUT", "/ctr/a%00b", put, "x", 400, "InvalidResourceName"},
		{"blob name too long", "PUT", "/ctr/" + strings.Repeat("n", 1025), put, "x", 400, "InvalidResourceName"},
		{"metadata too large", "PUT", "/ctr/small?comp=metadata", map[string]string{"x-ms-meta-big": strings.Repeat("v", 9<<10)}, "", 400, "InvalidMetadata"},
		{"metadata bad name", "PUT", "/ctr/small?comp=metadata", map[string]string{"x-ms-meta-1abc": "v"}, "", 400, "InvalidMetadata"},
		{"lease id not a GUID", "PUT", "/ctr/small?comp=metadata", map[string]string{"x-ms-lease-id": "not-a-guid"}, "", 400, "InvalidHeaderValue"},
		{"lease action unknown", "PUT", "/ctr/small?comp=lease", map[string]string{"x-ms-lease-action": "steal"}, "", 400, "InvalidHeaderValue"},
		{"lease action missing", "PUT", "/ctr/small?comp=lease", nil, "", 400, "MissingRequiredHeader"},
		{"unknown comp", "GET", "/ctr/small?comp=frobnicate", nil, "", 400, "InvalidQueryParameterValue"},
		{"unknown blob type", "PUT", "/ctr/pb", map[string]string{"x-ms-blob-type": "FooBlob"}, "", 400, "InvalidHeaderValue"},
		{"page blob without length", "PUT", "/ctr/pb", map[string]string{"x-ms-blob-type": "PageBlob"}, "", 400, "MissingRequiredHeader"},
		{"page blob length unaligned", "PUT", "/ctr/pb", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1000"}, "", 400, "InvalidHeaderValue"},
		{"blob type missing", "PUT", "/ctr/nt", nil, "x", 400, "MissingRequiredHeader"},
		{"content md5 mismatch", "PUT", "/ctr/small", map[string]string{"x-ms-blob-type": "BlockBlob", "Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, "changed", 400, "Md5Mismatch"},
		{"content md5 malformed", "PUT", "/ctr/small", map[string]string{"x-ms-blob-type": "BlockBlob", "Content-MD5": "xyz"}, "changed", 400, "InvalidHeaderValue"},
		{"maxresults zero", "GET", "/?comp=list&maxresults=0", nil, "", 400, "OutOfRangeQueryParameterValue"},
		{"maxresults text", "GET", "/ctr?restype=container&comp=list&maxresults=ten", nil, "", 400, "InvalidQueryParameterValue"},
		{"blocklisttype bad", "GET", "/ctr/small?comp=blocklist&blocklisttype=some", nil, "", 400, "InvalidQueryParameterValue"},
		{"bad version", "GET", "/ctr/small", map[string]string{"x-ms-version": "2020-13-45"}, "", 400, "InvalidHeaderValue"},
		{"public access bad", "PUT", "/newctr?restype=container", map[string]string{"x-ms-blob-public-access": "everyone"}, "", 400, "InvalidHeaderValue"},
		{"wrong verb", "POST", "/ctr/small", nil, "", 405, "UnsupportedHttpVerb"},
		{"missing container", "GET", "/nosuch/blob", nil, "", 404, "ContainerNotFound"},
		{"blob version", "GET", "/ctr/small?versionid=2026-01-01T00:00:00.0000000Z", nil, "", 400, "InvalidQueryParameterValue"},
		{"incremental copy from a bad URL", "PUT", "/ctr/small?comp=incrementalcopy", map[string]string{"x-ms-copy-source": "http://x/y/z"}, "", 400, "InvalidHeaderValue"},
		{"put block from another account", "PUT", "/ctr/bl?comp=block&blockid=QUFB", map[string]string{"x-ms-copy-source": "http://x/otheraccount/c/b"}, "", 400, "CannotVerifyCopySource"},
		{"put block from a bad URL", "PUT", "/ctr/bl?comp=block&blockid=QUFB", map[string]string{"x-ms-copy-source": "http://x/"}, "", 400, "InvalidHeaderValue"},
		{"put page from URL without source range", "PUT", "/ctr/small?comp=page", map[string]string{"x-ms-copy-source": "http://x/y/z", "x-ms-page-write": "update", "x-ms-range": "bytes=0-511"}, "", 400, "InvalidHeaderValue"},
		{"empty append block", "PUT", "/ctr/small?comp=appendblock", nil, "", 400, "InvalidHeaderValue"},
		{"missing blob", "GET", "/ctr/nosuch", nil, "", 404, "BlobNotFound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, code, body := rawRequest(t, e, tc.method, tc.path, tc.hdr, tc.body)
			if st != tc.status || code != tc.code {
				t.Fatalf("%d %s, want %d %s\n%s", st, code, tc.status, tc.code, body)
			}
		})
	}
	// The failed Put Blob with a wrong MD5 left the blob as it was.
	if got := download(t, c.ServiceClient().NewContainerClient("ctr").NewBlobClient("small"), nil); string(got) != "0123456789" {
		t.Fatalf("blob after refused uploads: %q", got)
	}
}

// TestDotNames: ".." and "." are blob names like any other (never paths
// on disk): stored, read back and listed under their own names.
func TestDotNames(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	c := e.client(t)
	if _, err := c.CreateContainer(ctx, "ctr", nil); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"/ctr/..": "..", "/ctr/a/../b": "a/../b", "/ctr/%2E%2E%2Fescape": "../escape", "/ctr/x/./y": "x/./y"}
	for path, name := range names {
		st, code, body := rawRequest(t, e, "PUT", path, map[string]string{"x-ms-blob-type": "BlockBlob"}, "content of "+name)
		if st != http.StatusCreated {
			t.Fatalf("put %s: %d %s %s", path, st, code, body)
		}
		st, _, body = rawRequest(t, e, "GET", path, nil, "")
		if st != 200 || body != "content of "+name {
			t.Fatalf("get %s: %d %q", path, st, body)
		}
	}
	pager := c.NewListBlobsFlatPager("ctr", nil)
	resp, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range resp.Segment.BlobItems {
		got = append(got, *it.Name)
	}
	if strings.Join(got, " ") != ".. ../escape a/../b x/./y" {
		t.Fatalf("listed %q", got)
	}
}

// TestAuthFailures: unsigned, wrongly signed and wrong-account requests
// get 401/403 with the documented codes.
func TestAuthFailures(t *testing.T) {
	e := newEnv(t, nil)
	send := func(auth string) (int, string) {
		req, _ := http.NewRequest("GET", e.URL+"/?comp=list", nil)
		req.Header.Set("x-ms-version", "2025-01-05")
		req.Header.Set("x-ms-date", "Wed, 25 Nov 2026 10:00:00 GMT")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}
	for _, tc := range []struct {
		auth, code string
		status     int
	}{
		{"", "NoAuthenticationInformation", 401},
		{"SharedKey devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AuthenticationFailed", 403},
		{"SharedKey otheraccount:AAAA", "AuthenticationFailed", 403},
		{"SharedKey garbage", "AuthenticationFailed", 403},
		{"Bearer token", "AuthenticationFailed", 403},
	} {
		if st, code := send(tc.auth); st != tc.status || code != tc.code {
			t.Errorf("Authorization %q: %d %s, want %d %s", tc.auth, st, code, tc.status, tc.code)
		}
	}
	// A SAS with a wrong signature.
	resp, err := http.Get(e.URL + "/ctr/b?sv=2025-01-05&sr=b&sp=r&se=2099-01-01T00:00:00Z&sig=AAAA")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Errorf("bad SAS: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}

// TestRootContainer: a blob named right after the account lives in the
// $root container, reachable both ways.
func TestRootContainer(t *testing.T) {
	e := newEnv(t, nil)
	if st, code, body := rawRequest(t, e, "PUT", "/$root?restype=container", nil, ""); st != 201 {
		t.Fatalf("create $root: %d %s %s", st, code, body)
	}
	if st, code, body := rawRequest(t, e, "PUT", "/top.txt", map[string]string{"x-ms-blob-type": "BlockBlob"}, "at the root"); st != 201 {
		t.Fatalf("put /top.txt: %d %s %s", st, code, body)
	}
	if st, _, body := rawRequest(t, e, "GET", "/$root/top.txt", nil, ""); st != 200 || body != "at the root" {
		t.Fatalf("get /$root/top.txt: %d %q", st, body)
	}
	if st, _, body := rawRequest(t, e, "GET", "/top.txt", nil, ""); st != 200 || body != "at the root" {
		t.Fatalf("get /top.txt: %d %q", st, body)
	}
	if st, _, body := rawRequest(t, e, "GET", "?restype=container&comp=list", nil, ""); st != 200 || !strings.Contains(body, "<Name>top.txt</Name>") {
		t.Fatalf("list $root: %d %s", st, body)
	}
}

// TestContainerEmptyName: a container operation without a container name
// is 400 InvalidQueryParameterValue and creates nothing (azblob's
// TestContainerCreateEmptyName), rather than acting on $root.
func TestContainerEmptyName(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	c := e.client(t)
	if _, err := c.ServiceClient().NewContainerClient("").Create(ctx, nil); code(err) != "InvalidQueryParameterValue" {
		t.Fatalf("Create Container without a name: %v", err)
	}
	if _, err := c.ServiceClient().NewContainerClient("$root").GetProperties(ctx, nil); code(err) != "ContainerNotFound" {
		t.Fatalf("$root after the refused create: %v", err)
	}
	if st, code, _ := rawRequest(t, e, "DELETE", "?restype=container", nil, ""); st != 400 || code != "InvalidQueryParameterValue" {
		t.Fatalf("Delete Container without a name: %d %s", st, code)
	}
}
