package blobsvc

import (
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

// checkWrite evaluates c for a write on a resource that exists or not
// (etag and lastModified are its own). Any failure is ErrConditionNotMet.
// On a missing resource If-Match fails and the date conditions are not
// evaluated (Azure's behaviour for creates).
func (c Conditions) checkWrite(exists bool, etag string, lastModified time.Time) error {
	if c.IfMatch != "" && (!exists || !etagIn(c.IfMatch, etag)) {
		return ErrConditionNotMet
	}
	if !exists {
		return nil
	}
	if c.IfNoneMatch != "" && etagIn(c.IfNoneMatch, etag) {
		return ErrConditionNotMet
	}
	if c.IfModifiedSince != nil && !modifiedSince(lastModified, *c.IfModifiedSince) {
		return ErrConditionNotMet
	}
	if c.IfUnmodifiedSince != nil && modifiedSince(lastModified, *c.IfUnmodifiedSince) {
		return ErrConditionNotMet
	}
	return nil
}

// checkRead evaluates c for a GET or HEAD of an existing resource: a
// failed If-Match or If-Unmodified-Since is ErrConditionNotMet (412); a
// matching If-None-Match or an If-Modified-Since without a change is
// ErrNotModified (304).
func (c Conditions) checkRead(etag string, lastModified time.Time) error {
	if c.IfMatch != "" && !etagIn(c.IfMatch, etag) {
		return ErrConditionNotMet
	}
	if c.IfUnmodifiedSince != nil && modifiedSince(lastModified, *c.IfUnmodifiedSince) {
		return ErrConditionNotMet
	}
	if c.IfNoneMatch != "" && etagIn(c.IfNoneMatch, etag) {
		return ErrNotModified
	}
	if c.IfNoneMatch == "" && c.IfModifiedSince != nil && !modifiedSince(lastModified, *c.IfModifiedSince) {
		return ErrNotModified
	}
	return nil
}
