package rest

import (
	"encoding/base64"
	"github.com/blobshare/blobshare/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blobshare/blobshare/storagehttp"
)

// Limits of the FileREST surface (filerest.md §10).
const (
	maxPutRange       = 4 << 20 // Put Range update, Create File body
	maxFileSize       = 4 << 40 // 4 TiB
	maxComponent      = 255
	maxPathLen        = 2048
	maxDepth          = 250
	maxListResults    = 5000
	maxCopySourceLen  = 2048
	maxInlinePerm     = 8 << 10
	maxHeaderCount    = 256
	maxHeaderBytes    = 64 << 10
	maxSmallBody      = 64 << 10 // JSON/XML request bodies
	defaultShareQuota = 5120
	maxShareQuotaGiB  = 102400
	minShareNameLen   = 3
	maxShareNameLen   = 63
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
func parsePath(escaped string, allowTrailingDot bool) (resourcePath, error) {
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
	if len(rest) > maxPathLen*3 {
		return resourcePath{}, errBadPath("the path is too long")
	}
	// The SDKs escape "/" inside a path they were given ("dir%2Ffile"),
	// and the service treats it as a separator: decode first, then split.
	decoded, err := url.PathUnescape(rest)
	if err != nil {
		return resourcePath{}, errBadPath("bad percent-encoding")
	}
	decoded = strings.TrimSuffix(decoded, "/") // one trailing slash is tolerated
	total := 0
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
		if err := validName(name); err != nil {
			return resourcePath{}, err
		}
		p.Parts = append(p.Parts, name)
		total += len(name) + 1
	}
	if total-1 > maxPathLen {
		return resourcePath{}, errBadPath("the path is longer than 2048 characters")
	}
	if len(p.Parts) > maxDepth {
		return resourcePath{}, errBadPath("the path is deeper than 250 levels")
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

// validShareName: 3–63 of lowercase letters, digits and single hyphens,
// starting and ending with a letter or digit.
func validShareName(s string) error {
	bad := storagehttp.NewError(http.StatusBadRequest, CodeInvalidResourceName,
		"The specified resource name contains invalid characters.")
	if len(s) < minShareNameLen || len(s) > maxShareNameLen {
		bad.Message = "The specified resource name length is not within the permissible limits."
		return bad
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(s)-1 || s[i-1] == '-' {
				return bad
			}
		default:
			return bad
		}
	}
	return nil
}

var reservedNames = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CLOCK$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// validName checks one directory or file name (filerest.md §2.1).
func validName(n string) error {
	switch {
	case n == "":
		return errBadPath("empty name")
	case n == "." || n == "..":
		return errBadPath("the names . and .. are not allowed")
	case len(n) > maxComponent:
		return errBadPath("a path component is longer than 255 characters")
	case !utf8.ValidString(n):
		return errBadPath("the name is not valid UTF-8")
	case reservedNames[strings.ToUpper(n)]:
		return errBadPath("reserved device name")
	}
	for _, c := range n {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(`"\/:|<>*?`, c) {
			return errBadPath("the name contains a forbidden character")
		}
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

// attributeBits names the SMB attributes in their canonical order.
var attributeBits = []struct {
	name string
	bit  fs.Attributes
}{
	{"ReadOnly", fs.AttrReadOnly}, {"Hidden", fs.AttrHidden}, {"System", fs.AttrSystem},
	{"None", fs.AttrNone}, {"Directory", fs.AttrDirectory}, {"Archive", fs.AttrArchive},
	{"Temporary", fs.AttrTemporary}, {"Offline", fs.AttrOffline},
	{"NotContentIndexed", fs.AttrNotContentIndexed}, {"NoScrubData", fs.AttrNoScrubData},
}

// parseAttributes parses a pipe-separated attribute list (names matched
// case-insensitively, spaces trimmed). "None" stands alone: combined with
// any other attribute, like unknown or empty tokens, it is 400
// InvalidHeaderValue naming the header.
func parseAttributes(name, v string) (fs.Attributes, error) {
	var out fs.Attributes
	toks := strings.Split(v, "|")
	for _, tok := range toks {
		if len(toks) > 1 && strings.EqualFold(strings.TrimSpace(tok), "None") {
			return 0, storagehttp.InvalidHeader(name, v)
		}
	}
	for _, tok := range toks {
		tok = strings.TrimSpace(tok)
		found := false
		for _, a := range attributeBits {
			if tok != "" && strings.EqualFold(tok, a.name) {
				out |= a.bit
				found = true
			}
		}
		if !found {
			return 0, storagehttp.InvalidHeader(name, v)
		}
	}
	return out, nil
}

// formatAttributes renders an attribute set the way the service does
// ("Archive | ReadOnly"); the empty set is "None".
func formatAttributes(a fs.Attributes) string {
	var names []string
	for _, ab := range attributeBits {
		if ab.bit != 0 && a&ab.bit != 0 {
			names = append(names, ab.name)
		}
	}
	if len(names) == 0 {
		return "None"
	}
	return strings.Join(names, " | ")
}

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
