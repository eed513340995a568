package storagehttp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signer holds the account name and its decoded key.
type Signer struct {
	Account string
	Key     []byte
}

// NewSigner decodes a base64 account key.
func NewSigner(account, key string) (Signer, error) {
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return Signer{}, err
	}
	if len(raw) == 0 {
		return Signer{}, base64.CorruptInputError(0)
	}
	return Signer{Account: account, Key: raw}, nil
}

// Sign is base64(HMAC-SHA256(key, stringToSign)).
func (s Signer) Sign(stringToSign string) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// errSignatureMismatch is the cause of a SharedKey signature that does
// not match: a wrong account key, or a request changed after signing.
var errSignatureMismatch = errors.New("signature mismatch: wrong account key, or the request changed after signing")

// SharedKey checks "Authorization: SharedKey account:signature" and,
// when the service accepts it, "SharedKeyLite account:signature".
type SharedKey struct {
	Signer Signer
	// StringToSign builds the service's SharedKey string-to-sign
	// (StringToSign for Blob, Queue and File).
	StringToSign func(account string, r *http.Request) string
	// LiteStringToSign builds the SharedKey Lite string-to-sign
	// (LiteStringToSign for Blob and Queue); nil refuses SharedKeyLite.
	LiteStringToSign func(account string, r *http.Request) string
}

var _ Authenticator = SharedKey{}

// Authenticate implements Authenticator.
func (a SharedKey) Authenticate(r *http.Request, _ time.Time) (Verdict, Grant, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return NotMine, Grant{}, nil
	}
	scheme, cred, _ := strings.Cut(h, " ")
	sts := a.StringToSign
	switch {
	case scheme == "SharedKey":
	case scheme == "SharedKeyLite" && a.LiteStringToSign != nil:
		sts = a.LiteStringToSign
	case scheme == "SharedKeyLite", scheme == "Bearer":
		return Fail, Grant{}, AuthFailed("The authorization scheme " + scheme + " is not supported.")
	default:
		return Fail, Grant{}, AuthFailed("The Authorization header is malformed.")
	}
	acct, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || acct != a.Signer.Account {
		return Fail, Grant{}, AuthFailed("The account in the Authorization header is not this account.")
	}
	if r.Header.Get("x-ms-date") == "" && r.Header.Get("Date") == "" {
		return Fail, Grant{}, AuthFailed("Request date header not specified.")
	}
	toSign := sts(a.Signer.Account, r)
	want := a.Signer.Sign(toSign)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		// The string-to-sign goes to the debug log (the chain logs the
		// error with its cause), not into the answer.
		e := AuthFailed("The MAC signature found in the HTTP request is not the same as any computed signature.")
		e.Err = fmt.Errorf("%w: the server signed %q (%s)", errSignatureMismatch, toSign, scheme)
		return Fail, Grant{}, e
	}
	return Pass, Grant{}, nil
}

// StringToSign is the SharedKey string-to-sign of the Blob, Queue and
// File services (version 2009-09-19 and later): verb, the eleven standard
// headers (Date empty when x-ms-date is sent, Content-Length empty when
// zero), the canonicalized x-ms-* headers and the canonicalized resource.
func StringToSign(account string, r *http.Request) string {
	h := r.Header
	contentLength := h.Get("Content-Length")
	if contentLength == "" && r.ContentLength > 0 {
		contentLength = strconv.FormatInt(r.ContentLength, 10)
	}
	if contentLength == "0" {
		contentLength = ""
	}
	lines := []string{
		r.Method,
		h.Get("Content-Encoding"),
		h.Get("Content-Language"),
		contentLength,
		h.Get("Content-MD5"),
		h.Get("Content-Type"),
		dateToSign(h),
		h.Get("If-Modified-Since"),
		h.Get("If-Match"),
		h.Get("If-None-Match"),
		h.Get("If-Unmodified-Since"),
		h.Get("Range"),
		CanonicalizedHeaders(h),
		CanonicalizedResource(account, r.URL),
	}
	return strings.Join(lines, "\n")
}

// LiteStringToSign is the SharedKey Lite string-to-sign of the Blob and
// Queue services: verb, Content-MD5, Content-Type, Date (empty when
// x-ms-date is sent), the canonicalized x-ms-* headers and the resource
// with only its comp parameter (LiteCanonicalizedResource).
func LiteStringToSign(account string, r *http.Request) string {
	h := r.Header
	return strings.Join([]string{
		r.Method,
		h.Get("Content-MD5"),
		h.Get("Content-Type"),
		dateToSign(h),
		CanonicalizedHeaders(h),
		LiteCanonicalizedResource(account, r.URL),
	}, "\n")
}

func dateToSign(h http.Header) string {
	if h.Get("x-ms-date") != "" {
		return ""
	}
	return h.Get("Date")
}

// CanonicalizedHeaders renders the x-ms-* headers as "name:value" lines,
// names lowercased, repeated values joined with ",", sorted with
// CompareHeaderNames.
func CanonicalizedHeaders(h http.Header) string {
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
	sort.Slice(names, func(i, j int) bool { return CompareHeaderNames(names[i], names[j]) < 0 })
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

// resourcePath is "/" + account + the escaped path as sent (so a
// path-style URL names the account twice).
func resourcePath(b *strings.Builder, account string, u *url.URL) {
	b.WriteByte('/')
	b.WriteString(account)
	if p := u.EscapedPath(); p != "" {
		b.WriteString(p)
	} else {
		b.WriteByte('/')
	}
}

// CanonicalizedResource is the resource path (see resourcePath), then one
// "\nname:v1,v2" line per query parameter, names lowercased and sorted,
// values decoded and sorted. A query that does not parse yields what did
// parse; the signature then simply fails to match.
func CanonicalizedResource(account string, u *url.URL) string {
	var b strings.Builder
	resourcePath(&b, account, u)
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

// LiteCanonicalizedResource is the resource path followed by "?comp=v"
// when the query has comp, and no other parameter (the SharedKey Lite
// form).
func LiteCanonicalizedResource(account string, u *url.URL) string {
	var b strings.Builder
	resourcePath(&b, account, u)
	q, _ := url.ParseQuery(u.RawQuery)
	if c, ok := q["comp"]; ok {
		b.WriteString("?comp=")
		b.WriteString(strings.Join(c, ","))
	}
	return b.String()
}

// Header-name collation. The .NET invariant culture the SDKs sort
// x-ms-* headers with compares in two passes. The first pass skips "-"
// and "'" and compares the remaining characters by primary weight:
// punctuation (in the order of punctOrder) < digits < letters, letters
// case-insensitively. Only if the first pass finds the names equal does
// the second pass look at the skipped characters: it walks both names in
// step and, at the first position where only one name has a hyphen or
// apostrophe, the other name sorts first ("ab" < "a-b").
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

// CompareHeaderNames orders two header names as the SDKs sort them when
// signing: negative if a sorts before b, 0 if equal, positive after.
func CompareHeaderNames(a, b string) int {
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
