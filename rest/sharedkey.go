package rest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// signer holds the account name and decoded key used by the SharedKey
// and SAS authenticators.
type signer struct {
	account string
	key     []byte
}

func (s signer) sign(stringToSign string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// sharedKeyStringToSign builds the File-service SharedKey string-to-sign
// for r (filerest.md §8.1): verb, the eleven standard headers (Date empty
// when x-ms-date is sent), the canonicalized x-ms-* headers sorted with
// compareHeaderNames, and the canonicalized resource.
func sharedKeyStringToSign(account string, r *http.Request) string {
	h := r.Header
	contentLength := h.Get("Content-Length")
	if contentLength == "" && r.ContentLength > 0 {
		contentLength = strconv.FormatInt(r.ContentLength, 10)
	}
	if contentLength == "0" {
		contentLength = ""
	}
	date := h.Get("Date")
	if h.Get("x-ms-date") != "" {
		date = ""
	}
	lines := []string{
		r.Method,
		h.Get("Content-Encoding"),
		h.Get("Content-Language"),
		contentLength,
		h.Get("Content-MD5"),
		h.Get("Content-Type"),
		date,
		h.Get("If-Modified-Since"),
		h.Get("If-Match"),
		h.Get("If-None-Match"),
		h.Get("If-Unmodified-Since"),
		h.Get("Range"),
		canonicalizedHeaders(h),
		canonicalizedResource(account, r.URL),
	}
	return strings.Join(lines, "\n")
}

// canonicalizedHeaders renders the x-ms-* headers as "name:value" lines,
// names lowercased, repeated values joined with ",", sorted by
// compareHeaderNames.
func canonicalizedHeaders(h http.Header) string {
	vals := map[string][]string{}
	var names []string
	for k, v := range h {
		n := strings.ToLower(strings.TrimSpace(k))
		if !strings.HasPrefix(n, "x-ms-") {
			continue
		}
		if _, ok := vals[n]; !ok {
			names = append(names, n)
		}
		vals[n] = append(vals[n], v...)
	}
	sort.Slice(names, func(i, j int) bool { return compareHeaderNames(names[i], names[j]) < 0 })
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(strings.Join(vals[n], ","))
	}
	return b.String()
}

// canonicalizedResource is "/" + account + the escaped path as sent (so a
// path-style URL names the account twice), then one "\nname:v1,v2" line
// per query parameter, names lowercased and sorted, values decoded and
// sorted. A query that does not parse yields what did parse; the
// signature then simply fails to match.
func canonicalizedResource(account string, u *url.URL) string {
	var b strings.Builder
	b.WriteByte('/')
	b.WriteString(account)
	if p := u.EscapedPath(); p != "" {
		b.WriteString(p)
	} else {
		b.WriteByte('/')
	}
	q, _ := url.ParseQuery(u.RawQuery)
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := append([]string(nil), q[k]...)
		sort.Strings(v)
		b.WriteByte('\n')
		b.WriteString(strings.ToLower(k))
		b.WriteByte(':')
		b.WriteString(strings.Join(v, ","))
	}
	return b.String()
}

// Header-name collation (filerest.md §8.2). The .NET invariant culture
// compares in two passes. The first pass skips "-" and "'" and compares
// the remaining characters by primary weight: punctuation (in the order
// of punctOrder) < digits < letters, letters case-insensitively. Only if
// the first pass finds the names equal does the second pass look at the
// skipped characters: it walks both names in step and, at the first
// position where only one name has a hyphen or apostrophe, the other name
// sorts first ("ab" < "a-b").
const punctOrder = "!#$%&*.^_`|~+"

// primaryWeight returns the first-pass weight of c; 0 means "ignored".
func primaryWeight(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return 300 + int(c-'a')
	case c >= 'A' && c <= 'Z':
		return 300 + int(c-'A')
	case c >= '0' && c <= '9':
		return 200 + int(c-'0')
	}
	if i := strings.IndexByte(punctOrder, c); i >= 0 {
		return 100 + i
	}
	return 0
}

// secondaryWeight returns the second-pass weight of c; 0 means "ignored".
func secondaryWeight(c byte) int {
	switch c {
	case '\'':
		return 1
	case '-':
		return 2
	}
	return 0
}

// compareHeaderNames orders two header names as the SDKs sort them when
// signing: negative if a sorts before b, 0 if equal, positive after.
func compareHeaderNames(a, b string) int {
	// First pass: the primary weights of the non-ignored characters.
	i, j := 0, 0
	for {
		for i < len(a) && primaryWeight(a[i]) == 0 {
			i++
		}
		for j < len(b) && primaryWeight(b[j]) == 0 {
			j++
		}
		if i == len(a) || j == len(b) {
			if i == len(a) && j == len(b) {
				break
			}
			if i == len(a) {
				return -1
			}
			return 1
		}
		wa, wb := primaryWeight(a[i]), primaryWeight(b[j])
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	// Second pass: walk in step; characters without a secondary weight on
	// both sides advance together, a lone one is skipped on its side, and
	// the walk ends when the positions diverge (the side that skipped
	// further sorts first) or both names end.
	i, j = 0, 0
	for {
		if i != j {
			if i > j {
				return -1
			}
			return 1
		}
		if i >= len(a) && j >= len(b) {
			return 0
		}
		wa, wb := -1, -1 // -1: past the end
		if i < len(a) {
			wa = secondaryWeight(a[i])
		}
		if j < len(b) {
			wb = secondaryWeight(b[j])
		}
		switch {
		case wa == wb:
			i++
			j++
		case wa == 0:
			i++
		case wb == 0:
			j++
		case wa == -1:
			return -1
		case wb == -1:
			return 1
		case wa < wb:
			return -1
		default:
			return 1
		}
	}
}
