package storagehttp

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/blobshare/blobshare/meta"
)

// Detail is one extra child element of an error body, after <Message>:
// HeaderName/HeaderValue, QueryParameterName/QueryParameterValue/Reason.
type Detail struct {
	Name  string
	Value string
}

// Error is an Azure Storage failure: HTTP status, x-ms-error-code, message
// and optional detail elements. Handlers and middleware return it (or an
// error their service's table knows); WriteError renders it.
type Error struct {
	Status  int
	Code    string
	Message string
	Details []Detail
	// Challenge is the WWW-Authenticate header of a 401 (a bearer token
	// refused), which Authenticate sets whatever renders the body; ""
	// sends none.
	Challenge string
	Err       error // the cause, for logs and errors.Is; never rendered
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Error codes common to every service.
const (
	CodeAuthenticationFailed            = "AuthenticationFailed"
	CodeAuthorizationFailure            = "AuthorizationFailure"
	CodeAuthorizationPermissionMismatch = "AuthorizationPermissionMismatch"
	CodeAuthorizationProtocolMismatch   = "AuthorizationProtocolMismatch"
	CodeAuthorizationSourceIPMismatch   = "AuthorizationSourceIPMismatch"
	CodeAuthorizationResourceType       = "AuthorizationResourceTypeMismatch"
	CodeAuthorizationServiceMismatch    = "AuthorizationServiceMismatch"
	CodeNoAuthenticationInformation     = "NoAuthenticationInformation"
	CodeInvalidHeaderValue              = "InvalidHeaderValue"
	CodeMissingRequiredHeader           = "MissingRequiredHeader"
	CodeInvalidQueryParameterValue      = "InvalidQueryParameterValue"
	CodeMissingRequiredQueryParameter   = "MissingRequiredQueryParameter"
	CodeUnsupportedHTTPVerb             = "UnsupportedHttpVerb"
	CodeInvalidURI                      = "InvalidUri"
	CodeInvalidResourceName             = "InvalidResourceName"
	CodeInvalidInput                    = "InvalidInput"
	CodeInvalidXMLDocument              = "InvalidXmlDocument"
	CodeOutOfRangeInput                 = "OutOfRangeInput"
	CodeOutOfRangeQueryParameterValue   = "OutOfRangeQueryParameterValue"
	CodeRequestBodyTooLarge             = "RequestBodyTooLarge"
	CodeRequestHeaderTooLarge           = "RequestHeaderFieldsTooLarge"
	CodeInternalError                   = "InternalError"
	CodeServerBusy                      = "ServerBusy"
	CodeInvalidMetadata                 = "InvalidMetadata"
	CodeInvalidMarker                   = "InvalidMarker"
)

const (
	msgBodyTooLarge = "The request body is too large and exceeds the maximum permissible limit."
	msgInternal     = "Server encountered an internal error. Please try again after some time."
)

// NewError builds an *Error.
func NewError(status int, code, msg string, details ...Detail) *Error {
	return &Error{Status: status, Code: code, Message: msg, Details: details}
}

// InvalidHeader is 400 InvalidHeaderValue naming the header and value.
func InvalidHeader(name, value string) *Error {
	return NewError(http.StatusBadRequest, CodeInvalidHeaderValue,
		"The value for one of the HTTP headers is not in the correct format.",
		Detail{Name: "HeaderName", Value: name}, Detail{Name: "HeaderValue", Value: value})
}

// MissingHeader is 400 MissingRequiredHeader naming the header.
func MissingHeader(name string) *Error {
	return NewError(http.StatusBadRequest, CodeMissingRequiredHeader,
		"An HTTP header that's mandatory for this request is not specified.",
		Detail{Name: "HeaderName", Value: name})
}

// InvalidQuery is 400 InvalidQueryParameterValue.
func InvalidQuery(name, value, reason string) *Error {
	return NewError(http.StatusBadRequest, CodeInvalidQueryParameterValue,
		"Value for one of the query parameters specified in the request URI is invalid.",
		Detail{Name: "QueryParameterName", Value: name}, Detail{Name: "QueryParameterValue", Value: value}, Detail{Name: "Reason", Value: reason})
}

// OutOfRangeQuery is 400 OutOfRangeQueryParameterValue with the bounds.
func OutOfRangeQuery(name, value string, min, max int64) *Error {
	return NewError(http.StatusBadRequest, CodeOutOfRangeQueryParameterValue,
		"One of the query parameters specified in the request URI is outside the permissible range.",
		Detail{Name: "QueryParameterName", Value: name}, Detail{Name: "QueryParameterValue", Value: value},
		Detail{Name: "MinimumAllowed", Value: strconv.FormatInt(min, 10)}, Detail{Name: "MaximumAllowed", Value: strconv.FormatInt(max, 10)})
}

// MissingQuery is 400 MissingRequiredQueryParameter.
func MissingQuery(name string) *Error {
	return NewError(http.StatusBadRequest, CodeMissingRequiredQueryParameter,
		"A query parameter that's mandatory for this request is not specified.",
		Detail{Name: "QueryParameterName", Value: name})
}

// OutOfRange is 400 OutOfRangeInput naming a header.
func OutOfRange(name, value string) *Error {
	return NewError(http.StatusBadRequest, CodeOutOfRangeInput,
		"One of the request inputs is out of range.",
		Detail{Name: "HeaderName", Value: name}, Detail{Name: "HeaderValue", Value: value})
}

// AuthFailed is 403 AuthenticationFailed with the reason as detail.
func AuthFailed(reason string) *Error {
	return NewError(http.StatusForbidden, CodeAuthenticationFailed,
		"Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.",
		Detail{Name: "AuthenticationErrorDetail", Value: reason})
}

// UnsupportedVerb is 405 UnsupportedHttpVerb.
func UnsupportedVerb() *Error {
	return NewError(http.StatusMethodNotAllowed, CodeUnsupportedHTTPVerb,
		"The resource doesn't support the specified HTTP verb.")
}

// Mapping is one row of a service's error table: an error matched with
// errors.Is and what to answer.
type Mapping struct {
	Target  error
	Status  int
	Code    string
	Message string
}

// MatchTable returns the *Error of the first row whose Target err is, or
// nil.
func MatchTable(err error, table []Mapping) *Error {
	for _, m := range table {
		if errors.Is(err, m.Target) {
			return &Error{Status: m.Status, Code: m.Code, Message: m.Message, Err: err}
		}
	}
	return nil
}

// Classify maps any error to the *Error to render: an *Error as is; then
// the service's own mapping (nil, or returning nil for errors it does not
// know); a body over its limit → 413 RequestBodyTooLarge; a cancelled
// request, a short body or a body read deadline → 400 InvalidInput (a
// deterministic client failure must not be a 5xx, which the SDKs retry);
// anything else → 500 InternalError.
func Classify(err error, service func(error) *Error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if service != nil {
		if e := service(err); e != nil {
			return e
		}
	}
	if errors.Is(err, meta.ErrUnavailable) {
		// Before the EOF test below: a database connection that broke
		// also reads as an unexpected EOF, and it is no fault of the
		// request's.
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeServerBusy,
			Message: "The server is currently unable to receive requests. Please retry your request.", Err: err}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeRequestBodyTooLarge, Message: msgBodyTooLarge, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidInput,
			Message: "The request was cancelled or its body was incomplete.", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternalError, Message: msgInternal, Err: err}
}

// errorBody is the XML error document. Details are rendered as raw
// elements after Message.
type errorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
	Details []element
}

// WriteError renders e with the renderer ErrorFormat chose for the
// request, by default as XML: status, x-ms-error-code (always, HEAD included:
// the SDKs read the code from that header first) and, except for HEAD,
// the XML body whose Message ends with "\nRequestId:<id>\nTime:<7
// fractional digits>Z", then the details. Headers a handler may have set
// before failing (ETag, Last-Modified, ranges) are dropped.
func WriteError(w http.ResponseWriter, r *http.Request, e *Error) {
	info := InfoFrom(r.Context())
	if info.render != nil {
		info.render(w, r, e)
		return
	}
	writeXMLError(w, r, e)
}

// writeXMLError is the XML renderer WriteError uses by default.
func writeXMLError(w http.ResponseWriter, r *http.Request, e *Error) {
	info := InfoFrom(r.Context())
	h := w.Header()
	for _, k := range []string{"ETag", "Last-Modified", "Content-Range", "Content-MD5", "Accept-Ranges"} {
		h.Del(k)
	}
	h.Set(ErrorCodeHeader, e.Code)
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified { // a 304 has no body
		h.Del("Content-Type")
		h.Set("Content-Length", "0")
		w.WriteHeader(e.Status)
		return
	}
	body := errorBody{Code: e.Code, Message: e.Message + "\nRequestId:" + info.ID + "\nTime:" + FormatTime7(info.Start)}
	for _, d := range e.Details {
		body.Details = append(body.Details, element{XMLName: xml.Name{Local: d.Name}, Value: d.Value})
	}
	// Marshal cannot fail on a struct of strings (invalid characters are
	// escaped, not refused); on the impossible error the body is just the
	// declaration and the header still carries the code.
	out, _ := xml.Marshal(body)
	out = append([]byte(XMLDecl), out...)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}
