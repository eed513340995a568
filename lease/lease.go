package lease

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// State is a lease's state as Azure reports it (x-ms-lease-state).
type State string

const (
	Available State = "available"
	Leased    State = "leased"
	Expired   State = "expired"
	Breaking  State = "breaking"
	Broken    State = "broken"
)

// Durations and break periods, in seconds (Azure's bounds for Lease
// Blob, Lease Container and Lease Share alike).
const (
	MinSeconds = 15
	MaxSeconds = 60
	// Infinite is the duration of a lease that never expires.
	Infinite       = -1
	MaxBreakPeriod = 60
)

// Lease is the stored state of a timed lease. The stored State is only
// ever available, leased or breaking (or broken, written by a break
// whose period ends at once): expired and broken are derived from the
// times by Effective, so no timer has to run for a lease to end. The zero
// value is an available lease.
type Lease struct {
	State    State
	ID       string    // the lease id; "" when available
	Duration int       // seconds as acquired: MinSeconds..MaxSeconds or Infinite; 0 when not leased
	Expires  time.Time // end of a finite lease (leased state)
	BreakAt  time.Time // when a breaking lease becomes broken
}

// IsZero reports whether l holds nothing worth storing (an available
// lease: no id is remembered).
func (l Lease) IsZero() bool { return l.ID == "" }

// Effective returns the lease as it is at now: a finite lease past its
// end is expired, a breaking lease past its break time is broken, and a
// lease with no id is available.
func (l Lease) Effective(now time.Time) Lease {
	switch {
	case l.ID == "":
		return Lease{State: Available}
	case l.State == Leased && l.Duration != Infinite && !now.Before(l.Expires):
		l.State = Expired
	case l.State == Breaking && !now.Before(l.BreakAt):
		l.State = Broken
	case l.State == "":
		l.State = Available
	}
	return l
}

// StateAt is the lease's state at now (x-ms-lease-state).
func (l Lease) StateAt(now time.Time) State { return l.Effective(now).State }

// Active reports whether the lease holds its resource at now (leased or
// breaking): operations that need the lease id need it then.
func (l Lease) Active(now time.Time) bool {
	s := l.StateAt(now)
	return s == Leased || s == Breaking
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
	if l.StateAt(now) != Leased {
		return ""
	}
	if l.Duration == Infinite {
		return "infinite"
	}
	return "fixed"
}

// AfterWrite is the lease a blob keeps after a write that passed
// CheckWrite and changed the blob (a new ETag). Lease Blob's table
// "Outcomes of use attempts on blobs by lease state" has "Write, no lease
// specified" on Broken (A) and on Expired (A) as "Available, write
// succeeds", and "the lease ID is maintained by the Blob service until
// the blob is modified or leased again": the old id is forgotten. An
// active lease (leased, breaking) stays as it is. Containers and shares
// do not call it: a container written after its lease expired still
// renews (doc.go, "Blob-only rules").
func (l Lease) AfterWrite(now time.Time) Lease {
	switch l.StateAt(now) {
	case Expired, Broken:
		return Lease{State: Available}
	}
	return l
}

// SameID compares two lease ids as Azure does: both are GUIDs "in any
// valid GUID string format" (Lease Blob, Lease Container, Lease Share:
// x-ms-lease-id), so two spellings of one GUID (letter case, braces, no
// hyphens) name the same lease. Ids that do not parse compare
// case-insensitively; an empty id names no lease.
func SameID(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ua, errA := uuid.Parse(a)
	ub, errB := uuid.Parse(b)
	if errA == nil && errB == nil {
		return ua == ub
	}
	return strings.EqualFold(a, b)
}

func newLease(id string, duration int, now time.Time) Lease {
	l := Lease{State: Leased, ID: id, Duration: duration}
	if duration != Infinite {
		l.Expires = now.Add(time.Duration(duration) * time.Second)
	}
	return l
}

// ceilSeconds is x-ms-lease-time: whole seconds, rounded up, until d
// has passed.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}
