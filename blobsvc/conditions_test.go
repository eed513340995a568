package blobsvc

import (
	"errors"
	"testing"
	"time"
)

// TestValidateWrite checks every combination of the four conditional
// headers against "Specifying conditional headers for Blob service
// operations" for write operations: one header alone, or the pairs
// If-Match + If-Unmodified-Since and If-None-Match + If-Modified-Since;
// anything else, or more than one ETag in a header, is
// ErrMultipleConditions.
func TestValidateWrite(t *testing.T) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for mask := range 16 {
		var c Conditions
		var names []string
		if mask&1 != 0 {
			c.IfMatch, names = `"0x1"`, append(names, "If-Match")
		}
		if mask&2 != 0 {
			c.IfNoneMatch, names = `"0x1"`, append(names, "If-None-Match")
		}
		if mask&4 != 0 {
			c.IfModifiedSince, names = &ts, append(names, "If-Modified-Since")
		}
		if mask&8 != 0 {
			c.IfUnmodifiedSince, names = &ts, append(names, "If-Unmodified-Since")
		}
		allowed := len(names) <= 1 || mask == 1|8 || mask == 2|4
		err := c.ValidateWrite()
		if allowed != (err == nil) || err != nil && !errors.Is(err, ErrMultipleConditions) {
			t.Errorf("%v: %v, allowed %v", names, err, allowed)
		}
		// checkWrite refuses the same, whatever the resource.
		if err := c.checkWrite(true, `"0x1"`, ts, false); !allowed && !errors.Is(err, ErrMultipleConditions) {
			t.Errorf("%v: checkWrite %v", names, err)
		}
	}
	for _, c := range []Conditions{{IfMatch: `"0x1", "0x2"`}, {IfNoneMatch: `"0x1","0x2"`}} {
		if err := c.ValidateWrite(); !errors.Is(err, ErrMultipleConditions) {
			t.Errorf("%+v: %v, want ErrMultipleConditions", c, err)
		}
	}
	// Reads take any combination (Get Blob's expression, version
	// 2013-08-15 and later).
	all := Conditions{IfMatch: `"0x1"`, IfNoneMatch: `"0x2"`, IfModifiedSince: &ts, IfUnmodifiedSince: &ts}
	if err := all.checkRead(true, `"0x1"`, ts); errors.Is(err, ErrMultipleConditions) {
		t.Errorf("read with four conditions: %v", err)
	}
}
