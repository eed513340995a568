package storagehttp

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// XMLDecl starts every XML body the services send.
const XMLDecl = `<?xml version="1.0" encoding="utf-8"?>`

// Time layouts with exactly 7 fractional digits, the form the SDKs parse
// strictly.
const (
	TimeLayout7    = "2006-01-02T15:04:05.0000000Z07:00"
	timeLayout7UTC = "2006-01-02T15:04:05.0000000Z"
)

// FormatTime7 renders t in UTC with exactly 7 fractional digits.
func FormatTime7(t time.Time) string { return t.UTC().Format(timeLayout7UTC) }

// ValidVersion reports whether v is a syntactically valid YYYY-MM-DD
// service version naming a real date (any such date is accepted).
func ValidVersion(v string) bool {
	if len(v) != 10 {
		return false
	}
	_, err := time.Parse("2006-01-02", v)
	return err == nil
}

// WriteXML sends v as the response body, after the XML declaration, with
// status.
func WriteXML(w http.ResponseWriter, status int, v any) error {
	out, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(XMLDecl)+len(out)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(XMLDecl))
	_, _ = w.Write(out)
	return nil
}

// DecodeXMLBody strictly decodes a request body of at most max bytes into
// v: the whole body must be one well-formed document (400
// InvalidXmlDocument otherwise, the parser's complaint as Reason); a
// longer body is 413 RequestBodyTooLarge.
func DecodeXMLBody(r *http.Request, v any, max int64) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return err
	}
	if int64(len(body)) > max {
		return NewError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge, msgBodyTooLarge)
	}
	// Well-formedness first: walk every token.
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		if _, err := d.Token(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return invalidXML(err)
		}
	}
	if err := xml.Unmarshal(body, v); err != nil {
		return invalidXML(err)
	}
	return nil
}

func invalidXML(err error) *Error {
	return NewError(http.StatusBadRequest, CodeInvalidXMLDocument, "XML specified is not syntactically valid.",
		Detail{Name: "Reason", Value: err.Error()})
}

// element is one XML element named at run time with text content.
type element struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// MetadataXML renders metadata as <Metadata><k>v</k>…</Metadata> (List
// Shares, List Queues, … with include=metadata).
type MetadataXML struct {
	Items []element
}

// NewMetadataXML builds the element of md, keys sorted; nil for nil md
// (the element is then left out).
func NewMetadataXML(md map[string]string) *MetadataXML {
	if md == nil {
		return nil
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m := &MetadataXML{}
	for _, k := range keys {
		m.Items = append(m.Items, element{XMLName: xml.Name{Local: k}, Value: md[k]})
	}
	return m
}

// SignedIdentifiersXML is the document of Get and Set Share, Container and
// Queue ACL: up to five stored access policies.
type SignedIdentifiersXML struct {
	XMLName     xml.Name              `xml:"SignedIdentifiers"`
	Identifiers []SignedIdentifierXML `xml:"SignedIdentifier"`
}

// SignedIdentifierXML is one stored access policy, named by its Id.
type SignedIdentifierXML struct {
	ID           string           `xml:"Id"`
	AccessPolicy *AccessPolicyXML `xml:"AccessPolicy"`
}

// AccessPolicyXML is a stored access policy's fields, as sent (ISO 8601
// times, permission letters).
type AccessPolicyXML struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}
