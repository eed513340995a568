package lease

import "errors"

// Code names a lease outcome by its Azure error code. Two of them
// (…WithResourceOperation) stand for a pair of codes that differ only by
// the resource the front end answers for: Code.For spells them.
type Code string

// Refusals of a lease action (Azure answers them 409 Conflict).
const (
	LeaseAlreadyPresent                Code = "LeaseAlreadyPresent"
	LeaseNotPresentWithLeaseOperation  Code = "LeaseNotPresentWithLeaseOperation"
	LeaseIDMismatchWithLeaseOperation  Code = "LeaseIdMismatchWithLeaseOperation"
	LeaseIsBreakingAndCannotBeAcquired Code = "LeaseIsBreakingAndCannotBeAcquired"
	LeaseIsBreakingAndCannotBeChanged  Code = "LeaseIsBreakingAndCannotBeChanged"
	LeaseIsBrokenAndCannotBeRenewed    Code = "LeaseIsBrokenAndCannotBeRenewed"
)

// Refusals of an operation on the leased resource (Azure answers them
// 412 Precondition Failed).
const (
	LeaseIDMissing Code = "LeaseIdMissing"
	LeaseLost      Code = "LeaseLost"
	// LeaseIDMismatchWithResourceOperation is
	// LeaseIDMismatchWithBlobOperation or …WithContainerOperation.
	LeaseIDMismatchWithResourceOperation Code = "LeaseIdMismatchWith{Resource}Operation"
	// LeaseNotPresentWithResourceOperation is
	// LeaseNotPresentWithBlobOperation or …WithContainerOperation.
	LeaseNotPresentWithResourceOperation Code = "LeaseNotPresentWith{Resource}Operation"
)

// Resource is what a lease guards, as its error codes and messages name
// it.
type Resource string

const (
	Blob      Resource = "Blob"
	Container Resource = "Container"
	// Share answers with the container codes (Azure Files' Lease Share
	// and the operations it guards answer LeaseIDMismatchWithContainer-
	// Operation and LeaseNotPresentWithContainerOperation).
	Share Resource = "Share"
)

// For is the Azure error code of c on resource r.
func (c Code) For(r Resource) string {
	noun := "Container"
	if r == Blob {
		noun = "Blob"
	}
	switch c {
	case LeaseIDMismatchWithResourceOperation:
		return "LeaseIdMismatchWith" + noun + "Operation"
	case LeaseNotPresentWithResourceOperation:
		return "LeaseNotPresentWith" + noun + "Operation"
	}
	return string(c)
}

// LeaseOperation reports whether c refuses a lease action (409) rather
// than an operation on the leased resource (412).
func (c Code) LeaseOperation() bool {
	switch c {
	case LeaseAlreadyPresent, LeaseNotPresentWithLeaseOperation, LeaseIDMismatchWithLeaseOperation,
		LeaseIsBreakingAndCannotBeAcquired, LeaseIsBreakingAndCannotBeChanged, LeaseIsBrokenAndCannotBeRenewed:
		return true
	}
	return false
}

// Error is a lease rule's refusal: the one typed error of the package,
// which every front end maps once (storagehttp.LeaseError). errors.Is
// matches two *Error of the same Code.
type Error struct {
	Code Code
}

func (e *Error) Error() string { return "lease: " + string(e.Code) }

// Is matches any *Error with the same code, so that errors.Is(err,
// ErrLeaseIDMissing)-style sentinels of the callers keep working.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Malformed requests (400 at the front ends). A front end checks header
// syntax first; these catch a request built without it.
var (
	ErrInvalidAction      = errors.New("invalid lease action")       // x-ms-lease-action
	ErrInvalidDuration    = errors.New("invalid lease duration")     // x-ms-lease-duration
	ErrInvalidBreakPeriod = errors.New("invalid lease break period") // x-ms-lease-break-period
	ErrMissingID          = errors.New("lease id missing")           // x-ms-lease-id / x-ms-proposed-lease-id
)
