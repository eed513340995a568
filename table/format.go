package table

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/blobshare/blobshare/storagehttp"
)

// level is the OData JSON metadata level of an answer.
type level uint8

const (
	minimalMeta level = iota // application/json;odata=minimalmetadata (the default)
	noMeta                   // odata=nometadata
	fullMeta                 // odata=fullmetadata
)

func (l level) contentType() string {
	switch l {
	case noMeta:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case fullMeta:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return storagehttp.ODataJSONContentType
}

// errAtom is Azure's answer to Atom (x-ms-version 2015-12-11 and later
// are JSON only).
func errAtom() *storagehttp.Error {
	return storagehttp.NewError(http.StatusUnsupportedMediaType, "AtomFormatNotSupported", "Atom format is not supported.")
}

// negotiate picks the answer's level: $format overrides Accept; a media
// range naming Atom (or application/xml) with no JSON alternative is 415
// AtomFormatNotSupported; "application/json" alone, "*/*" and no Accept
// at all are minimal metadata. A request body in Atom is 415 as well.
func negotiate(r *http.Request, q url.Values) (level, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && isAtom(ct) {
		return 0, errAtom()
	}
	if f, ok := q["$format"]; ok {
		v := ""
		if len(f) > 0 {
			v = f[0]
		}
		if l, ok := levelOf(v); ok {
			return l, nil
		}
		if isAtom(v) {
			return 0, errAtom()
		}
		return 0, storagehttp.InvalidQuery("$format", v, "not a JSON format")
	}
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return minimalMeta, nil
	}
	sawAtom := false
	for _, a := range accept {
		for _, rng := range strings.Split(a, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			if l, ok := levelOf(rng); ok {
				return l, nil
			}
			if isAtom(rng) {
				sawAtom = true
			}
		}
	}
	if sawAtom {
		return 0, errAtom()
	}
	return minimalMeta, nil
}

// levelOf reads a JSON media type or $format value: application/json
// with an odata parameter, "*/*", or the bare level names.
func levelOf(v string) (level, bool) {
	switch strings.TrimSpace(v) {
	case "json", "*/*", "application/*":
		return minimalMeta, true
	case "nometadata":
		return noMeta, true
	case "minimalmetadata":
		return minimalMeta, true
	case "fullmetadata":
		return fullMeta, true
	// What the SDKs send, as mime.ParseMediaType reads it, without its
	// allocations on every request.
	case "application/json", "application/json;odata=minimalmetadata":
		return minimalMeta, true
	case "application/json;odata=nometadata":
		return noMeta, true
	case "application/json;odata=fullmetadata":
		return fullMeta, true
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return 0, false
	}
	switch strings.ToLower(params["odata"]) {
	case "", "minimalmetadata":
		return minimalMeta, true
	case "nometadata":
		return noMeta, true
	case "fullmetadata":
		return fullMeta, true
	}
	return 0, false
}

func isAtom(v string) bool {
	v = strings.ToLower(v)
	return strings.Contains(v, "atom") || strings.HasPrefix(strings.TrimSpace(v), "application/xml")
}
