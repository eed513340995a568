package filerest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/storagehttp"
)

// Limits of the FileREST surface (filerest.md §10).
const (
	maxPutRange       = 4 << 20 // Put Range update, Create File body
	maxFileSize       = 4 << 40 // 4 TiB
	maxListResults    = 5000
	maxCopySourceLen  = 2048
	maxInlinePerm     = 8 << 10
	maxHeaderCount    = 256
	maxHeaderBytes    = 64 << 10
	maxSmallBody      = 64 << 10 // JSON/XML request bodies
	defaultShareQuota = 5120
	maxShareQuotaGiB  = 102400
	accountNameMaxLen = 24
	accountNameMinLen = 3
)

// byteRange is an inclusive byte range; end < 0 means open-ended.
type byteRange struct {
	start, end int64
}

// length returns the number of bytes of a closed range.
func (b byteRange) length() int64 { return b.end - b.start + 1 }

// parseRange parses a single "bytes=s-e" or "bytes=s-" range. Suffix
// ranges ("bytes=-n"), multiple ranges, e < s and anything malformed fail
// with 400 InvalidHeaderValue naming header. requireEnd demands "s-e".
func parseRange(header, v string, requireEnd bool) (byteRange, error) {
	bad := storagehttp.InvalidHeader(header, v)
	spec, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !ok {
		return byteRange{}, bad
	}
	s, e, ok := strings.Cut(spec, "-")
	if !ok || s == "" {
		return byteRange{}, bad
	}
	start, err := parseDecimal(s)
	if err != nil {
		return byteRange{}, bad
	}
	if e == "" {
		if requireEnd {
			return byteRange{}, bad
		}
		return byteRange{start: start, end: -1}, nil
	}
	end, err := parseDecimal(e)
	if err != nil || end < start {
		return byteRange{}, bad
	}
	return byteRange{start: start, end: end}, nil
}

// parseDecimal accepts only ASCII digits (no sign, no spaces) fitting int64.
func parseDecimal(s string) (int64, error) {
	if s == "" || len(s) > 19 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// requestRange returns the request's range: x-ms-range wins over Range
// (filerest.md §5.3). ok is false when neither is present.
func requestRange(h http.Header, requireEnd bool) (byteRange, bool, error) {
	name := "x-ms-range"
	v := h.Get(name)
	if v == "" {
		name = "Range"
		v = h.Get(name)
	}
	if v == "" {
		return byteRange{}, false, nil
	}
	r, err := parseRange(name, v, requireEnd)
	return r, err == nil, err
}

// resourcePath is a parsed request path: /<account>/<share>/<path...>.
type resourcePath struct {
	Account string
	Share   string   // "" for service-level requests
	Parts   []string // path components under the share; empty for the root
}

// Path returns the slash-joined path under the share.
func (p resourcePath) Path() string { return strings.Join(p.Parts, "/") }

// parsePath splits an escaped URL path into account, share and
// components. Below the share the path is decoded before it is split, so
// an escaped "/" separates components as the service does. It refuses "." and ".." (plain or encoded),
// backslashes, control characters, bad UTF-8, and names that break
// filerest.md §2.1. Trailing dots are trimmed unless allowTrailingDot.
//
// host is the host the request addressed: a production-style host
// (<account>.file.…) names the account and the path starts at the share
// (storagehttp.PathStyle).
func parsePath(host, escaped string, allowTrailingDot bool) (resourcePath, error) {
	escaped = storagehttp.PathStyle(host, "file", escaped)
	if !strings.HasPrefix(escaped, "/") {
		return resourcePath{}, errInvalidURI("the path must start with /")
	}
	rest := escaped[1:]
	acct, rest, _ := strings.Cut(rest, "/")
	account, err := url.PathUnescape(acct)
	if err != nil || account == "" {
		return resourcePath{}, errInvalidURI("bad account segment")
	}
	if err := validAccount(account); err != nil {
		return resourcePath{}, err
	}
	p := resourcePath{Account: account}
	if rest == "" {
		return p, nil
	}
	shareSeg, rest, _ := strings.Cut(rest, "/")
	share, err := url.PathUnescape(shareSeg)
	if err != nil {
		return resourcePath{}, errInvalidURI("bad share segment")
	}
	if err := validShareName(share); err != nil {
		return resourcePath{}, err
	}
	p.Share = share
	if rest == "" {
		return p, nil
	}
	// No valid path has more than 9 escaped bytes per character (a BMP
	// character is three UTF-8 bytes, each %XX): refuse before decoding.
	if len(rest) > fs.MaxPathLen*9 {
		return resourcePath{}, errBadPath("the path is too long")
	}
	// The SDKs escape "/" inside a path they were given ("dir%2Ffile"),
	// and the service treats it as a separator: decode first, then split.
	decoded, err := url.PathUnescape(rest)
	if err != nil {
		return resourcePath{}, errBadPath("bad percent-encoding")
	}
	decoded = strings.TrimSuffix(decoded, "/") // one trailing slash is tolerated
	for _, name := range strings.Split(decoded, "/") {
		if name == "" {
			return resourcePath{}, errBadPath("empty path component")
		}
		if !allowTrailingDot {
			trimmed := strings.TrimRight(name, ".")
			if trimmed != "" {
				name = trimmed
			}
		}
		p.Parts = append(p.Parts, name)
	}
	// The name rules are the file system's (fs.ValidatePath).
	if err := fs.ValidatePath(p.Parts); err != nil {
		return resourcePath{}, errBadPath(err.Error())
	}
	return p, nil
}

func errInvalidURI(reason string) *Error {
	return storagehttp.NewError(http.StatusBadRequest, CodeInvalidURI,
		"The requested URI does not represent any resource on the server.", Detail{Name: "Reason", Value: reason})
}

func errBadPath(reason string) *Error {
	return storagehttp.NewError(http.StatusBadRequest, CodeInvalidPathName,
		"The specified resource name contains invalid characters.", Detail{Name: "Reason", Value: reason})
}

// validAccount: 3–24 lowercase letters and digits.
func validAccount(a string) error {
	if len(a) < accountNameMinLen || len(a) > accountNameMaxLen {
		return errInvalidURI("bad account name")
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return errInvalidURI("bad account name")
		}
	}
	return nil
}

// validShareName checks a share name by the file system's rule
// (fs.ValidateShareName): a bad length or a bad character is 400
// InvalidResourceName, with Azure's message for each.
func validShareName(s string) error {
	if err := fs.ValidateShareName(s); err != nil {
		msg := "The specified resource name contains invalid characters."
		if len(s) < fs.MinShareNameLen || len(s) > fs.MaxShareNameLen {
			msg = "The specified resource name length is not within the permissible limits."
		}
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidResourceName, msg, Detail{Name: "Reason", Value: err.Error()})
	}
	return nil
}

// smbTime is a parsed x-ms-file-*-time request value.
type smbTime struct {
	Keyword string // "now", "preserve", "source" (lowercase) or ""
	Time    time.Time
}

// parseSMBTime parses an x-ms-file-*-time header. Absent → (zero, false).
// Keywords are matched case-insensitively; times are ISO 8601 / RFC 3339
// with up to 7 fractional digits.
func parseSMBTime(h http.Header, name string, keywords ...string) (smbTime, bool, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return smbTime{}, false, nil
	}
	for _, k := range keywords {
		if strings.EqualFold(v, k) {
			return smbTime{Keyword: k}, true, nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return smbTime{}, false, storagehttp.InvalidHeader(name, v)
	}
	return smbTime{Time: t.UTC()}, true, nil
}

// parseAttributes parses an x-ms-file-*attributes value: keywords
// separated by '|' (fs.ParseAttributes). A bad list → 400
// InvalidHeaderValue naming the header.
func parseAttributes(name, v string) (fs.Attributes, error) {
	a, err := fs.ParseAttributes(v, "|")
	if err != nil {
		return 0, storagehttp.InvalidHeader(name, v)
	}
	return a, nil
}

// formatAttributes renders an attribute set the way the service does
// ("ReadOnly | Archive"); the empty set is "None".
func formatAttributes(a fs.Attributes) string { return a.Format(" | ") }

// parseMD5 decodes a base64 Content-MD5 value of exactly 16 bytes.
func parseMD5(name, v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 16 {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return b, nil
}

// parseBase64 decodes a base64 header value of any length (the stored
// x-ms-content-md5 is the client's business: Azure keeps what it is given).
func parseBase64(name, v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return b, nil
}

// parseBoolHeader parses an optional boolean header ("true"/"false").
func parseBoolHeader(h http.Header, name string) (bool, error) {
	v := h.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, storagehttp.InvalidHeader(name, v)
	}
	return b, nil
}

// parseSizeHeader parses a non-negative decimal header. Absent → ok=false.
// Malformed → 400 InvalidHeaderValue; negative or over max → 400
// OutOfRangeInput.
func parseSizeHeader(h http.Header, name string, max int64) (int64, bool, error) {
	v := h.Get(name)
	if v == "" {
		return 0, false, nil
	}
	neg := strings.HasPrefix(v, "-")
	n, err := parseDecimal(strings.TrimPrefix(v, "-"))
	if err != nil {
		return 0, false, storagehttp.InvalidHeader(name, v)
	}
	if neg || n > max {
		return 0, false, storagehttp.OutOfRange(name, v)
	}
	return n, true, nil
}
