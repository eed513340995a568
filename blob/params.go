package blob

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/storagehttp"
)

// crc64Body wraps the bytes a write of content reads in a CRC-64 of
// them: Azure answers every Put Blob, Put Block, Append Block and Put
// Page, their From URL forms included, with the x-ms-content-crc64 it
// computed ("This header is returned so that the client can check for
// message content integrity. The value of this header is computed by the
// Blob service"; the azure-sdk-for-js recordings show it on Append Block,
// Stage Block From URL and Copy From URL sent without any checksum). When
// the request carries a transactional CRC-64 (x-ms-content-crc64 for its
// body, x-ms-source-content-crc64 for a From-URL source) the end of the
// bytes becomes 400 Crc64Mismatch when it differs
// (storagehttp.CRC64Reader), so the content store keeps nothing of them.
// size is their length when known (< 0 otherwise).
func crc64Body(h http.Header, fromURL bool, body io.Reader, size int64) (io.Reader, *storagehttp.CRC64Reader, error) {
	name, md5Name := "x-ms-content-crc64", "Content-MD5"
	if fromURL {
		name, md5Name = "x-ms-source-content-crc64", "x-ms-source-content-md5"
	}
	want, err := storagehttp.CRC64Header(h, name)
	if err != nil {
		return nil, nil, err
	}
	// Azure: "If both Content-MD5 and x-ms-content-crc64 headers are
	// present, the request fails with a 400 (Bad Request)."
	if want != nil && h.Get(md5Name) != "" {
		return nil, nil, storagehttp.InvalidHeader(name, h.Get(name))
	}
	cr := storagehttp.NewCRC64Reader(body, want, size)
	return cr, cr, nil
}

// setCRC64 answers the CRC-64 of what a write read.
func setCRC64(h http.Header, cr *storagehttp.CRC64Reader) {
	if cr != nil {
		h.Set("x-ms-content-crc64", b64(cr.Sum()))
	}
}

// transactionalMD5 is the MD5 a write of content is checked against:
// Content-MD5 for the request's body, x-ms-source-content-md5 for a From
// URL source's bytes; nil when absent. Azure answers it back as
// Content-MD5 (the azblob tests TestAppendBlockFromURL and
// TestStageBlockWithMD5 expect the sum sent).
func transactionalMD5(h http.Header, fromURL bool) ([]byte, error) {
	if fromURL {
		return md5Header(h, "x-ms-source-content-md5")
	}
	return md5Header(h, "Content-MD5")
}

// md5Reader checks what it reads against want when it reaches the end
// (the Read returning the last byte of a known length, or io.EOF): 400
// Md5Mismatch, so a store committing only after a clean read keeps
// nothing (Put Page, whose store does not hash).
type md5Reader struct {
	r    io.Reader
	h    hash.Hash
	want []byte
	left int64
	done bool
}

func newMD5Reader(r io.Reader, want []byte, size int64) *md5Reader {
	return &md5Reader{r: r, h: md5.New(), want: want, left: size}
}

func (m *md5Reader) Read(p []byte) (int, error) {
	if m.left >= 0 && int64(len(p)) > m.left {
		p = p[:m.left]
	}
	n, err := m.r.Read(p)
	m.h.Write(p[:n])
	if m.left >= 0 {
		m.left -= int64(n)
	}
	if (m.left == 0 || err == io.EOF) && !m.done {
		m.done = true
		if got := m.h.Sum(nil); !bytes.Equal(got, m.want) {
			return n, storagehttp.MD5Mismatch(m.want, got)
		}
	}
	if m.left == 0 && err == nil {
		err = io.EOF
	}
	return n, err
}

// guards reads what guards most writes: the lease id (x-ms-lease-id) and
// the conditional headers, in that order of checking.
func guards(h http.Header) (leaseID string, cond blobsvc.Conditions, err error) {
	if leaseID, err = leaseIDHeader(h, "x-ms-lease-id"); err != nil {
		return "", cond, err
	}
	cond, err = conditions(h)
	return leaseID, cond, err
}

// conditions reads If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since. A date that is not an HTTP date is 400
// InvalidHeaderValue.
func conditions(h http.Header) (blobsvc.Conditions, error) {
	c := blobsvc.Conditions{IfMatch: h.Get("If-Match"), IfNoneMatch: h.Get("If-None-Match"), IfTags: h.Get("x-ms-if-tags")}
	// Present only on the operations that take a customer-provided key,
	// empty when none was sent (prepareCPK).
	if vs, ok := h[http.CanonicalHeaderKey(hdrKeySHA256)]; ok && len(vs) > 0 {
		sha := vs[0]
		c.EncryptionKeySHA256 = &sha
	}
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"If-Modified-Since", &c.IfModifiedSince}, {"If-Unmodified-Since", &c.IfUnmodifiedSince}} {
		v := h.Get(d.name)
		if v == "" {
			continue
		}
		t, err := http.ParseTime(v)
		if err != nil {
			return c, storagehttp.InvalidHeader(d.name, v)
		}
		*d.dst = &t
	}
	return c, nil
}

// leaseIDHeader reads a lease id header, which must be a GUID.
func leaseIDHeader(h http.Header, name string) (string, error) {
	v := h.Get(name)
	if v == "" {
		return "", nil
	}
	if _, err := uuid.Parse(v); err != nil {
		return "", storagehttp.InvalidHeader(name, v)
	}
	return v, nil
}

// byteRange reads x-ms-range (preferred) or Range: "bytes=N-" or
// "bytes=N-M" with N ≤ M. Absent → nil; a negative start
// ("bytes=-1-", "bytes=-2-497": what an SDK sends for a negative offset)
// → nil too: Azure ignores such a range and answers the whole blob or
// page list (the azblob recordings of TestBlobDownloadDataNegativeOffset
// and TestBlobGetPageRangesInvalidRange); anything else, a suffix range
// "bytes=-N" included → 400 InvalidHeaderValue.
func byteRange(h http.Header) (*blobsvc.Range, error) {
	name := "x-ms-range"
	v := h.Get(name)
	if v == "" {
		name = "Range"
		v = h.Get(name)
	}
	if v == "" {
		return nil, nil
	}
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	if negativeStart(spec) {
		return nil, nil
	}
	lo, hi, ok := strings.Cut(spec, "-")
	if !ok {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	start, err := strconv.ParseInt(lo, 10, 64)
	if err != nil || start < 0 {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	r := &blobsvc.Range{Start: start, End: -1}
	if hi != "" {
		end, err := strconv.ParseInt(hi, 10, 64)
		if err != nil || end < start {
			return nil, storagehttp.InvalidHeader(name, v)
		}
		r.End = end
	}
	return r, nil
}

// negativeStart reports whether spec is "-N-", "-N-M" or "-N--M"
// (digits N, M): a range with a negative start, which the SDKs send for
// a negative Offset (azblob's TestBlobDiffPageRangeInvalidRange sends
// Offset -22, Count 14: "bytes=-22--9", and Azure answers the diff).
func negativeStart(spec string) bool {
	lo, hi, ok := strings.Cut(strings.TrimPrefix(spec, "-"), "-")
	if !ok || !strings.HasPrefix(spec, "-") || lo == "" {
		return false
	}
	if rest, neg := strings.CutPrefix(hi, "-"); neg {
		if rest == "" {
			return false
		}
		hi = rest
	}
	return strings.Trim(lo, "0123456789") == "" && strings.Trim(hi, "0123456789") == ""
}

// md5Header decodes a base64 MD5 header (16 bytes); absent → nil.
func md5Header(h http.Header, name string) ([]byte, error) {
	v := h.Get(name)
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 16 {
		return nil, storagehttp.InvalidHeader(name, v)
	}
	return b, nil
}

// blobProperties reads the x-ms-blob-* property headers; with fallback
// the plain HTTP headers count when the x-ms-blob- form is absent (Put
// Blob).
func blobProperties(h http.Header, fallback bool) (blobsvc.Properties, error) {
	get := func(name string) string {
		if v := h.Get("x-ms-blob-" + name); v != "" || !fallback {
			return v
		}
		return h.Get(name)
	}
	p := blobsvc.Properties{
		ContentType:        get("Content-Type"),
		ContentEncoding:    get("Content-Encoding"),
		ContentLanguage:    get("Content-Language"),
		ContentDisposition: get("Content-Disposition"),
		CacheControl:       get("Cache-Control"),
	}
	md5, err := md5Header(h, "x-ms-blob-content-md5")
	if err != nil {
		return p, err
	}
	p.ContentMD5 = md5
	return p, nil
}

// maxResults reads maxresults: 1..5000, default 5000 (larger values are
// clipped, as Azure does); 0, negative or not a number → 400.
func maxResults(q url.Values) (int, error) {
	v, ok := q["maxresults"]
	if !ok {
		return blobsvc.DefaultListMaxResults, nil
	}
	raw := ""
	if len(v) > 0 {
		raw = v[0]
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, storagehttp.InvalidQuery("maxresults", raw, "not an integer")
	}
	if n <= 0 {
		return 0, storagehttp.OutOfRangeQuery("maxresults", raw, 1, blobsvc.DefaultListMaxResults)
	}
	return min(n, blobsvc.DefaultListMaxResults), nil
}

// includes reads the include parameter's comma-separated list.
func includes(q url.Values) map[string]bool {
	m := map[string]bool{}
	for _, v := range q["include"] {
		for it := range strings.SplitSeq(v, ",") {
			m[strings.ToLower(strings.TrimSpace(it))] = true
		}
	}
	return m
}

// leaseRequest reads Lease Blob / Lease Container's headers.
func leaseRequest(h http.Header) (blobsvc.LeaseRequest, error) {
	var req blobsvc.LeaseRequest
	action := strings.ToLower(h.Get("x-ms-lease-action"))
	if action == "" {
		return req, storagehttp.MissingHeader("x-ms-lease-action")
	}
	req.Action = blobsvc.LeaseAction(action)
	var err error
	if req.ID, err = leaseIDHeader(h, "x-ms-lease-id"); err != nil {
		return req, err
	}
	if req.ProposedID, err = leaseIDHeader(h, "x-ms-proposed-lease-id"); err != nil {
		return req, err
	}
	switch req.Action {
	case blobsvc.LeaseAcquire:
		v := h.Get("x-ms-lease-duration")
		if v == "" {
			return req, storagehttp.MissingHeader("x-ms-lease-duration")
		}
		d, err := strconv.Atoi(v)
		if err != nil || (d != blobsvc.InfiniteLease && (d < blobsvc.MinLeaseSeconds || d > blobsvc.MaxLeaseSeconds)) {
			return req, storagehttp.InvalidHeader("x-ms-lease-duration", v)
		}
		req.Duration = d
	case blobsvc.LeaseRenew, blobsvc.LeaseRelease:
		if req.ID == "" {
			return req, storagehttp.MissingHeader("x-ms-lease-id")
		}
	case blobsvc.LeaseChange:
		if req.ID == "" {
			return req, storagehttp.MissingHeader("x-ms-lease-id")
		}
		if req.ProposedID == "" {
			return req, storagehttp.MissingHeader("x-ms-proposed-lease-id")
		}
	case blobsvc.LeaseBreak:
		if v := h.Get("x-ms-lease-break-period"); v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > blobsvc.MaxBreakPeriod {
				return req, storagehttp.InvalidHeader("x-ms-lease-break-period", v)
			}
			req.BreakPeriod = &p
		}
	default:
		return req, storagehttp.InvalidHeader("x-ms-lease-action", h.Get("x-ms-lease-action"))
	}
	return req, nil
}

// errReader fails every Read with its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
