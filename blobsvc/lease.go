package blobsvc

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// LeaseState is a lease's state as Azure reports it (x-ms-lease-state).
type LeaseState string

const (
	LeaseAvailable LeaseState = "available"
	LeaseLeased    LeaseState = "leased"
	LeaseExpired   LeaseState = "expired"
	LeaseBreaking  LeaseState = "breaking"
	LeaseBroken    LeaseState = "broken"
)

// Lease durations and break periods, in seconds (Azure's bounds).
const (
	MinLeaseSeconds = 15
	MaxLeaseSeconds = 60
	// InfiniteLease is the duration of a lease that never expires.
	InfiniteLease  = -1
	MaxBreakPeriod = 60
)

// Lease is the stored lease of a blob or container. The stored State is
// only ever available, leased or breaking (or broken after a break with
// period 0): expired and broken are derived from the times by Effective,
// so no timer has to run for a lease to end.
type Lease struct {
	State    LeaseState
	ID       string
	Duration int       // seconds; InfiniteLease; 0 when not leased
	Expires  time.Time // end of a finite lease (leased state)
	BreakAt  time.Time // when a breaking lease becomes broken
}

// Effective returns the lease as it is at now: a finite lease past its
// end is expired, a breaking lease past its break time is broken.
func (l Lease) Effective(now time.Time) Lease {
	switch l.State {
	case "":
		l.State = LeaseAvailable
	case LeaseLeased:
		if l.Duration != InfiniteLease && !now.Before(l.Expires) {
			l.State = LeaseExpired
		}
	case LeaseBreaking:
		if !now.Before(l.BreakAt) {
			l.State = LeaseBroken
		}
	}
	return l
}

// Active reports whether the lease holds writes at now (leased or
// breaking): writes then need its id.
func (l Lease) Active(now time.Time) bool {
	s := l.Effective(now).State
	return s == LeaseLeased || s == LeaseBreaking
}

// Status is x-ms-lease-status: locked while active.
func (l Lease) Status(now time.Time) string {
	if l.Active(now) {
		return "locked"
	}
	return "unlocked"
}

// DurationName is x-ms-lease-duration ("infinite" / "fixed"), "" when
// not leased.
func (l Lease) DurationName(now time.Time) string {
	if l.Effective(now).State != LeaseLeased {
		return ""
	}
	if l.Duration == InfiniteLease {
		return "infinite"
	}
	return "fixed"
}

// LeaseAction is x-ms-lease-action.
type LeaseAction string

const (
	LeaseAcquire LeaseAction = "acquire"
	LeaseRenew   LeaseAction = "renew"
	LeaseChange  LeaseAction = "change"
	LeaseRelease LeaseAction = "release"
	LeaseBreak   LeaseAction = "break"
)

// LeaseRequest is one Lease Blob / Lease Container call.
type LeaseRequest struct {
	Action     LeaseAction
	ID         string // x-ms-lease-id: the current lease (renew, change, release)
	ProposedID string // x-ms-proposed-lease-id (acquire, change)
	Duration   int    // acquire: 15-60 or InfiniteLease
	// BreakPeriod is the break period in seconds; nil means "the rest of
	// the lease" (immediately for an infinite lease).
	BreakPeriod *int
}

// LeaseResult is what a lease operation answers.
type LeaseResult struct {
	ID string // the lease id (acquire, renew, change)
	// Time is the seconds until a break takes effect (break only).
	Time int
}

// validate checks the request's numbers and ids.
func (r LeaseRequest) validate() error {
	switch r.Action {
	case LeaseAcquire:
		if r.Duration != InfiniteLease && (r.Duration < MinLeaseSeconds || r.Duration > MaxLeaseSeconds) {
			return fmt.Errorf("duration %d: %w", r.Duration, ErrInvalidLeaseDuration)
		}
	case LeaseBreak:
		if r.BreakPeriod != nil && (*r.BreakPeriod < 0 || *r.BreakPeriod > MaxBreakPeriod) {
			return fmt.Errorf("break period %d: %w", *r.BreakPeriod, ErrInvalidBreakPeriod)
		}
	case LeaseRenew, LeaseChange, LeaseRelease:
	default:
		return fmt.Errorf("lease action %q: %w", r.Action, ErrInvalidLeaseAction)
	}
	return nil
}

// ErrInvalidLeaseAction: x-ms-lease-action is not one of the five.
var ErrInvalidLeaseAction = fmt.Errorf("invalid lease action")

// apply runs the lease state machine of Azure's Lease Blob table on l at
// now and returns the new stored lease. modifiedSinceExpiry says whether
// the resource was written after an expired lease ended (renewing it then
// fails).
func (r LeaseRequest) apply(l Lease, now time.Time, modifiedSinceExpiry bool) (Lease, LeaseResult, error) {
	if err := r.validate(); err != nil {
		return l, LeaseResult{}, err
	}
	cur := l.Effective(now)
	state := cur.State
	switch r.Action {
	case LeaseAcquire:
		id := r.ProposedID
		switch state {
		case LeaseLeased:
			if id == "" || id != cur.ID {
				return l, LeaseResult{}, ErrLeaseAlreadyPresent
			}
		case LeaseBreaking:
			if id != "" && id == cur.ID {
				return l, LeaseResult{}, ErrLeaseBreakingNoAcquire
			}
			return l, LeaseResult{}, ErrLeaseAlreadyPresent
		}
		if id == "" {
			id = uuid.NewString()
		}
		return newLease(id, r.Duration, now), LeaseResult{ID: id}, nil

	case LeaseRenew:
		switch state {
		case LeaseAvailable:
			// Azure's table says only "fails (409)"; the code is
			// Azurite's.
			return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
		case LeaseLeased:
			if r.ID != cur.ID {
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
		case LeaseExpired:
			if r.ID != cur.ID {
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
			if modifiedSinceExpiry {
				// A write since the expiry made the lease available
				// (afterWrite); a row from before that rule still
				// answers as the table's Available column does.
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
		case LeaseBreaking, LeaseBroken:
			if r.ID != cur.ID {
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
			return l, LeaseResult{}, ErrLeaseBrokenNoRenew
		}
		return newLease(cur.ID, cur.Duration, now), LeaseResult{ID: cur.ID}, nil

	case LeaseChange:
		switch state {
		case LeaseLeased:
			if r.ID != cur.ID && r.ProposedID != cur.ID {
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
			l.ID = r.ProposedID
			return l, LeaseResult{ID: r.ProposedID}, nil
		case LeaseBreaking:
			if r.ID != cur.ID {
				return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
			}
			return l, LeaseResult{}, ErrLeaseBreakingNoChange
		default:
			return l, LeaseResult{}, ErrLeaseNotPresentWithLeaseOp
		}

	case LeaseRelease:
		if r.ID != cur.ID { // also on an available resource (Azurite's code for the table's "fails (409)")
			return l, LeaseResult{}, ErrLeaseIDMismatchWithLeaseOp
		}
		return Lease{State: LeaseAvailable}, LeaseResult{}, nil

	default: // LeaseBreak
		switch state {
		case LeaseAvailable:
			return l, LeaseResult{}, ErrLeaseNotPresentWithLeaseOp
		case LeaseBroken:
			return cur, LeaseResult{Time: 0}, nil
		case LeaseExpired:
			// The table: "Break, period=0" and "Break, period>0" on
			// Expired (A) are both "Broken (A)"; "Expired ... Allowed
			// actions: acquire, renew, release, and break".
			return Lease{State: LeaseBroken, ID: cur.ID, BreakAt: now}, LeaseResult{Time: 0}, nil
		}
		// Leased or breaking: the break ends at now + period, but never
		// later than the lease itself (nor than a break already under way).
		var end time.Time
		switch {
		case r.BreakPeriod != nil:
			end = now.Add(time.Duration(*r.BreakPeriod) * time.Second)
			if state == LeaseLeased && cur.Duration != InfiniteLease && cur.Expires.Before(end) {
				end = cur.Expires
			}
		case state == LeaseLeased && cur.Duration != InfiniteLease:
			end = cur.Expires
		case state == LeaseLeased:
			end = now
		default:
			end = cur.BreakAt
		}
		if state == LeaseBreaking && cur.BreakAt.Before(end) {
			end = cur.BreakAt
		}
		nl := Lease{State: LeaseBreaking, ID: cur.ID, Duration: cur.Duration, BreakAt: end}
		if !now.Before(end) {
			nl = Lease{State: LeaseBroken, ID: cur.ID, BreakAt: now}
		}
		return nl, LeaseResult{Time: ceilSeconds(end.Sub(now))}, nil
	}
}

func newLease(id string, duration int, now time.Time) Lease {
	l := Lease{State: LeaseLeased, ID: id, Duration: duration}
	if duration != InfiniteLease {
		l.Expires = now.Add(time.Duration(duration) * time.Second)
	}
	return l
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// afterWrite is the lease a blob keeps after a write that passed
// checkWriteLease and changed the blob (a new ETag). Lease Blob's table
// "Outcomes of use attempts on blobs by lease state" has "Write, no lease
// specified" on Broken (A) and on Expired (A) as "Available, write
// succeeds", and "the lease ID is maintained by the Blob service until
// the blob is modified or leased again": the old id is forgotten, so a
// later renew or release with it is 409 LeaseIdMismatchWithLeaseOperation
// and a break 409 LeaseNotPresentWithLeaseOperation (the Available
// column). An active lease (leased, breaking) stays as it is.
func (l Lease) afterWrite(now time.Time) Lease {
	switch l.Effective(now).State {
	case LeaseExpired, LeaseBroken:
		return Lease{State: LeaseAvailable}
	}
	return l
}

// checkWriteLease checks a write's x-ms-lease-id against the lease at
// now: an active lease needs its id (412 LeaseIdMissing /
// LeaseIdMismatchWithBlobOperation); an id sent where no lease is active
// is 412 LeaseLost for an expired lease and LeaseNotPresentWith…Operation
// otherwise.
func checkWriteLease(l Lease, leaseID string, now time.Time) error {
	cur := l.Effective(now)
	if cur.State == LeaseLeased || cur.State == LeaseBreaking {
		switch {
		case leaseID == "":
			return ErrLeaseIDMissing
		case leaseID != cur.ID:
			return ErrLeaseIDMismatch
		}
		return nil
	}
	if leaseID == "" {
		return nil
	}
	if cur.State == LeaseExpired {
		return ErrLeaseLost
	}
	return ErrLeaseNotPresent
}

// checkReadLease checks a read's optional x-ms-lease-id: reads need no
// lease, but an id sent must be the active lease's.
func checkReadLease(l Lease, leaseID string, now time.Time) error {
	if leaseID == "" {
		return nil
	}
	cur := l.Effective(now)
	if cur.State == LeaseLeased || cur.State == LeaseBreaking {
		if leaseID != cur.ID {
			return ErrLeaseIDMismatch
		}
		return nil
	}
	if cur.State == LeaseExpired {
		return ErrLeaseLost
	}
	return ErrLeaseNotPresent
}
