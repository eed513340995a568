package lease

import (
	"fmt"
	"time"
)

// Action is x-ms-lease-action.
type Action string

const (
	Acquire Action = "acquire"
	Renew   Action = "renew"
	Change  Action = "change"
	Release Action = "release"
	Break   Action = "break"
)

// Request is one Lease Blob, Lease Container or Lease Share call. Header
// syntax is the front end's; numbers and ids are checked here.
type Request struct {
	Action     Action
	ID         string // x-ms-lease-id: the current lease (renew, change, release)
	ProposedID string // x-ms-proposed-lease-id (acquire, change)
	Duration   int    // acquire: MinSeconds..MaxSeconds or Infinite
	// BreakPeriod is the break period in seconds; nil means "the rest of
	// the lease" (at once for an infinite lease).
	BreakPeriod *int
}

// Result is what a lease action answers.
type Result struct {
	ID string // the lease id (acquire, renew, change); "" for release and break
	// Time is x-ms-lease-time: the seconds until a break takes effect
	// (break only).
	Time int
}

// Options are what the resource adds to the one machine.
type Options struct {
	// NewID makes the id of an acquire without a proposed id.
	NewID func() string
	// ModifiedSinceExpiry: the resource was written after its lease
	// expired (blobs only: Lease.AfterWrite). A renew of that expired
	// lease then fails as on an available one. Containers and shares
	// leave it false: they keep an expired lease through writes.
	ModifiedSinceExpiry bool
}

// Validate checks a request's action, numbers and ids without a state.
// Errors: ErrInvalidAction, ErrInvalidDuration, ErrInvalidBreakPeriod,
// ErrMissingID.
func (r Request) Validate() error {
	switch r.Action {
	case Acquire:
		if r.Duration != Infinite && (r.Duration < MinSeconds || r.Duration > MaxSeconds) {
			return fmt.Errorf("duration %d: %w", r.Duration, ErrInvalidDuration)
		}
	case Break:
		if r.BreakPeriod != nil && (*r.BreakPeriod < 0 || *r.BreakPeriod > MaxBreakPeriod) {
			return fmt.Errorf("break period %d: %w", *r.BreakPeriod, ErrInvalidBreakPeriod)
		}
	case Renew, Release:
		if r.ID == "" {
			return fmt.Errorf("%s without x-ms-lease-id: %w", r.Action, ErrMissingID)
		}
	case Change:
		if r.ID == "" || r.ProposedID == "" {
			return fmt.Errorf("change without x-ms-lease-id or x-ms-proposed-lease-id: %w", ErrMissingID)
		}
	default:
		return fmt.Errorf("lease action %q: %w", r.Action, ErrInvalidAction)
	}
	return nil
}

// Decide runs one action on the stored lease l at now: Azure's tables
// "Outcomes of lease operations on blobs by lease state" (Lease Blob)
// and the same for containers (Lease Container) and shares (Lease
// Share), with the error codes doc.go settles. It returns the lease to
// store and the answer; on an error the lease is l unchanged. Errors:
// *Error (the 409 codes) and Validate's.
func Decide(l Lease, r Request, now time.Time, o Options) (Lease, Result, error) {
	if err := r.Validate(); err != nil {
		return l, Result{}, err
	}
	cur := l.Effective(now)
	state := cur.State
	fail := func(c Code) (Lease, Result, error) { return l, Result{}, &Error{Code: c} }
	switch r.Action {
	case Acquire:
		switch state {
		case Leased:
			if !SameID(r.ProposedID, cur.ID) {
				return fail(LeaseAlreadyPresent)
			}
		case Breaking:
			// "The lease ID matched, but the lease is currently in
			// breaking state": only the holder's id gets that code.
			if SameID(r.ProposedID, cur.ID) {
				return fail(LeaseIsBreakingAndCannotBeAcquired)
			}
			return fail(LeaseAlreadyPresent)
		}
		id := r.ProposedID
		if id == "" {
			id = o.NewID()
		}
		return newLease(id, r.Duration, now), Result{ID: id}, nil

	case Renew:
		switch {
		case !SameID(r.ID, cur.ID): // also on an available resource
			return fail(LeaseIDMismatchWithLeaseOperation)
		case state == Breaking || state == Broken:
			return fail(LeaseIsBrokenAndCannotBeRenewed)
		case state == Expired && o.ModifiedSinceExpiry:
			// A write since the expiry made the lease available
			// (AfterWrite); a row from before that rule still answers
			// as the table's Available column does.
			return fail(LeaseIDMismatchWithLeaseOperation)
		}
		return newLease(cur.ID, cur.Duration, now), Result{ID: cur.ID}, nil

	case Change:
		switch state {
		case Leased:
			if !SameID(r.ID, cur.ID) && !SameID(r.ProposedID, cur.ID) {
				return fail(LeaseIDMismatchWithLeaseOperation)
			}
			next := l
			next.ID = r.ProposedID // a retry of a change already made sets it again
			return next, Result{ID: r.ProposedID}, nil
		case Breaking:
			if !SameID(r.ID, cur.ID) {
				return fail(LeaseIDMismatchWithLeaseOperation)
			}
			return fail(LeaseIsBreakingAndCannotBeChanged)
		}
		return fail(LeaseNotPresentWithLeaseOperation)

	case Release:
		if !SameID(r.ID, cur.ID) { // also on an available resource
			return fail(LeaseIDMismatchWithLeaseOperation)
		}
		return Lease{State: Available}, Result{}, nil
	}

	// Break.
	switch state {
	case Available:
		return fail(LeaseNotPresentWithLeaseOperation)
	case Broken:
		return cur, Result{}, nil
	case Expired:
		// The table: "Break, period=0" and "Break, period>0" on
		// Expired (A) are both "Broken (A)".
		return Lease{State: Broken, ID: cur.ID, BreakAt: now}, Result{}, nil
	}
	// Leased or breaking: the break ends after the period asked, but
	// never later than the lease would have ended on its own ("This break
	// period is only used if it is shorter than the time remaining on the
	// lease"), nor than a break already under way. With no period a
	// finite lease breaks when it would have expired, an infinite one at
	// once ("an infinite lease breaks immediately"), and a breaking one
	// when its break ends (doc.go, "Settled").
	end := now
	switch {
	case r.BreakPeriod != nil:
		end = now.Add(time.Duration(*r.BreakPeriod) * time.Second)
		if cur.Duration != Infinite && state == Leased && cur.Expires.Before(end) {
			end = cur.Expires
		}
	case state == Breaking:
		end = cur.BreakAt
	case cur.Duration != Infinite:
		end = cur.Expires
	}
	if state == Breaking && cur.BreakAt.Before(end) {
		end = cur.BreakAt
	}
	next := Lease{State: Breaking, ID: cur.ID, Duration: cur.Duration, BreakAt: end}
	if !now.Before(end) {
		next = Lease{State: Broken, ID: cur.ID, Duration: cur.Duration, BreakAt: now}
	}
	return next, Result{Time: ceilSeconds(end.Sub(now))}, nil
}
