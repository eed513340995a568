package filerest

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
)

// captureTransport records the request the SDK signed and answers 200
// without touching the network: the SDK is the oracle for SharedKey.
type captureTransport struct{ req *http.Request }

func (c *captureTransport) Do(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// sdkSigned makes the Go SDK sign a Set File Metadata request with md.
func sdkSigned(t testing.TB, fileURL string, md map[string]*string) *http.Request {
	t.Helper()
	cred, err := file.NewSharedKeyCredential(DevAccount, DevKey)
	if err != nil {
		t.Fatal(err)
	}
	tr := &captureTransport{}
	c, err := file.NewClientWithSharedKeyCredential(fileURL, cred, &file.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: tr, Retry: policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.SetMetadata(context.Background(), &file.SetMetadataOptions{Metadata: md})
	if tr.req == nil {
		t.Fatal("the SDK sent nothing")
	}
	return tr.req
}

func devSigner(t testing.TB) signer {
	key, err := base64.StdEncoding.DecodeString(DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return signer{account: DevAccount, key: key}
}

func TestSharedKeyMatchesSDK(t *testing.T) {
	a := sharedKeyAuth{devSigner(t)}
	v := "v"
	tests := []struct {
		name string
		url  string
		keys []string
	}{
		{"plain", "http://127.0.0.1:10003/devstoreaccount1/share/dir/file.txt", []string{"alpha", "beta"}},
		{"escaped name", "http://127.0.0.1:10003/devstoreaccount1/share/a%20b.txt", nil},
		{"underscore before digit", "http://127.0.0.1:10003/devstoreaccount1/share/f", []string{"a1", "a_1"}},
		{"underscore vs letters", "http://127.0.0.1:10003/devstoreaccount1/share/f", []string{"a_b", "ab", "aC"}},
		{"digits and case", "http://127.0.0.1:10003/devstoreaccount1/share/f", []string{"Z9", "z_", "_z", "zz", "Z1a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := map[string]*string{}
			for _, k := range tt.keys {
				md[k] = &v
			}
			req := sdkSigned(t, tt.url, md)
			verdict, _, err := a.authenticate(req, time.Now())
			if verdict != pass {
				t.Fatalf("verdict %v, err %v; string to sign:\n%s", verdict, err, sharedKeyStringToSign(DevAccount, req))
			}
			// A tampered request must fail.
			req.Header.Set("x-ms-meta-extra", "1")
			if verdict, _, err := a.authenticate(req, time.Now()); verdict != fail || codeOf(err) != CodeAuthenticationFailed {
				t.Fatalf("tampered request: verdict %v err %v", verdict, err)
			}
		})
	}
}

func TestSharedKeyRefusals(t *testing.T) {
	a := sharedKeyAuth{devSigner(t)}
	base := func() *http.Request {
		r, _ := http.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/share?restype=share", nil)
		r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		r.Header.Set("x-ms-version", "2026-06-06")
		return r
	}
	sign := func(r *http.Request) string { return a.s.sign(sharedKeyStringToSign(DevAccount, r)) }
	tests := []struct {
		name string
		auth func(r *http.Request) string
		want verdict
	}{
		{"none", func(*http.Request) string { return "" }, notMine},
		{"good", func(r *http.Request) string { return "SharedKey devstoreaccount1:" + sign(r) }, pass},
		{"wrong account", func(r *http.Request) string { return "SharedKey other:" + sign(r) }, fail},
		{"bad signature", func(r *http.Request) string { return "SharedKey devstoreaccount1:AAAA" }, fail},
		{"no colon", func(r *http.Request) string { return "SharedKey devstoreaccount1" }, fail},
		{"lite", func(r *http.Request) string { return "SharedKeyLite devstoreaccount1:" + sign(r) }, fail},
		{"bearer", func(r *http.Request) string { return "Bearer abc" }, fail},
		{"garbage", func(r *http.Request) string { return "xyz" }, fail},
	}
	for _, tt := range tests {
		r := base()
		if v := tt.auth(r); v != "" {
			r.Header.Set("Authorization", v)
		}
		got, _, err := a.authenticate(r, time.Now())
		if got != tt.want {
			t.Errorf("%s: verdict %v (%v), want %v", tt.name, got, err, tt.want)
		}
		if got == fail && codeOf(err) != CodeAuthenticationFailed {
			t.Errorf("%s: code %q", tt.name, codeOf(err))
		}
	}
}

func TestCompareHeaderNames(t *testing.T) {
	// Pairs in the order the .NET collation puts them (filerest.md §8.2).
	ordered := [][2]string{
		{"x-ms-meta-a_1", "x-ms-meta-a1"},
		{"x-ms-meta-ab", "x-ms-meta-a-b"},
		{"x-ms-meta-ab", "x-ms-meta-a-c"},
		{"x-ms-meta-a", "x-ms-meta-a-"},
		{"x-ms-date", "x-ms-meta-a"},
		{"x-ms-meta-ab", "x-ms-meta-ac"},
		{"x-ms-meta-a.b", "x-ms-meta-a_b"},
		{"x-ms-meta-a9", "x-ms-meta-aa"},
		{"x-ms-meta-a", "x-ms-meta-aa"},
		{"x-ms-file-attributes", "x-ms-file-change-time"},
		{"x-ms-range", "x-ms-type"},
	}
	for _, p := range ordered {
		if c := compareHeaderNames(p[0], p[1]); c >= 0 {
			t.Errorf("compare(%q, %q) = %d, want < 0", p[0], p[1], c)
		}
		if c := compareHeaderNames(p[1], p[0]); c <= 0 {
			t.Errorf("compare(%q, %q) = %d, want > 0", p[1], p[0], c)
		}
	}
	if c := compareHeaderNames("x-ms-a", "x-ms-a"); c != 0 {
		t.Errorf("equal names compare %d", c)
	}
	names := []string{"x-ms-version", "x-ms-meta-a1", "x-ms-date", "x-ms-meta-a_1", "x-ms-type"}
	sort.Slice(names, func(i, j int) bool { return compareHeaderNames(names[i], names[j]) < 0 })
	want := "x-ms-date x-ms-meta-a_1 x-ms-meta-a1 x-ms-type x-ms-version"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("sorted %q, want %q", got, want)
	}
}

func TestCanonicalizedResource(t *testing.T) {
	r, _ := http.NewRequest("GET", "http://127.0.0.1:10003/devstoreaccount1/share/a%20b?restype=directory&comp=list&include=Timestamps%2CEtag&B=2&b=1", nil)
	got := canonicalizedResource(DevAccount, r.URL)
	want := "/devstoreaccount1/devstoreaccount1/share/a%20b\nb:2\nb:1\ncomp:list\ninclude:Timestamps,Etag\nrestype:directory"
	// Upper and lower "b" are separate parameters that both lowercase to b.
	if got != want {
		t.Errorf("canonicalizedResource =\n%q\nwant\n%q", got, want)
	}
	r2, _ := http.NewRequest("GET", "http://127.0.0.1:10003", nil)
	if got := canonicalizedResource(DevAccount, r2.URL); got != "/devstoreaccount1/" {
		t.Errorf("empty path: %q", got)
	}
}
