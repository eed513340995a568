package filerest

import (
	"errors"
	"net/http"
	"syscall"

	"github.com/blobshare/blobshare/lease"
	"github.com/blobshare/blobshare/locks"

	"github.com/blobshare/blobshare/storagehttp"
)

// Error and Detail are storagehttp's: FileREST renders its failures with
// the plumbing every service shares.
type (
	Error  = storagehttp.Error
	Detail = storagehttp.Detail
)

// Error codes FileREST answers (filerest.md §7, locking.md §6.2); the
// service-neutral ones are storagehttp's.
const (
	CodeAuthenticationFailed            = storagehttp.CodeAuthenticationFailed
	CodeAuthorizationFailure            = storagehttp.CodeAuthorizationFailure
	CodeAuthorizationPermissionMismatch = storagehttp.CodeAuthorizationPermissionMismatch
	CodeAuthorizationProtocolMismatch   = storagehttp.CodeAuthorizationProtocolMismatch
	CodeAuthorizationSourceIPMismatch   = storagehttp.CodeAuthorizationSourceIPMismatch
	CodeAuthorizationResourceType       = storagehttp.CodeAuthorizationResourceType
	CodeAuthorizationServiceMismatch    = storagehttp.CodeAuthorizationServiceMismatch
	CodeNoAuthenticationInformation     = storagehttp.CodeNoAuthenticationInformation
	CodeInvalidHeaderValue              = storagehttp.CodeInvalidHeaderValue
	CodeMissingRequiredHeader           = storagehttp.CodeMissingRequiredHeader
	CodeInvalidQueryParameterValue      = storagehttp.CodeInvalidQueryParameterValue
	CodeMissingRequiredQueryParameter   = storagehttp.CodeMissingRequiredQueryParameter
	CodeUnsupportedHTTPVerb             = storagehttp.CodeUnsupportedHTTPVerb
	CodeUnsupportedHeader               = "UnsupportedHeader"
	CodeInvalidURI                      = storagehttp.CodeInvalidURI
	CodeInvalidResourceName             = storagehttp.CodeInvalidResourceName
	CodeInvalidPathName                 = "InvalidFileOrDirectoryPathName"
	CodeInvalidRange                    = "InvalidRange"
	CodeInvalidInput                    = storagehttp.CodeInvalidInput
	CodeHandleLimitExceeded             = "HandleLimitExceeded"
	CodeInvalidXMLDocument              = storagehttp.CodeInvalidXMLDocument
	CodeOutOfRangeInput                 = storagehttp.CodeOutOfRangeInput
	CodeMD5Mismatch                     = storagehttp.CodeMD5Mismatch
	CodeRequestBodyTooLarge             = storagehttp.CodeRequestBodyTooLarge
	CodeMissingContentLength            = "MissingContentLengthHeader"
	CodeRequestHeaderTooLarge           = storagehttp.CodeRequestHeaderTooLarge
	CodeInternalError                   = storagehttp.CodeInternalError
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
	CodeInvalidMetadata                 = storagehttp.CodeInvalidMetadata
	CodeCannotVerifyCopySource          = storagehttp.CodeCannotVerifyCopySource
	CodeInvalidMarker                   = storagehttp.CodeInvalidMarker
	CodeShareSizeLimitReached           = "ShareSizeLimitReached"
)

// lockErrors maps the locks sentinels (locking.md §0.1, §6.2). The fs
// errors are appended by fsErrors (fsmap.go) so that the table stays one
// list in evaluation order.
var lockErrors = []storagehttp.Mapping{
	{Target: locks.ErrDeletePending, Status: http.StatusConflict, Code: CodeSMBDeletePending, Message: "The specified resource is marked for deletion by an SMB client."},
	{Target: locks.ErrSharingViolation, Status: http.StatusConflict, Code: CodeSharingViolation, Message: "The specified resource may be in use by an SMB client."},
	{Target: locks.ErrLockConflict, Status: http.StatusConflict, Code: CodeFileLockConflict, Message: "A portion of the specified file is locked by an SMB client."},
	{Target: locks.ErrReadOnly, Status: http.StatusPreconditionFailed, Code: CodeReadOnlyAttribute, Message: "The specified resource is read-only and cannot be modified at this time."},
	{Target: locks.ErrDirectoryNotEmpty, Status: http.StatusConflict, Code: CodeDirectoryNotEmpty, Message: "The specified directory is not empty."},
	{Target: locks.ErrCannotDelete, Status: http.StatusPreconditionFailed, Code: CodeReadOnlyAttribute, Message: "The specified resource is read-only and cannot be modified at this time."},
	{Target: locks.ErrHandleLimit, Status: http.StatusBadRequest, Code: CodeHandleLimitExceeded, Message: "The total number of open handles on the file exceeds the limit."},
	{Target: locks.ErrInvalidParameter, Status: http.StatusBadRequest, Code: CodeInvalidInput, Message: "One of the request inputs is not valid."},
}

// spaceErrors maps "out of space" from below — the blob store's or the
// database's file system full (ENOSPC) or over quota (EDQUOT) — to the
// Azure Files answer for a full share: 403 ShareSizeLimitReached, which
// the SDKs do not retry (a 500 would be retried for many seconds). It is
// tried before the other tables so that no wrapping sentinel hides it.
var spaceErrors = []storagehttp.Mapping{
	{Target: syscall.ENOSPC, Status: http.StatusForbidden, Code: CodeShareSizeLimitReached, Message: msgShareFull},
	{Target: syscall.EDQUOT, Status: http.StatusForbidden, Code: CodeShareSizeLimitReached, Message: msgShareFull},
}

const msgShareFull = "The specified share is full."

// isSpaceError reports whether err means the storage below is full.
func isSpaceError(err error) bool {
	for _, m := range spaceErrors {
		if errors.Is(err, m.Target) {
			return true
		}
	}
	return errors.Is(err, locks.ErrStorageFull) // the database's disk, classified by locks
}

var leaseMessages = map[locks.LeaseCode]string{
	locks.LeaseIDMissing:                    "There is currently a lease on the file and no lease ID was specified in the request.",
	locks.LeaseIDMismatchWithFileOperation:  "The lease ID specified did not match the lease ID for the file.",
	locks.LeaseNotPresentWithFileOperation:  "There is currently no lease on the file.",
	locks.LeaseAlreadyPresent:               "There is already a lease present.",
	locks.LeaseNotPresentWithLeaseOperation: "There is currently no lease on the file.",
	locks.LeaseIDMismatchWithLeaseOperation: "The lease ID specified did not match the lease ID for the file.",
}

// toError maps any error to the *Error to render (storagehttp.Classify
// with fileErrors).
func toError(err error) *Error { return storagehttp.Classify(err, fileErrors) }

// fileErrors is FileREST's error table: a *locks.LeaseError (a file
// lease) by its Status, a share's *lease.Error (storagehttp.LeaseError),
// storage full (spaceErrors) to 403 ShareSizeLimitReached, then
// the locks and fs sentinels in order; nil for anything else.
func fileErrors(err error) *Error {
	var le *locks.LeaseError
	if errors.As(err, &le) {
		msg := leaseMessages[le.Code]
		if msg == "" {
			msg = "The lease operation failed."
		}
		return &Error{Status: le.Status(), Code: string(le.Code), Message: msg, Err: err}
	}
	if e := storagehttp.LeaseError(err, lease.Share); e != nil {
		return e
	}
	if isSpaceError(err) {
		return &Error{Status: http.StatusForbidden, Code: CodeShareSizeLimitReached, Message: msgShareFull, Err: err}
	}
	for _, table := range [][]storagehttp.Mapping{lockErrors, fsErrors} {
		if e := storagehttp.MatchTable(err, table); e != nil {
			return e
		}
	}
	return nil
}
