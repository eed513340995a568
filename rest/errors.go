package rest

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"

	"github.com/blobshare/blobshare/locks"
)

// Detail is one extra child element of an error body, after <Message>:
// HeaderName/HeaderValue, QueryParameterName/QueryParameterValue/Reason.
type Detail struct {
	Name  string
	Value string
}

// Error is an Azure-style failure: HTTP status, x-ms-error-code, message
// and optional detail elements. Handlers and middleware return it (or any
// error the mapping table in toError knows); one writer renders it.
type Error struct {
	Status  int
	Code    string
	Message string
	Details []Detail
	Err     error // the cause, for logs and errors.Is; never rendered
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Error codes used by rest itself (filerest.md §7, locking.md §6.2).
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
	CodeUnsupportedHeader               = "UnsupportedHeader"
	CodeInvalidURI                      = "InvalidUri"
	CodeInvalidResourceName             = "InvalidResourceName"
	CodeInvalidPathName                 = "InvalidFileOrDirectoryPathName"
	CodeInvalidRange                    = "InvalidRange"
	CodeInvalidInput                    = "InvalidInput"
	CodeHandleLimitExceeded             = "HandleLimitExceeded"
	CodeInvalidXMLDocument              = "InvalidXmlDocument"
	CodeOutOfRangeInput                 = "OutOfRangeInput"
	CodeMD5Mismatch                     = "Md5Mismatch"
	CodeRequestBodyTooLarge             = "RequestBodyTooLarge"
	CodeMissingContentLength            = "MissingContentLengthHeader"
	CodeRequestHeaderTooLarge           = "RequestHeaderFieldsTooLarge"
	CodeInternalError                   = "InternalError"
	CodeNotImplemented                  = "NotImplemented"
	CodeResourceNotFound                = "ResourceNotFound"
	CodeShareNotFound                   = "ShareNotFound"
	CodeParentNotFound                  = "ParentNotFound"
	CodeShareAlreadyExists              = "ShareAlreadyExists"
	CodeResourceAlreadyExists           = "ResourceAlreadyExists"
	CodeResourceTypeMismatch            = "ResourceTypeMismatch"
	CodeDirectoryNotEmpty               = "DirectoryNotEmpty"
	CodeSharingViolation                = "SharingViolation"
	CodeSMBDeletePending                = "SMBDeletePending"
	CodeFileLockConflict                = "FileLockConflict"
	CodeReadOnlyAttribute               = "ReadOnlyAttribute"
	CodeInvalidMetadata                 = "InvalidMetadata"
	CodeCannotVerifyCopySource          = "CannotVerifyCopySource"
	CodeInvalidMarker                   = "InvalidMarker"
	CodeShareSizeLimitReached           = "ShareSizeLimitReached"
)

// newError builds an *Error.
func newError(status int, code, msg string, details ...Detail) *Error {
	return &Error{Status: status, Code: code, Message: msg, Details: details}
}

func errInvalidHeader(name, value string) *Error {
	return newError(http.StatusBadRequest, CodeInvalidHeaderValue,
		"The value for one of the HTTP headers is not in the correct format.",
		Detail{"HeaderName", name}, Detail{"HeaderValue", value})
}

func errMissingHeader(name string) *Error {
	return newError(http.StatusBadRequest, CodeMissingRequiredHeader,
		"An HTTP header that's mandatory for this request is not specified.",
		Detail{"HeaderName", name})
}

func errInvalidQuery(name, value, reason string) *Error {
	return newError(http.StatusBadRequest, CodeInvalidQueryParameterValue,
		"Value for one of the query parameters specified in the request URI is invalid.",
		Detail{"QueryParameterName", name}, Detail{"QueryParameterValue", value}, Detail{"Reason", reason})
}

func errMissingQuery(name string) *Error {
	return newError(http.StatusBadRequest, CodeMissingRequiredQueryParameter,
		"A query parameter that's mandatory for this request is not specified.",
		Detail{"QueryParameterName", name})
}

func errOutOfRange(name, value string) *Error {
	return newError(http.StatusBadRequest, CodeOutOfRangeInput,
		"One of the request inputs is out of range.",
		Detail{"HeaderName", name}, Detail{"HeaderValue", value})
}

func errAuthFailed(reason string) *Error {
	return newError(http.StatusForbidden, CodeAuthenticationFailed,
		"Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.",
		Detail{"AuthenticationErrorDetail", reason})
}

// mapping is one row of the domain error table.
type mapping struct {
	target  error
	status  int
	code    string
	message string
}

// lockErrors maps the locks sentinels (locking.md §0.1, §6.2). The fs
// errors are appended by fsErrors (fsmap.go) so that the table stays one
// list in evaluation order.
var lockErrors = []mapping{
	{locks.ErrDeletePending, http.StatusConflict, CodeSMBDeletePending, "The specified resource is marked for deletion by an SMB client."},
	{locks.ErrSharingViolation, http.StatusConflict, CodeSharingViolation, "The specified resource may be in use by an SMB client."},
	{locks.ErrLockConflict, http.StatusConflict, CodeFileLockConflict, "A portion of the specified file is locked by an SMB client."},
	{locks.ErrReadOnly, http.StatusPreconditionFailed, CodeReadOnlyAttribute, "The specified resource is read-only and cannot be modified at this time."},
	{locks.ErrDirectoryNotEmpty, http.StatusConflict, CodeDirectoryNotEmpty, "The specified directory is not empty."},
	{locks.ErrCannotDelete, http.StatusPreconditionFailed, CodeReadOnlyAttribute, "The specified resource is read-only and cannot be modified at this time."},
	{locks.ErrHandleLimit, http.StatusBadRequest, CodeHandleLimitExceeded, "The total number of open handles on the file exceeds the limit."},
	{locks.ErrInvalidParameter, http.StatusBadRequest, CodeInvalidInput, "One of the request inputs is not valid."},
}

// spaceErrors maps "out of space" from below — the blob store's or the
// database's file system full (ENOSPC) or over quota (EDQUOT) — to the
// Azure Files answer for a full share: 403 ShareSizeLimitReached, which
// the SDKs do not retry (a 500 would be retried for many seconds). It is
// tried before the other tables so that no wrapping sentinel hides it.
var spaceErrors = []mapping{
	{syscall.ENOSPC, http.StatusForbidden, CodeShareSizeLimitReached, msgShareFull},
	{syscall.EDQUOT, http.StatusForbidden, CodeShareSizeLimitReached, msgShareFull},
}

const msgShareFull = "The specified share is full."

// sqliteFull is SQLITE_FULL, the database's "disk is full" (the primary
// result code; extended codes keep it in the low byte).
const sqliteFull = 13

// codedError is what the SQLite driver's errors implement; matched by
// behaviour so rest does not import the driver.
type codedError interface {
	error
	Code() int
}

// isSpaceError reports whether err means the storage below is full.
func isSpaceError(err error) bool {
	for _, m := range spaceErrors {
		if errors.Is(err, m.target) {
			return true
		}
	}
	var ce codedError
	return errors.As(err, &ce) && ce.Code()&0xff == sqliteFull
}

var leaseMessages = map[locks.LeaseCode]string{
	locks.LeaseIDMissing:                    "There is currently a lease on the file and no lease ID was specified in the request.",
	locks.LeaseIDMismatchWithFileOperation:  "The lease ID specified did not match the lease ID for the file.",
	locks.LeaseNotPresentWithFileOperation:  "There is currently no lease on the file.",
	locks.LeaseAlreadyPresent:               "There is already a lease present.",
	locks.LeaseNotPresentWithLeaseOperation: "There is currently no lease on the file.",
	locks.LeaseIDMismatchWithLeaseOperation: "The lease ID specified did not match the lease ID for the file.",
}

// toError maps any error to the *Error to render: an *Error as is, a
// *locks.LeaseError by its Status, storage full (spaceErrors) to 403
// ShareSizeLimitReached, the sentinel tables in order, a body
// that went over its limit to 413, and anything else to 500 InternalError.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var le *locks.LeaseError
	if errors.As(err, &le) {
		msg := leaseMessages[le.Code]
		if msg == "" {
			msg = "The lease operation failed."
		}
		return &Error{Status: le.Status(), Code: string(le.Code), Message: msg, Err: err}
	}
	if isSpaceError(err) {
		return &Error{Status: http.StatusForbidden, Code: CodeShareSizeLimitReached, Message: msgShareFull, Err: err}
	}
	for _, table := range [][]mapping{lockErrors, fsErrors} {
		for _, m := range table {
			if errors.Is(err, m.target) {
				return &Error{Status: m.status, Code: m.code, Message: m.message, Err: err}
			}
		}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeRequestBodyTooLarge,
			Message: "The request body is too large and exceeds the maximum permissible limit.", Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) {
		// The client went away, sent a short body or did not send it
		// within the body read deadline: 400, never a retried 5xx.
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidInput,
			Message: "The request was cancelled or its body was incomplete.", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternalError,
		Message: "Server encountered an internal error. Please try again after some time.", Err: err}
}

// errorBody is the XML error document. Details are rendered as raw
// elements after Message.
type errorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
	Details []xmlDetail
}

type xmlDetail struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// writeError renders e: status, x-ms-error-code, and (not for HEAD) the
// XML body whose Message ends with RequestId and Time (7 fractional
// digits). The common headers were set by the request-id middleware.
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	info := infoFrom(r.Context())
	h := w.Header()
	// Drop headers a handler may have set before failing.
	for _, k := range []string{"ETag", "Last-Modified", "Content-Range", "Content-MD5", "Accept-Ranges"} {
		h.Del(k)
	}
	h.Set("x-ms-error-code", e.Code)
	if r.Method == http.MethodHead {
		h.Del("Content-Type")
		h.Set("Content-Length", "0")
		w.WriteHeader(e.Status)
		return
	}
	body := errorBody{Code: e.Code, Message: e.Message + "\nRequestId:" + info.id + "\nTime:" + formatTime7(info.start)}
	for _, d := range e.Details {
		body.Details = append(body.Details, xmlDetail{XMLName: xml.Name{Local: d.Name}, Value: d.Value})
	}
	// Marshal cannot fail on a struct of strings (invalid characters are
	// escaped, not refused); on the impossible error the body is just the
	// declaration and the header still carries the code.
	out, _ := xml.Marshal(body)
	out = append([]byte(xmlDecl), out...)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}
