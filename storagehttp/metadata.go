package storagehttp

import (
	"net/http"
	"strings"
)

// MetadataPrefix starts the name of every metadata header.
const MetadataPrefix = "x-ms-meta-"

// maxMetadataBytes bounds the names and values of one request's metadata.
const maxMetadataBytes = 8 << 10

// ParseMetadata collects x-ms-meta-* headers into a map keyed by the
// lowercase name. Names must be C# identifiers; values must be printable
// ASCII/Latin-1 text without control characters; the total must stay
// within 8 KiB. Violations → 400 InvalidMetadata.
func ParseMetadata(h http.Header) (map[string]string, error) {
	md := map[string]string{}
	total := 0
	for k, vs := range h {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, MetadataPrefix) {
			continue
		}
		name := lk[len(MetadataPrefix):]
		if !ValidIdentifier(name) {
			return nil, NewError(http.StatusBadRequest, CodeInvalidMetadata,
				"The metadata specified is invalid. It has characters that are not permitted.",
				Detail{Name: "HeaderName", Value: lk})
		}
		val := strings.Join(vs, ",")
		for i := 0; i < len(val); i++ {
			if val[i] < 0x20 && val[i] != '\t' || val[i] == 0x7f {
				return nil, NewError(http.StatusBadRequest, CodeInvalidMetadata,
					"The metadata specified is invalid. It has characters that are not permitted.",
					Detail{Name: "HeaderName", Value: lk})
			}
		}
		md[name] = strings.TrimSpace(val)
		total += len(name) + len(val)
	}
	if total > maxMetadataBytes {
		return nil, NewError(http.StatusBadRequest, CodeInvalidMetadata, "The metadata specified exceeds the maximum permitted size.")
	}
	return md, nil
}

// ValidIdentifier reports whether s is a C# identifier in ASCII: letter or _ first, then
// letters, digits, _.
func ValidIdentifier(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// SetMetadataHeaders writes md as x-ms-meta-* response headers; names keep
// their stored case.
func SetMetadataHeaders(h http.Header, md map[string]string) {
	for k, v := range md {
		h[MetadataPrefix+k] = []string{v}
	}
}
