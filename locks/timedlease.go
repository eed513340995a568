package locks

import (
	"fmt"
	"time"
)

// Timed leases: the lease of a share (Azure's Lease Share, which follows
// the blob-container lease), unlike a file lease, has a duration of 15 to
// 60 seconds or none (infinite), expires, and breaks over a break period.
// Its rules are here, as pure functions of the stored state and the time;
// the caller stores TimedLease with the resource it guards and passes the
// time of its own clock, so tests drive expiry without sleeping.

// Timed-lease codes besides the file-lease ones (Azure's blob-service
// error codes, which share leases answer).
const (
	LeaseIsBreakingAndCannotBeAcquired    LeaseCode = "LeaseIsBreakingAndCannotBeAcquired"    // 409
	LeaseIsBreakingAndCannotBeChanged     LeaseCode = "LeaseIsBreakingAndCannotBeChanged"     // 409
	LeaseIsBrokenAndCannotBeRenewed       LeaseCode = "LeaseIsBrokenAndCannotBeRenewed"       // 409
	LeaseIDMismatchWithContainerOperation LeaseCode = "LeaseIdMismatchWithContainerOperation" // 412
	LeaseNotPresentWithContainerOperation LeaseCode = "LeaseNotPresentWithContainerOperation" // 412
)

// Timed-lease durations (seconds).
const (
	MinLeaseSeconds    = 15
	MaxLeaseSeconds    = 60
	InfiniteLease      = -1
	MaxBreakPeriodSecs = 60
)

// TimedLease is the stored state of a timed lease. The zero value is an
// available (never leased or released) lease.
type TimedLease struct {
	ID       string    // current lease id; "" when available
	Seconds  int       // duration of the lease as acquired: 15..60, or InfiniteLease
	Expires  time.Time // end of a finite lease (zero for infinite)
	Breaking bool      // a break was asked: the lease ends at BreakEnd
	BreakEnd time.Time // end of the break period
}

// TimedLeaseState is what x-ms-lease-state reports.
type TimedLeaseState int

const (
	TimedAvailable TimedLeaseState = iota
	TimedLeased
	TimedExpired
	TimedBreaking
	TimedBroken
)

func (s TimedLeaseState) String() string {
	return [...]string{"available", "leased", "expired", "breaking", "broken"}[s]
}

// State is the lease's state at now.
func (l TimedLease) State(now time.Time) TimedLeaseState {
	switch {
	case l.ID == "":
		return TimedAvailable
	case l.Breaking && now.Before(l.BreakEnd):
		return TimedBreaking
	case l.Breaking:
		return TimedBroken
	case l.Seconds != InfiniteLease && !now.Before(l.Expires):
		return TimedExpired
	}
	return TimedLeased
}

// Active reports whether the lease holds the resource at now (leased or
// breaking): operations that need the lease id need it then.
func (l TimedLease) Active(now time.Time) bool {
	s := l.State(now)
	return s == TimedLeased || s == TimedBreaking
}

// TimedLeaseAction is one lease action; Renew exists only for timed leases.
type TimedLeaseAction int

const (
	TimedAcquire TimedLeaseAction = iota + 1
	TimedRenew
	TimedChange
	TimedRelease
	TimedBreak
)

// TimedLeaseRequest is one lease call. Header syntax is the caller's;
// durations are checked here.
type TimedLeaseRequest struct {
	Resource   FileID // for errors
	Action     TimedLeaseAction
	LeaseID    string // x-ms-lease-id
	ProposedID string // x-ms-proposed-lease-id
	Seconds    int    // acquire: 15..60 or InfiniteLease
	// BreakSeconds is the break period asked (0..60), or -1 when none was
	// given (then a finite lease breaks when it would have expired, an
	// infinite one at once).
	BreakSeconds int
}

// TimedLeaseResult is the outcome of an action.
type TimedLeaseResult struct {
	Next TimedLease
	ID   string        // the lease id to report ("" for release and break)
	Left time.Duration // break: the time until the lease is broken
}

// DecideTimedLease runs one action on l at now (the outcomes of Azure's
// lease table for containers and shares). Errors: *LeaseError (409
// codes), ErrInvalidParameter (durations out of range, missing ids, an
// unknown action).
func DecideTimedLease(l TimedLease, req TimedLeaseRequest, now time.Time, newID func() string) (TimedLeaseResult, error) {
	cur := l.State(now)
	lerr := func(c LeaseCode) (TimedLeaseResult, error) {
		return TimedLeaseResult{Next: l}, &LeaseError{Code: c, File: req.Resource}
	}
	bad := func(what string) (TimedLeaseResult, error) {
		return TimedLeaseResult{Next: l}, fmt.Errorf("lease %d: %s: %w", req.Resource, what, ErrInvalidParameter)
	}
	same := func(a, b string) bool { return a != "" && sameLeaseID(a, b) }
	switch req.Action {
	case TimedAcquire:
		if req.Seconds != InfiniteLease && (req.Seconds < MinLeaseSeconds || req.Seconds > MaxLeaseSeconds) {
			return bad(fmt.Sprintf("duration %d", req.Seconds))
		}
		switch cur {
		case TimedBreaking:
			return lerr(LeaseIsBreakingAndCannotBeAcquired)
		case TimedLeased:
			if !same(req.ProposedID, l.ID) {
				return lerr(LeaseAlreadyPresent)
			}
		}
		id := req.ProposedID
		if id == "" {
			id = newID()
		}
		next := TimedLease{ID: id, Seconds: req.Seconds}
		if req.Seconds != InfiniteLease {
			next.Expires = now.Add(time.Duration(req.Seconds) * time.Second)
		}
		return TimedLeaseResult{Next: next, ID: id}, nil
	case TimedRenew:
		if req.LeaseID == "" {
			return bad("renew without a lease id")
		}
		switch cur {
		case TimedAvailable:
			return lerr(LeaseNotPresentWithLeaseOperation)
		case TimedBreaking, TimedBroken:
			if !same(req.LeaseID, l.ID) {
				return lerr(LeaseIDMismatchWithLeaseOperation)
			}
			return lerr(LeaseIsBrokenAndCannotBeRenewed)
		}
		if !same(req.LeaseID, l.ID) {
			return lerr(LeaseIDMismatchWithLeaseOperation)
		}
		next := TimedLease{ID: l.ID, Seconds: l.Seconds}
		if l.Seconds != InfiniteLease {
			next.Expires = now.Add(time.Duration(l.Seconds) * time.Second)
		}
		return TimedLeaseResult{Next: next, ID: l.ID}, nil
	case TimedChange:
		if req.LeaseID == "" || req.ProposedID == "" {
			return bad("change needs the lease id and a proposed id")
		}
		switch cur {
		case TimedBreaking:
			return lerr(LeaseIsBreakingAndCannotBeChanged)
		case TimedLeased:
		default:
			return lerr(LeaseNotPresentWithLeaseOperation)
		}
		switch {
		case same(req.LeaseID, l.ID):
			next := l
			next.ID = req.ProposedID
			return TimedLeaseResult{Next: next, ID: req.ProposedID}, nil
		case same(req.ProposedID, l.ID): // a retry of a change already made
			return TimedLeaseResult{Next: l, ID: l.ID}, nil
		}
		return lerr(LeaseIDMismatchWithLeaseOperation)
	case TimedRelease:
		if req.LeaseID == "" {
			return bad("release without a lease id")
		}
		if cur == TimedAvailable {
			return lerr(LeaseNotPresentWithLeaseOperation)
		}
		if !same(req.LeaseID, l.ID) {
			return lerr(LeaseIDMismatchWithLeaseOperation)
		}
		return TimedLeaseResult{}, nil
	case TimedBreak:
		if req.BreakSeconds < -1 || req.BreakSeconds > MaxBreakPeriodSecs {
			return bad(fmt.Sprintf("break period %d", req.BreakSeconds))
		}
		switch cur {
		case TimedAvailable:
			return lerr(LeaseNotPresentWithLeaseOperation)
		case TimedExpired:
			return TimedLeaseResult{}, nil // an expired lease breaks into available
		case TimedBroken:
			return TimedLeaseResult{Next: l}, nil
		}
		// Leased or breaking: the break ends after the period asked, but
		// never later than the lease would have ended on its own or an
		// earlier break would have.
		end := now
		switch {
		case req.BreakSeconds >= 0:
			end = now.Add(time.Duration(req.BreakSeconds) * time.Second)
			if l.Seconds != InfiniteLease && l.Expires.Before(end) {
				end = l.Expires
			}
		case l.Seconds != InfiniteLease:
			end = l.Expires
		}
		if cur == TimedBreaking && l.BreakEnd.Before(end) {
			end = l.BreakEnd
		}
		next := l
		next.Breaking, next.BreakEnd = true, end
		return TimedLeaseResult{Next: next, Left: end.Sub(now)}, nil
	}
	return bad(fmt.Sprintf("action %d", req.Action))
}

// CheckTimedLease is the lease rule of an operation on the leased
// resource at now. needID: the operation needs the lease id while the
// lease is active (Delete Share); otherwise an id, when given, must name
// the active lease. Errors: *LeaseError (412 codes).
func CheckTimedLease(l TimedLease, resource FileID, leaseID string, needID bool, now time.Time) error {
	active := l.Active(now)
	switch {
	case leaseID == "" && active && needID:
		return &LeaseError{Code: LeaseIDMissing, File: resource}
	case leaseID == "":
		return nil
	case !active:
		return &LeaseError{Code: LeaseNotPresentWithContainerOperation, File: resource}
	case !sameLeaseID(leaseID, l.ID):
		return &LeaseError{Code: LeaseIDMismatchWithContainerOperation, File: resource}
	}
	return nil
}

// NewLeaseID is a lease id for an acquire without a proposed id
// (Options.NewLeaseID), for timed leases whose state the caller stores.
func (t *Table) NewLeaseID() string { return t.opts.NewLeaseID() }
