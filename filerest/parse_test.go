package filerest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/fs"
)

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		in         string
		requireEnd bool
		want       byteRange
		wantCode   string
	}{
		{"bytes=0-3", false, byteRange{0, 3}, ""},
		{"bytes=3-", false, byteRange{3, -1}, ""},
		{"bytes=3-", true, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=5-4", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=-5", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=0-1,4-5", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=+1-2", false, byteRange{}, CodeInvalidHeaderValue},
		{"items=0-1", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=0-99999999999999999999", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes= 1-2", false, byteRange{}, CodeInvalidHeaderValue},
		{"bytes=4194304-8388607", true, byteRange{4194304, 8388607}, ""},
	}
	for _, tt := range tests {
		got, err := parseRange("x-ms-range", tt.in, tt.requireEnd)
		if codeOf(err) != tt.wantCode || (err == nil && got != tt.want) {
			t.Errorf("parseRange(%q, %v) = %v, %v; want %v, code %q", tt.in, tt.requireEnd, got, err, tt.want, tt.wantCode)
		}
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in       string
		dot      bool
		share    string
		path     string
		wantCode string
	}{
		{"/devstoreaccount1/", false, "", "", ""},
		{"/devstoreaccount1", false, "", "", ""},
		{"/devstoreaccount1/share", false, "share", "", ""},
		{"/devstoreaccount1/share/dir/a%20b.txt", false, "share", "dir/a b.txt", ""},
		{"/devstoreaccount1/share/dir/", false, "share", "dir", ""},
		{"/devstoreaccount1/share/name.", false, "share", "name", ""},
		{"/devstoreaccount1/share/name.", true, "share", "name.", ""},
		{"/devstoreaccount1/share/..", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/%2e%2e/x", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/%2E%2E", true, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/.", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%5C..%5Cb", false, "", "", CodeInvalidPathName},
		{`/devstoreaccount1/share/a\b`, false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%2Fb", false, "share", "a/b", ""},
		{"/devstoreaccount1/share/a%2F%2Fb", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%2F..%2Fb", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%00b", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%0Ab", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a//b", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/CON", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/lpt1", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/nul", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a:b", false, "", "", CodeInvalidPathName},
		// The same rules as the mount's and the session's (fs.ValidateName):
		// CON with an extension is a name; length counts characters.
		{"/devstoreaccount1/share/CON.txt", false, "share", "CON.txt", ""},
		{"/devstoreaccount1/share/CON.", false, "", "", CodeInvalidPathName}, // trailing dots go: CON
		{"/devstoreaccount1/share/" + strings.Repeat("%C3%A9", 255), false, "share", strings.Repeat("é", 255), ""},
		{"/devstoreaccount1/share/" + strings.Repeat("%C3%A9", 256), false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/a%3Fb", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/%ff", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/%zz", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/" + strings.Repeat("a", 256), false, "", "", CodeInvalidResourceName},
		{"/devstoreaccount1/share/" + strings.Repeat("a", 256), false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/share/" + strings.Repeat("a/", 251) + "a", false, "", "", CodeInvalidPathName},
		{"/devstoreaccount1/Share", false, "", "", CodeInvalidResourceName},
		{"/devstoreaccount1/a--b", false, "", "", CodeInvalidResourceName},
		{"/devstoreaccount1/ab", false, "", "", CodeInvalidResourceName},
		{"/devstoreaccount1/-ab", false, "", "", CodeInvalidResourceName},
		{"/DevStore/share", false, "", "", CodeInvalidURI},
		{"/../share", false, "", "", CodeInvalidURI},
		{"relative", false, "", "", CodeInvalidURI},
	}
	for _, tt := range tests {
		got, err := parsePath("", tt.in, tt.dot)
		if codeOf(err) != tt.wantCode {
			t.Errorf("parsePath(%q) error %v, want code %q", tt.in, err, tt.wantCode)
			continue
		}
		if err == nil && (got.Share != tt.share || got.Path() != tt.path) {
			t.Errorf("parsePath(%q) = %q %q, want %q %q", tt.in, got.Share, got.Path(), tt.share, tt.path)
		}
	}
}

func TestParseAttributes(t *testing.T) {
	tests := []struct {
		in       string
		want     fs.Attributes
		wantCode string
	}{
		{"None", 0, ""},
		{"none", 0, ""},
		{"ReadOnly|Hidden", fs.AttrReadOnly | fs.AttrHidden, ""},
		{" archive | readonly ", fs.AttrArchive | fs.AttrReadOnly, ""},
		{"Directory", fs.AttrDirectory, ""},
		{"NotContentIndexed|NoScrubData|Offline|Temporary|System", fs.AttrNotContentIndexed | fs.AttrNoScrubData | fs.AttrOffline | fs.AttrTemporary | fs.AttrSystem, ""},
		{"ReadOnly||Hidden", 0, CodeInvalidHeaderValue},
		{"Bogus", 0, CodeInvalidHeaderValue},
		{"", 0, CodeInvalidHeaderValue},
		{"None|ReadOnly", 0, CodeInvalidHeaderValue},
		{"ReadOnly | none", 0, CodeInvalidHeaderValue},
	}
	for _, tt := range tests {
		got, err := parseAttributes("x-ms-file-attributes", tt.in)
		if codeOf(err) != tt.wantCode || (err == nil && got != tt.want) {
			t.Errorf("parseAttributes(%q) = %v, %v; want %v %q", tt.in, got, err, tt.want, tt.wantCode)
		}
	}
	if got := formatAttributes(fs.AttrArchive | fs.AttrReadOnly); got != "ReadOnly | Archive" {
		t.Errorf("formatAttributes = %q", got)
	}
	if got := formatAttributes(0); got != "None" {
		t.Errorf("formatAttributes(0) = %q", got)
	}
}

func TestFormatTime7(t *testing.T) {
	tm := time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.FixedZone("x", 3600))
	if got := formatTime7(tm); got != "2024-01-02T02:04:05.1234567Z" {
		t.Errorf("formatTime7 = %q", got)
	}
	if got := formatTime7(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)); got != "2024-01-02T03:04:05.0000000Z" {
		t.Errorf("formatTime7 whole second = %q", got)
	}
	// The SDK's strict layout must parse what we emit.
	if _, err := time.Parse(timeLayout7, formatTime7(tm)); err != nil {
		t.Error(err)
	}
}

func TestParseSMBTime(t *testing.T) {
	tests := []struct {
		in      string
		keyword string
		want    time.Time
		code    string
	}{
		{"now", "now", time.Time{}, ""},
		{"NOW", "now", time.Time{}, ""},
		{"Preserve", "preserve", time.Time{}, ""},
		{"2024-01-02T03:04:05.1234567Z", "", time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.UTC), ""},
		{"2024-01-02T03:04:05Z", "", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), ""},
		{"source", "", time.Time{}, CodeInvalidHeaderValue},
		{"yesterday", "", time.Time{}, CodeInvalidHeaderValue},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set("x-ms-file-creation-time", tt.in)
		got, ok, err := parseSMBTime(h, "x-ms-file-creation-time", "now", "preserve")
		if codeOf(err) != tt.code {
			t.Errorf("parseSMBTime(%q) err %v want %q", tt.in, err, tt.code)
			continue
		}
		if err == nil && (!ok || got.Keyword != tt.keyword || !got.Time.Equal(tt.want)) {
			t.Errorf("parseSMBTime(%q) = %+v", tt.in, got)
		}
	}
}

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		headers map[string]string
		want    map[string]string
		code    string
	}{
		{map[string]string{"x-ms-meta-Foo": "bar", "Other": "x"}, map[string]string{"foo": "bar"}, ""},
		{map[string]string{"x-ms-meta-a_1": "1", "x-ms-meta-a1": "2"}, map[string]string{"a_1": "1", "a1": "2"}, ""},
		{map[string]string{"x-ms-meta-1a": "1"}, nil, CodeInvalidMetadata},
		{map[string]string{"x-ms-meta-a-b": "1"}, nil, CodeInvalidMetadata},
		{map[string]string{"x-ms-meta-big": strings.Repeat("v", 9000)}, nil, CodeInvalidMetadata},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.headers {
			h.Set(k, v)
		}
		got, err := parseMetadata(h)
		if codeOf(err) != tt.code {
			t.Errorf("parseMetadata(%v) err %v want %q", tt.headers, err, tt.code)
			continue
		}
		if err == nil && len(got) != len(tt.want) {
			t.Errorf("parseMetadata(%v) = %v want %v", tt.headers, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("parseMetadata(%v)[%q] = %q want %q", tt.headers, k, got[k], v)
			}
		}
	}
}

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"2026-06-06": true, "2099-12-31": true, "2019-02-02": true,
		"2026-13-01": false, "26-06-06": false, "2026-6-6": false, "latest": false, "": false, "2026-06-06x": false,
	} {
		if got := validVersion(v); got != want {
			t.Errorf("validVersion(%q) = %v", v, got)
		}
	}
}

func TestParseSizeHeader(t *testing.T) {
	tests := []struct {
		v    string
		want int64
		code string
	}{
		{"0", 0, ""}, {"1024", 1024, ""}, {"-1", 0, CodeOutOfRangeInput}, {"abc", 0, CodeInvalidHeaderValue},
		{"4398046511105", 0, CodeOutOfRangeInput}, {"1e3", 0, CodeInvalidHeaderValue},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set("x-ms-content-length", tt.v)
		got, _, err := parseSizeHeader(h, "x-ms-content-length", maxFileSize)
		if codeOf(err) != tt.code || (err == nil && got != tt.want) {
			t.Errorf("parseSizeHeader(%q) = %d, %v", tt.v, got, err)
		}
	}
}
