package filerest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
)

// Fuzz targets. Their seed corpora (testdata/fuzz/<name>) run as part of
// plain `go test`; explore further with, for example,
//   go test ./filerest -run '^$' -fuzz '^FuzzParseRange$' -fuzztime 10s

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-3", "bytes=3-", "bytes=-3", "bytes=5-4", "bytes=0-1,2-3", "bytes=", "bytes=9223372036854775807-"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, requireEnd bool) {
		r, err := parseRange("x-ms-range", v, requireEnd)
		if err != nil {
			if codeOf(err) != CodeInvalidHeaderValue {
				t.Fatalf("parseRange(%q): unexpected error %v", v, err)
			}
			return
		}
		if r.start < 0 || (r.end >= 0 && r.end < r.start) || (r.end < 0 && (requireEnd || r.end != -1)) {
			t.Fatalf("parseRange(%q) = %+v: invalid result", v, r)
		}
		// Round trip.
		s := fmt.Sprintf("bytes=%d-", r.start)
		if r.end >= 0 {
			s += fmt.Sprint(r.end)
		}
		r2, err := parseRange("x-ms-range", s, requireEnd)
		if err != nil || r2 != r {
			t.Fatalf("round trip %q → %q: %+v, %v", v, s, r2, err)
		}
	})
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/devstoreaccount1/share/dir/f.txt", "/devstoreaccount1/share/..", "/devstoreaccount1/share/%2e%2e/x",
		`/devstoreaccount1/share/a\b`, "/devstoreaccount1/share/a%2Fb", "/devstoreaccount1/", "/devstoreaccount1/share/a%20b/"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, escaped string, dot bool) {
		p, err := parsePath("", escaped, dot)
		if err != nil {
			if codeOf(err) == "" {
				t.Fatalf("parsePath(%q): untyped error %v", escaped, err)
			}
			return
		}
		if validAccount(p.Account) != nil || (p.Share != "" && validShareName(p.Share) != nil) {
			t.Fatalf("parsePath(%q) accepted %+v", escaped, p)
		}
		for _, part := range p.Parts {
			if part == "." || part == ".." || strings.ContainsAny(part, "/\\\x00") || fs.ValidateName(part) != nil {
				t.Fatalf("parsePath(%q) accepted component %q", escaped, part)
			}
		}
		if p.Share == "" && len(p.Parts) > 0 {
			t.Fatalf("parsePath(%q): parts without a share", escaped)
		}
		// Re-escaping the result parses to the same thing.
		s := "/" + p.Account
		if p.Share != "" {
			s += "/" + p.Share
		}
		for _, part := range p.Parts {
			s += "/" + url.PathEscape(part)
		}
		p2, err := parsePath("", s, dot)
		if err != nil || p2.Account != p.Account || p2.Share != p.Share || p2.Path() != p.Path() {
			t.Fatalf("re-parse of %q (%q) = %+v, %v; want %+v", escaped, s, p2, err, p)
		}
	})
}

// FuzzSharedKey checks the verifier against the Go SDK's signer for
// metadata names (the part of the string-to-sign whose order is subtle)
// and that the collation is a consistent order.
func FuzzSharedKey(f *testing.F) {
	for _, s := range [][2]string{{"a1", "a_1"}, {"alpha", "beta"}, {"a_b", "ab"}, {"Z9", "z_"}, {"_", "__"}, {"x", "x1_"}} {
		f.Add(s[0], s[1])
	}
	a := sharedKeyAuth{devSigner(f)}
	f.Fuzz(func(t *testing.T, k1, k2 string) {
		for _, k := range []string{k1, k2} {
			if !validIdentifier(k) || len(k) > 64 {
				return
			}
		}
		if strings.EqualFold(k1, k2) {
			return
		}
		c1 := compareHeaderNames("x-ms-meta-"+k1, "x-ms-meta-"+k2)
		c2 := compareHeaderNames("x-ms-meta-"+k2, "x-ms-meta-"+k1)
		if (c1 < 0) != (c2 > 0) || (c1 == 0) != (c2 == 0) {
			t.Fatalf("compare(%q,%q)=%d but reverse %d", k1, k2, c1, c2)
		}
		v := "value"
		req := sdkSigned(t, "http://127.0.0.1:10003/devstoreaccount1/share/f", map[string]*string{k1: &v, k2: &v})
		if verdict, _, err := a.authenticate(req, time.Now()); verdict != pass {
			t.Fatalf("keys %q %q: %v\n%s", k1, k2, err, sharedKeyStringToSign(DevAccount, req))
		}
	})
}

func FuzzParseAttributes(f *testing.F) {
	for _, s := range []string{"None", "ReadOnly|Hidden", " archive | readonly ", "Bogus", "||", "Directory|None"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a, err := parseAttributes("x-ms-file-attributes", v)
		if err != nil {
			if codeOf(err) != CodeInvalidHeaderValue {
				t.Fatalf("parseAttributes(%q): %v", v, err)
			}
			return
		}
		s := formatAttributes(a)
		b, err := parseAttributes("x-ms-file-attributes", s)
		if err != nil || a != b {
			t.Fatalf("round trip %q → %q → %v, %v", v, s, b, err)
		}
	})
}

func FuzzParseSMBTime(f *testing.F) {
	for _, s := range []string{"now", "Preserve", "2024-01-02T03:04:05.1234567Z", "2024-01-02T03:04:05+01:00", "2024-13-01T00:00:00Z", "source"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("x-ms-file-change-time", v)
		st, ok, err := parseSMBTime(h, "x-ms-file-change-time", "now", "preserve")
		if err != nil {
			if codeOf(err) != CodeInvalidHeaderValue {
				t.Fatalf("parseSMBTime(%q): %v", v, err)
			}
			return
		}
		if !ok || st.Keyword != "" {
			return
		}
		// What we print, we (and the SDK's strict layout) parse back.
		out := formatTime7(st.Time)
		back, err := time.Parse(timeLayout7, out)
		if err != nil || !back.Equal(st.Time.Truncate(100*time.Nanosecond)) && st.Time.Year() >= 0 && st.Time.Year() <= 9999 {
			t.Fatalf("%q → %q → %v, %v", v, out, back, err)
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	f.Add("x-ms-meta-a_1", "v")
	f.Add("x-ms-meta-1a", "v")
	f.Add("x-ms-meta-", "")
	f.Add("x-ms-meta-k", "a\x00b")
	f.Fuzz(func(t *testing.T, name, value string) {
		h := http.Header{name: []string{value}}
		md, err := parseMetadata(h)
		if err != nil {
			if codeOf(err) != CodeInvalidMetadata {
				t.Fatalf("parseMetadata(%q: %q): %v", name, value, err)
			}
			return
		}
		for k, v := range md {
			if !validIdentifier(k) || strings.ContainsAny(v, "\x00\r\n") {
				t.Fatalf("accepted %q: %q", k, v)
			}
		}
	})
}

func FuzzDecodeXMLBody(f *testing.F) {
	f.Add("<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled></HourMetrics></StorageServiceProperties>")
	f.Add("<StorageServiceProperties><HourMetrics>")
	f.Add("<Other/>")
	f.Add("<StorageServiceProperties><Cors><CorsRule><MaxAgeInSeconds>x</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>")
	f.Fuzz(func(t *testing.T, body string) {
		r, _ := http.NewRequest("PUT", "http://127.0.0.1/devstoreaccount1/?restype=service&comp=properties", strings.NewReader(body))
		var p serviceProps
		if err := decodeXMLBody(r, &p); err != nil && codeOf(err) != CodeInvalidXMLDocument && codeOf(err) != CodeRequestBodyTooLarge {
			t.Fatalf("decode %q: %v", body, err)
		}
	})
}
