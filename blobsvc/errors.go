package blobsvc

import (
	"errors"

	"github.com/blobshare/blobshare/lease"
)

// Sentinels of the Blob service's outcomes. Stores return ErrContainerNotFound,
// ErrContainerExists and ErrBlobNotFound (wrapped with the resource); the
// Service adds the rest. The HTTP front end maps each to its Azure error.
var (
	ErrContainerNotFound = errors.New("container not found")
	ErrContainerExists   = errors.New("container already exists")
	ErrBlobNotFound      = errors.New("blob not found")
	// ErrInvalidContainerName: not 3-63 lowercase letters, digits and
	// single inner hyphens (nor $root, $logs, $web).
	ErrInvalidContainerName = errors.New("invalid container name")
	// ErrInvalidBlobName: empty, longer than 1024 characters, not UTF-8,
	// or with a control character.
	ErrInvalidBlobName = errors.New("invalid blob name")
	// ErrInvalidBlockID: a block id that is not base64 of at most 64
	// bytes, or whose length differs from the blob's other blocks.
	ErrInvalidBlockID = errors.New("invalid block id")
	// ErrInvalidBlockList: Put Block List names a block that does not
	// exist where the list says to look, or has too many blocks.
	ErrInvalidBlockList = errors.New("invalid block list")
	// ErrConditionNotMet: If-Match, If-None-Match, If-Modified-Since or
	// If-Unmodified-Since failed on a write (412), or on a read for
	// If-Match / If-Unmodified-Since.
	ErrConditionNotMet = errors.New("condition not met")
	// ErrUnsatisfiableCondition: a read with If-None-Match: * (400).
	ErrUnsatisfiableCondition = errors.New("unsatisfiable condition")
	// ErrBlobExists: Put Blob or Put Block List with If-None-Match: * on
	// an existing blob (409 BlobAlreadyExists).
	ErrBlobExists = errors.New("blob already exists")
	// ErrNotModified: a GET/HEAD whose If-None-Match matched or whose
	// If-Modified-Since found no change (304).
	ErrNotModified = errors.New("not modified")
	// ErrInvalidRange: a range starting at or past the end of the blob.
	ErrInvalidRange = errors.New("invalid range")
	// ErrBlockIDLength: a Put Block whose id decodes to another length
	// than the blob's staged blocks' ids (400 InvalidBlobOrBlock).
	ErrBlockIDLength = errors.New("block id length differs from the blob's other blocks")
	// ErrMD5Mismatch: the Content-MD5 sent does not match the content.
	ErrMD5Mismatch = errors.New("content MD5 mismatch")
	// ErrMultipleConditions: a write with conditional headers other than
	// one alone or the pairs If-Match + If-Unmodified-Since and
	// If-None-Match + If-Modified-Since, or with more than one ETag in
	// one header (400 MultipleConditionHeadersNotSupported).
	ErrMultipleConditions = errors.New("multiple condition headers not supported")
	// ErrSourceConditionNotMet: a copy's x-ms-source-if-* condition
	// failed (412 SourceConditionNotMet).
	ErrSourceConditionNotMet = errors.New("copy source condition not met")
)

// Lease errors: lease.Error values (errors.Is matches by code), kept
// under blobsvc's names for its callers and tests; the front end maps
// *lease.Error once (storagehttp.LeaseError).
var (
	// Blob or container operations against a lease (412).
	ErrLeaseIDMissing  error = &lease.Error{Code: lease.LeaseIDMissing}
	ErrLeaseIDMismatch error = &lease.Error{Code: lease.LeaseIDMismatchWithResourceOperation}
	ErrLeaseNotPresent error = &lease.Error{Code: lease.LeaseNotPresentWithResourceOperation}
	ErrLeaseLost       error = &lease.Error{Code: lease.LeaseLost}
	// Lease operations (409).
	ErrLeaseAlreadyPresent        error = &lease.Error{Code: lease.LeaseAlreadyPresent}
	ErrLeaseNotPresentWithLeaseOp error = &lease.Error{Code: lease.LeaseNotPresentWithLeaseOperation}
	ErrLeaseIDMismatchWithLeaseOp error = &lease.Error{Code: lease.LeaseIDMismatchWithLeaseOperation}
	ErrLeaseBreakingNoAcquire     error = &lease.Error{Code: lease.LeaseIsBreakingAndCannotBeAcquired}
	ErrLeaseBreakingNoChange      error = &lease.Error{Code: lease.LeaseIsBreakingAndCannotBeChanged}
	ErrLeaseBrokenNoRenew         error = &lease.Error{Code: lease.LeaseIsBrokenAndCannotBeRenewed}
	// Malformed lease requests (400).
	ErrInvalidLeaseDuration = lease.ErrInvalidDuration
	ErrInvalidBreakPeriod   = lease.ErrInvalidBreakPeriod
	ErrInvalidLeaseAction   = lease.ErrInvalidAction
)

// ErrServerBusy: the metadata store could not take the write in time
// (503 ServerBusy; clients retry). Stores classify their driver's busy
// errors into it.
var ErrServerBusy = errors.New("metadata store busy")

// ErrContentMismatch: the content store holds another length than the
// blob's metadata row records (only a crash between the two writes of a
// commit leaves this; 500).
var ErrContentMismatch = errors.New("content and metadata disagree")
