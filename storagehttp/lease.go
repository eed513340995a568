package storagehttp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/blobshare/blobshare/lease"
)

// LeaseError is the reply to a timed-lease refusal in err's chain (a
// *lease.Error, or one of lease's malformed-request sentinels), worded
// for the resource the lease guards; nil when err holds none. Blob (blobs
// and containers) and FileREST (shares) map lease errors here, once.
func LeaseError(err error, r lease.Resource) *Error {
	var le *lease.Error
	if errors.As(err, &le) {
		status := http.StatusPreconditionFailed
		if le.Code.LeaseOperation() {
			status = http.StatusConflict
		}
		return &Error{Status: status, Code: le.Code.For(r), Message: leaseMessage(le.Code, r), Err: err}
	}
	switch {
	case errors.Is(err, lease.ErrInvalidDuration):
		return InvalidHeader("x-ms-lease-duration", "")
	case errors.Is(err, lease.ErrInvalidBreakPeriod):
		return InvalidHeader("x-ms-lease-break-period", "")
	case errors.Is(err, lease.ErrInvalidAction):
		return InvalidHeader("x-ms-lease-action", "")
	case errors.Is(err, lease.ErrMissingID):
		return MissingHeader("x-ms-lease-id")
	}
	return nil
}

// leaseMessage is Azure's message for a lease code (Blob service error
// codes; Azure Files answers the same words for a share, as its
// recordings show for LeaseIsBrokenAndCannotBeRenewed).
func leaseMessage(c lease.Code, r lease.Resource) string {
	noun := strings.ToLower(string(r))
	switch c {
	case lease.LeaseIDMissing:
		return "There is currently a lease on the " + noun + " and no lease ID was specified in the request."
	case lease.LeaseIDMismatchWithResourceOperation, lease.LeaseIDMismatchWithLeaseOperation:
		return "The lease ID specified did not match the lease ID for the " + noun + "."
	case lease.LeaseNotPresentWithResourceOperation, lease.LeaseNotPresentWithLeaseOperation:
		return "There is currently no lease on the " + noun + "."
	case lease.LeaseLost:
		return "A lease ID was specified, but the lease for the " + noun + " has expired."
	case lease.LeaseAlreadyPresent:
		return "There is already a lease present."
	case lease.LeaseIsBreakingAndCannotBeAcquired:
		return "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken."
	case lease.LeaseIsBreakingAndCannotBeChanged:
		return "The lease ID matched, but the lease is currently in breaking state and cannot be changed."
	case lease.LeaseIsBrokenAndCannotBeRenewed:
		return "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."
	}
	return "The lease operation failed."
}
