package blobsvc

import (
	"fmt"
	"strings"
	"time"
)

// Conditions are the HTTP conditional headers of a request. Zero value:
// unconditional. Times are compared at the one-second resolution of
// Last-Modified.
type Conditions struct {
	IfMatch           string // an ETag, a comma-separated list, or "*"
	IfNoneMatch       string
	IfModifiedSince   *time.Time
	IfUnmodifiedSince *time.Time
	// IfTags is x-ms-if-tags, an expression over the blob's index tags
	// (MatchTags); blob operations only.
	IfTags string
	// AccessTierIfModifiedSince and AccessTierIfUnmodifiedSince are
	// x-ms-access-tier-if-modified-since and -if-unmodified-since,
	// conditions on the access tier's change time (Delete Blob only;
	// tier.go).
	AccessTierIfModifiedSince   *time.Time
	AccessTierIfUnmodifiedSince *time.Time
	// EncryptionKeySHA256 is the SHA-256 (base64) of the request's
	// customer-provided key (x-ms-encryption-key-sha256), checked against
	// the blob's (cpk.go): nil for an operation that takes no key, "" for
	// one that takes a key and was sent none.
	EncryptionKeySHA256 *string
}

// checkTags evaluates IfTags against an existing blob's tags: false is
// ErrConditionNotMet (412), a malformed expression
// ErrInvalidTagsCondition. A missing blob is not checked (as Azurite).
func (c Conditions) checkTags(exists bool, tags map[string]string) error {
	if c.IfTags == "" || !exists {
		return nil
	}
	ok, err := MatchTags(c.IfTags, tags)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("x-ms-if-tags %s: %w", c.IfTags, ErrConditionNotMet)
	}
	return nil
}

// etagIn reports whether etag is in the header's list ("*" matches any).
func etagIn(list, etag string) bool {
	for t := range strings.SplitSeq(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == etag || strings.Trim(t, `"`) == strings.Trim(etag, `"`) {
			return true
		}
	}
	return false
}

// modifiedSince reports whether lastModified is later than t (at second
// resolution).
func modifiedSince(lastModified, t time.Time) bool {
	return lastModified.Truncate(time.Second).After(t)
}

// ValidateWrite checks the combination of a write's conditional headers,
// as "Specifying conditional headers for Blob service operations" says
// for "Write Operations (All Versions)": "With the exception of the two
// combinations of conditional headers listed above [If-None-Match with
// If-Modified-Since, If-Match with If-Unmodified-Since], a request may
// specify only a single conditional header. Specifying more than one
// conditional header results in status code 400 (Bad Request)", and
// "requests to the Blob service can only include one ETag value.
// Specifying more than one ETag value results in status code 400". Both
// are ErrMultipleConditions (400 MultipleConditionHeadersNotSupported).
// x-ms-if-tags is no HTTP conditional header and combines with any.
func (c Conditions) ValidateWrite() error {
	n := 0
	for _, set := range []bool{c.IfMatch != "", c.IfNoneMatch != "", c.IfModifiedSince != nil, c.IfUnmodifiedSince != nil} {
		if set {
			n++
		}
	}
	pair := c.IfMatch != "" && c.IfUnmodifiedSince != nil || c.IfNoneMatch != "" && c.IfModifiedSince != nil
	if n > 2 || n == 2 && !pair {
		return fmt.Errorf("%d conditional headers: %w", n, ErrMultipleConditions)
	}
	if strings.Contains(c.IfMatch, ",") || strings.Contains(c.IfNoneMatch, ",") {
		return fmt.Errorf("more than one ETag in a condition: %w", ErrMultipleConditions)
	}
	return nil
}

// checkWrite evaluates c for a write on a resource that exists or not
// (etag and lastModified are its own), as "Specifying conditional headers
// for Blob service operations" orders them for writes, after
// ValidateWrite: If-None-Match decides alone when present ("the request
// is evaluated based on the criteria specified in If-None-Match"), then
// If-Match (likewise over If-Unmodified-Since), then If-Modified-Since,
// then If-Unmodified-Since. On a missing resource only If-Match fails
// (any If-Match, "*" too: there is nothing to match).
// If-None-Match: * on an existing resource fails only operations that
// create (create true): 409 ErrBlobExists; other writes ignore it, as
// Azure does for Set Blob Properties. Any other failure is
// ErrConditionNotMet.
func (c Conditions) checkWrite(exists bool, etag string, lastModified time.Time, create bool) error {
	if err := c.ValidateWrite(); err != nil {
		return err
	}
	switch {
	case c.IfNoneMatch != "":
		if !exists {
			return nil
		}
		if strings.TrimSpace(c.IfNoneMatch) == "*" {
			if create {
				return ErrBlobExists
			}
			return nil
		}
		if etagIn(c.IfNoneMatch, etag) {
			return ErrConditionNotMet
		}
	case c.IfMatch != "":
		if !exists || !etagIn(c.IfMatch, etag) {
			return ErrConditionNotMet
		}
	case !exists:
	case c.IfModifiedSince != nil:
		if !modifiedSince(lastModified, *c.IfModifiedSince) {
			return ErrConditionNotMet
		}
	case c.IfUnmodifiedSince != nil:
		if modifiedSince(lastModified, *c.IfUnmodifiedSince) {
			return ErrConditionNotMet
		}
	}
	return nil
}

// checkRead evaluates c for a GET or HEAD, as the same page orders them
// for reads (version 2013-08-15 and later): If-None-Match: * is never
// satisfiable (ErrUnsatisfiableCondition, 400); on a missing resource an
// If-Match fails (412); on an existing one a failed If-Match or
// If-Unmodified-Since is ErrConditionNotMet (412), and a matching
// If-None-Match or an If-Modified-Since without a change is
// ErrNotModified (304) unless the other of the two passes.
func (c Conditions) checkRead(exists bool, etag string, lastModified time.Time) error {
	if strings.TrimSpace(c.IfNoneMatch) == "*" {
		return ErrUnsatisfiableCondition
	}
	if !exists {
		if c.IfMatch != "" {
			return ErrConditionNotMet
		}
		return nil
	}
	if c.IfMatch != "" && !etagIn(c.IfMatch, etag) {
		return ErrConditionNotMet
	}
	if c.IfUnmodifiedSince != nil && modifiedSince(lastModified, *c.IfUnmodifiedSince) {
		return ErrConditionNotMet
	}
	noneMatchFails := c.IfNoneMatch != "" && etagIn(c.IfNoneMatch, etag)
	noneMatchPasses := c.IfNoneMatch != "" && !noneMatchFails
	modifiedFails := c.IfModifiedSince != nil && !modifiedSince(lastModified, *c.IfModifiedSince)
	modifiedPasses := c.IfModifiedSince != nil && !modifiedFails
	if noneMatchFails && !modifiedPasses || modifiedFails && !noneMatchPasses {
		return ErrNotModified
	}
	return nil
}
