package locks

import (
	"errors"
	"testing"
	"time"
)

// The outcomes of Azure's lease table for containers and shares, state by
// action, as DecideTimedLease gives them.
func TestDecideTimedLeaseTable(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const a, b, c = "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"
	states := map[string]TimedLease{
		"available": {},
		"leased":    {ID: a, Seconds: 30, Expires: t0.Add(30 * time.Second)},
		"infinite":  {ID: a, Seconds: InfiniteLease},
		"expired":   {ID: a, Seconds: 15, Expires: t0.Add(-time.Second)},
		"breaking":  {ID: a, Seconds: InfiniteLease, Breaking: true, BreakEnd: t0.Add(10 * time.Second)},
		"broken":    {ID: a, Seconds: InfiniteLease, Breaking: true, BreakEnd: t0},
	}
	newID := func() string { return c }
	for _, tc := range []struct {
		state string
		req   TimedLeaseRequest
		want  TimedLeaseState // after, at t0
		code  LeaseCode       // or the refusal
		id    string          // the id reported
	}{
		{"available", TimedLeaseRequest{Action: TimedAcquire, Seconds: 15}, TimedLeased, "", c},
		{"available", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: -1}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"available", TimedLeaseRequest{Action: TimedRenew, LeaseID: a}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"available", TimedLeaseRequest{Action: TimedChange, LeaseID: a, ProposedID: b}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"available", TimedLeaseRequest{Action: TimedRelease, LeaseID: a}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"leased", TimedLeaseRequest{Action: TimedAcquire, ProposedID: a, Seconds: 60}, TimedLeased, "", a},
		{"leased", TimedLeaseRequest{Action: TimedAcquire, ProposedID: b, Seconds: 60}, 0, LeaseAlreadyPresent, ""},
		{"leased", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 0}, TimedBroken, "", ""},
		{"leased", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 5}, TimedBreaking, "", ""},
		{"leased", TimedLeaseRequest{Action: TimedChange, LeaseID: a, ProposedID: b}, TimedLeased, "", b},
		{"leased", TimedLeaseRequest{Action: TimedChange, LeaseID: b, ProposedID: a}, TimedLeased, "", a},
		{"leased", TimedLeaseRequest{Action: TimedChange, LeaseID: b, ProposedID: c}, 0, LeaseIDMismatchWithLeaseOperation, ""},
		{"leased", TimedLeaseRequest{Action: TimedRenew, LeaseID: a}, TimedLeased, "", a},
		{"leased", TimedLeaseRequest{Action: TimedRenew, LeaseID: b}, 0, LeaseIDMismatchWithLeaseOperation, ""},
		{"leased", TimedLeaseRequest{Action: TimedRelease, LeaseID: a}, TimedAvailable, "", ""},
		{"leased", TimedLeaseRequest{Action: TimedRelease, LeaseID: b}, 0, LeaseIDMismatchWithLeaseOperation, ""},
		{"infinite", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: -1}, TimedBroken, "", ""},
		{"breaking", TimedLeaseRequest{Action: TimedAcquire, ProposedID: a, Seconds: 15}, 0, LeaseIsBreakingAndCannotBeAcquired, ""},
		{"breaking", TimedLeaseRequest{Action: TimedAcquire, ProposedID: b, Seconds: 15}, 0, LeaseIsBreakingAndCannotBeAcquired, ""},
		{"breaking", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 0}, TimedBroken, "", ""},
		{"breaking", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 60}, TimedBreaking, "", ""},
		{"breaking", TimedLeaseRequest{Action: TimedChange, LeaseID: a, ProposedID: b}, 0, LeaseIsBreakingAndCannotBeChanged, ""},
		{"breaking", TimedLeaseRequest{Action: TimedRenew, LeaseID: a}, 0, LeaseIsBrokenAndCannotBeRenewed, ""},
		{"breaking", TimedLeaseRequest{Action: TimedRelease, LeaseID: a}, TimedAvailable, "", ""},
		{"breaking", TimedLeaseRequest{Action: TimedRelease, LeaseID: b}, 0, LeaseIDMismatchWithLeaseOperation, ""},
		{"broken", TimedLeaseRequest{Action: TimedAcquire, ProposedID: a, Seconds: -1}, TimedLeased, "", a},
		{"broken", TimedLeaseRequest{Action: TimedAcquire, ProposedID: b, Seconds: -1}, TimedLeased, "", b},
		{"broken", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 10}, TimedBroken, "", ""},
		{"broken", TimedLeaseRequest{Action: TimedChange, LeaseID: a, ProposedID: b}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"broken", TimedLeaseRequest{Action: TimedRenew, LeaseID: a}, 0, LeaseIsBrokenAndCannotBeRenewed, ""},
		{"broken", TimedLeaseRequest{Action: TimedRelease, LeaseID: a}, TimedAvailable, "", ""},
		{"expired", TimedLeaseRequest{Action: TimedAcquire, ProposedID: b, Seconds: 20}, TimedLeased, "", b},
		{"expired", TimedLeaseRequest{Action: TimedRenew, LeaseID: a}, TimedLeased, "", a},
		{"expired", TimedLeaseRequest{Action: TimedRenew, LeaseID: b}, 0, LeaseIDMismatchWithLeaseOperation, ""},
		{"expired", TimedLeaseRequest{Action: TimedChange, LeaseID: a, ProposedID: b}, 0, LeaseNotPresentWithLeaseOperation, ""},
		{"expired", TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 5}, TimedAvailable, "", ""},
		{"expired", TimedLeaseRequest{Action: TimedRelease, LeaseID: a}, TimedAvailable, "", ""},
	} {
		res, err := DecideTimedLease(states[tc.state], tc.req, t0, newID)
		name := tc.state + " " + [...]string{"", "acquire", "renew", "change", "release", "break"}[tc.req.Action]
		if tc.code != "" {
			var le *LeaseError
			if !errors.As(err, &le) || le.Code != tc.code {
				t.Errorf("%s %+v: %v, want %s", name, tc.req, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %+v: %v", name, tc.req, err)
			continue
		}
		if got := res.Next.State(t0); got != tc.want || res.ID != tc.id {
			t.Errorf("%s %+v: state %v id %q, want %v %q", name, tc.req, got, res.ID, tc.want, tc.id)
		}
	}
}

func TestDecideTimedLeaseDurations(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []int{0, 14, 61, -2} {
		if _, err := DecideTimedLease(TimedLease{}, TimedLeaseRequest{Action: TimedAcquire, Seconds: d}, t0, func() string { return "x" }); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("acquire for %d s: %v", d, err)
		}
	}
	res, err := DecideTimedLease(TimedLease{}, TimedLeaseRequest{Action: TimedAcquire, Seconds: 15}, t0, func() string { return "x" })
	if err != nil || res.Next.State(t0.Add(15*time.Second-1)) != TimedLeased || res.Next.State(t0.Add(15*time.Second)) != TimedExpired {
		t.Fatalf("a 15 s lease: %+v %v", res.Next, err)
	}
	// A break of a finite lease ends when the lease would have.
	br, err := DecideTimedLease(res.Next, TimedLeaseRequest{Action: TimedBreak, BreakSeconds: 60}, t0.Add(5*time.Second), nil)
	if err != nil || br.Left != 10*time.Second {
		t.Fatalf("break with a period past the lease's end: left %v %v", br.Left, err)
	}
	if err := CheckTimedLease(br.Next, 1, "", true, t0.Add(14*time.Second)); err == nil {
		t.Fatal("a breaking lease let an operation through without its id")
	}
	if err := CheckTimedLease(br.Next, 1, "", true, t0.Add(15*time.Second)); err != nil {
		t.Fatalf("a broken lease still holds: %v", err)
	}
}
