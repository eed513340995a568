package blobstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key ValidKey accepts (Azure's blob name limit).
// Backends may accept less; see Store.
const MaxKeyLen = 1024

// MaxBlockIDLen is the longest block id ValidBlockID accepts (Azure's
// limit for a block id before base64 encoding).
const MaxBlockIDLen = 64

// ValidKey reports whether key is a portable blob key, returning an error
// wrapping ErrInvalidKey if not. A key is 1 to MaxKeyLen bytes of UTF-8
// without control characters or backslashes, made of "/"-separated
// segments that are neither empty nor "." nor ".." and do not end in ".".
// "f/0000000000000042" is a typical key.
func ValidKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("key %q: %s: %w", key, why, ErrInvalidKey)
	}
	switch {
	case key == "":
		return bad("empty")
	case len(key) > MaxKeyLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	case !utf8.ValidString(key):
		return bad("not UTF-8")
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' || (r >= 0x80 && r < 0xa0) {
			return bad("control character or backslash")
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "." || seg == "..":
			return bad("dot segment")
		case strings.HasSuffix(seg, "."):
			return bad("segment ends in a dot")
		}
	}
	return nil
}

// ValidBlockID reports whether id is a valid block id (1 to MaxBlockIDLen
// bytes of [A-Za-z0-9_-]), returning an error wrapping ErrInvalidKey if not.
func ValidBlockID(id string) error {
	if id == "" || len(id) > MaxBlockIDLen {
		return fmt.Errorf("block id %q: length not in 1..%d: %w", id, MaxBlockIDLen, ErrInvalidKey)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("block id %q: byte %q not in [A-Za-z0-9_-]: %w", id, c, ErrInvalidKey)
		}
	}
	return nil
}

// Check evaluates c against a blob's state (exists, and its ETag), the
// way every backend does for a commit: If-Match fails on a missing blob or
// another ETag ("*" matches any existing blob); If-None-Match fails on an
// existing blob with that ETag ("*": on any existing blob). A failure
// wraps ErrPreconditionFailed.
func (c Conditions) Check(exists bool, etag string) error {
	if c.IfMatch != "" && (!exists || (c.IfMatch != "*" && c.IfMatch != etag)) {
		return fmt.Errorf("If-Match %s: %w", c.IfMatch, ErrPreconditionFailed)
	}
	if c.IfNoneMatch != "" && exists && (c.IfNoneMatch == "*" || c.IfNoneMatch == etag) {
		return fmt.Errorf("If-None-Match %s: %w", c.IfNoneMatch, ErrPreconditionFailed)
	}
	return nil
}
