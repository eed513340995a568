package storagehttp

import (
	"net/http"
	"strings"
)

// CodeUnsupportedHeader is Azure's 400 for "One of the HTTP headers
// specified in the request is not supported."
const CodeUnsupportedHeader = "UnsupportedHeader"

// Unsupported is a request header of a feature a service lacks whose
// meaning would change what is stored or answered (a customer-provided
// key, an encryption scope, a legal hold, …). Served as if it were absent
// it would be a wrong success, so a request carrying it is refused.
type Unsupported struct {
	Name string
	// Reason says what is not supported, for the error's Reason detail.
	Reason string
	// Benign is a value that asks for nothing (a legal hold of "false"),
	// accepted; "" means every value is refused.
	Benign string
	// Code is the error code; "" is UnsupportedHeader. The answer is 400
	// either way.
	Code string
}

// CheckUnsupported refuses the first header of table that h carries with
// a value other than its Benign one: 400 with the table's code (by
// default UnsupportedHeader), the header's name and value and the reason.
func CheckUnsupported(h http.Header, table []Unsupported) error {
	for _, u := range table {
		v, ok := header(h, u.Name)
		if !ok || u.Benign != "" && strings.EqualFold(strings.TrimSpace(v), u.Benign) {
			continue
		}
		code, msg := u.Code, "One of the HTTP headers specified in the request is not supported."
		if code == "" {
			code = CodeUnsupportedHeader
		} else if code == CodeInvalidHeaderValue {
			msg = "The value for one of the HTTP headers is not in the correct format."
		}
		return NewError(http.StatusBadRequest, code, msg,
			Detail{Name: "HeaderName", Value: u.Name}, Detail{Name: "HeaderValue", Value: v},
			Detail{Name: "Reason", Value: u.Reason})
	}
	return nil
}
