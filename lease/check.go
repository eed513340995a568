package lease

import "time"

// CheckWrite is the lease rule of an operation that needs the lease id
// while the lease is active (a write or delete of a blob; Delete
// Container, Delete Share): an active lease needs its id (412
// LeaseIdMissing, LeaseIDMismatchWith…Operation); an id sent where no
// lease is active is 412 LeaseLost for an expired lease and
// LeaseNotPresentWith…Operation otherwise. Errors: *Error.
func CheckWrite(l Lease, leaseID string, now time.Time) error {
	if leaseID == "" && l.Active(now) {
		return &Error{Code: LeaseIDMissing}
	}
	return CheckRead(l, leaseID, now)
}

// CheckRead is the lease rule of an operation that needs no lease but
// takes an optional id (reads; container and share properties, metadata
// and ACLs): an id sent must name the active lease, with CheckWrite's
// codes. Errors: *Error.
func CheckRead(l Lease, leaseID string, now time.Time) error {
	if leaseID == "" {
		return nil
	}
	cur := l.Effective(now)
	switch cur.State {
	case Leased, Breaking:
		if !SameID(leaseID, cur.ID) {
			return &Error{Code: LeaseIDMismatchWithResourceOperation}
		}
		return nil
	case Expired:
		return &Error{Code: LeaseLost}
	}
	return &Error{Code: LeaseNotPresentWithResourceOperation}
}
