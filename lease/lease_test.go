package lease

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

const (
	idA = "aaaaaaaa-0000-0000-0000-000000000000"
	idB = "bbbbbbbb-0000-0000-0000-000000000000"
	idC = "cccccccc-0000-0000-0000-000000000000"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// states are the lease of holder A in every state, at t0. "written"
// is an expired lease whose resource was written since the expiry
// (Options.ModifiedSinceExpiry: the blob flavour's column).
var states = map[string]Lease{
	"available":      {},
	"leased":         {State: Leased, ID: idA, Duration: 60, Expires: t0.Add(30 * time.Second)},
	"infinite":       {State: Leased, ID: idA, Duration: Infinite},
	"expired":        {State: Leased, ID: idA, Duration: 15, Expires: t0.Add(-time.Second)},
	"written":        {State: Leased, ID: idA, Duration: 15, Expires: t0.Add(-time.Second)},
	"breaking":       {State: Breaking, ID: idA, Duration: 60, BreakAt: t0.Add(10 * time.Second)},
	"breaking inf":   {State: Breaking, ID: idA, Duration: Infinite, BreakAt: t0.Add(10 * time.Second)},
	"broken":         {State: Breaking, ID: idA, Duration: Infinite, BreakAt: t0.Add(-time.Second)},
	"broken at once": {State: Broken, ID: idA, BreakAt: t0.Add(-5 * time.Second)},
}

// outcome is a cell of the table: the state and id after the action
// (and x-ms-lease-time for a break), or the refusal.
type outcome struct {
	state State
	id    string
	time  int
	code  Code
}

func to(s State, id string) outcome { return outcome{state: s, id: id} }
func brk(s State, secs int) outcome { return outcome{state: s, id: idA, time: secs} }
func no(c Code) outcome             { return outcome{code: c} }

// TestDecideTable runs every action against every state, for both
// flavours of the one machine: blob (ModifiedSinceExpiry set on the
// "written" column) and container/share (never set). The cells are
// Azure's tables "Outcomes of lease operations on blobs by lease state"
// and "… on containers …", with the codes of doc.go ("Settled").
func TestDecideTable(t *testing.T) {
	p0, p5, p10, p60 := 0, 5, 10, 60
	var (
		mism     = no(LeaseIDMismatchWithLeaseOperation)
		notHere  = no(LeaseNotPresentWithLeaseOperation)
		present  = no(LeaseAlreadyPresent)
		noRenew  = no(LeaseIsBrokenAndCannotBeRenewed)
		noChange = no(LeaseIsBreakingAndCannotBeChanged)
		noAcq    = no(LeaseIsBreakingAndCannotBeAcquired)
	)
	// all fills every state with one outcome, then overrides.
	all := func(o outcome, over map[string]outcome) map[string]outcome {
		m := map[string]outcome{}
		for s := range states {
			m[s] = o
		}
		for s, v := range over {
			m[s] = v
		}
		return m
	}
	rows := []struct {
		name string
		req  Request
		out  map[string]outcome
	}{
		{"acquire, no proposed id", Request{Action: Acquire, Duration: 15}, all(to(Leased, idC), map[string]outcome{
			"leased": present, "infinite": present, "breaking": present, "breaking inf": present})},
		{"acquire (A)", Request{Action: Acquire, ProposedID: idA, Duration: Infinite}, all(to(Leased, idA), map[string]outcome{
			"breaking": noAcq, "breaking inf": noAcq})},
		{"acquire (B)", Request{Action: Acquire, ProposedID: idB, Duration: 60}, all(to(Leased, idB), map[string]outcome{
			"leased": present, "infinite": present, "breaking": present, "breaking inf": present})},
		{"renew (A)", Request{Action: Renew, ID: idA}, map[string]outcome{
			"available": mism, "leased": to(Leased, idA), "infinite": to(Leased, idA), "expired": to(Leased, idA),
			"written":  to(Leased, idA), // the container/share flavour; the blob flavour below
			"breaking": noRenew, "breaking inf": noRenew, "broken": noRenew, "broken at once": noRenew}},
		{"renew (B)", Request{Action: Renew, ID: idB}, all(mism, nil)},
		{"change (A) to (B)", Request{Action: Change, ID: idA, ProposedID: idB}, all(notHere, map[string]outcome{
			"leased": to(Leased, idB), "infinite": to(Leased, idB), "breaking": noChange, "breaking inf": noChange})},
		{"change (B) to (A)", Request{Action: Change, ID: idB, ProposedID: idA}, all(notHere, map[string]outcome{
			"leased": to(Leased, idA), "infinite": to(Leased, idA), "breaking": mism, "breaking inf": mism})},
		{"change (B) to (C)", Request{Action: Change, ID: idB, ProposedID: idC}, all(notHere, map[string]outcome{
			"leased": mism, "infinite": mism, "breaking": mism, "breaking inf": mism})},
		{"release (A)", Request{Action: Release, ID: idA}, all(to(Available, ""), map[string]outcome{"available": mism})},
		{"release (B)", Request{Action: Release, ID: idB}, all(mism, nil)},
		{"break, no period", Request{Action: Break}, all(brk(Broken, 0), map[string]outcome{
			"available": notHere, "leased": brk(Breaking, 30), "breaking": brk(Breaking, 10), "breaking inf": brk(Breaking, 10)})},
		{"break, period 0", Request{Action: Break, BreakPeriod: &p0}, all(brk(Broken, 0), map[string]outcome{"available": notHere})},
		{"break, period 5", Request{Action: Break, BreakPeriod: &p5}, all(brk(Broken, 0), map[string]outcome{
			"available": notHere, "leased": brk(Breaking, 5), "infinite": brk(Breaking, 5),
			"breaking": brk(Breaking, 5), "breaking inf": brk(Breaking, 5)})},
		{"break, period 10", Request{Action: Break, BreakPeriod: &p10}, all(brk(Broken, 0), map[string]outcome{
			"available": notHere, "leased": brk(Breaking, 10), "infinite": brk(Breaking, 10),
			"breaking": brk(Breaking, 10), "breaking inf": brk(Breaking, 10)})},
		{"break, period 60", Request{Action: Break, BreakPeriod: &p60}, all(brk(Broken, 0), map[string]outcome{
			"available": notHere, "leased": brk(Breaking, 30), "infinite": brk(Breaking, 60),
			"breaking": brk(Breaking, 10), "breaking inf": brk(Breaking, 10)})},
	}
	for _, flavour := range []struct {
		name     string
		modified bool // ModifiedSinceExpiry on the "written" column
	}{{"blob", true}, {"container/share", false}} {
		for _, row := range rows {
			for from, want := range row.out {
				if flavour.modified && from == "written" && row.req.Action == Renew && row.req.ID == idA {
					// Lease Blob: a renew of an expired lease fails once
					// the blob was written (its id was forgotten).
					want = mism
				}
				name := fmt.Sprintf("%s: %s on %s", flavour.name, row.name, from)
				opts := Options{NewID: func() string { return idC }, ModifiedSinceExpiry: flavour.modified && from == "written"}
				before := states[from]
				next, res, err := Decide(before, row.req, t0, opts)
				if want.code != "" {
					var le *Error
					if !errors.As(err, &le) || le.Code != want.code {
						t.Errorf("%s: %v, want %s", name, err, want.code)
					}
					if next != before {
						t.Errorf("%s: a refusal changed the lease to %+v", name, next)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				got := next.Effective(t0)
				if got.State != want.state || got.ID != want.id {
					t.Errorf("%s: %s %q, want %s %q", name, got.State, got.ID, want.state, want.id)
				}
				if row.req.Action == Break && res.Time != want.time {
					t.Errorf("%s: x-ms-lease-time %d, want %d", name, res.Time, want.time)
				}
				if row.req.Action != Break && row.req.Action != Release && res.ID != want.id {
					t.Errorf("%s: answered id %q, want %q", name, res.ID, want.id)
				}
			}
		}
	}
}

// TestLeaseEnds: a finite lease expires at its end, a breaking one
// breaks at BreakAt, with no timer: the state is a function of the time.
func TestLeaseEnds(t *testing.T) {
	l, _, err := Decide(Lease{}, Request{Action: Acquire, Duration: 15}, t0, Options{NewID: func() string { return idA }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at     time.Duration
		state  State
		status string
		dur    string
	}{{0, Leased, "locked", "fixed"}, {15*time.Second - 1, Leased, "locked", "fixed"}, {15 * time.Second, Expired, "unlocked", ""}} {
		now := t0.Add(c.at)
		if l.StateAt(now) != c.state || l.Status(now) != c.status || l.DurationName(now) != c.dur {
			t.Errorf("at +%v: %s %s %q, want %s %s %q", c.at, l.StateAt(now), l.Status(now), l.DurationName(now), c.state, c.status, c.dur)
		}
	}
	// A 60 s break 5 s into the lease ends when the lease would have.
	br, res, err := Decide(l, Request{Action: Break, BreakPeriod: new(60)}, t0.Add(5*time.Second), Options{})
	if err != nil || res.Time != 10 {
		t.Fatalf("break past the lease's end: %d %v", res.Time, err)
	}
	if s := br.StateAt(t0.Add(15*time.Second - 1)); s != Breaking {
		t.Errorf("before the break ends: %s", s)
	}
	if s := br.StateAt(t0.Add(15 * time.Second)); s != Broken {
		t.Errorf("when the break ends: %s", s)
	}
}

// TestCheck walks "Outcomes of use attempts on blobs by lease state"
// (and its container form): with the holder's id (A), another (B) or
// none, for an operation that needs the id while the lease is active
// (CheckWrite) and one that does not (CheckRead).
func TestCheck(t *testing.T) {
	var (
		missing  = &Error{Code: LeaseIDMissing}
		mismatch = &Error{Code: LeaseIDMismatchWithResourceOperation}
		absent   = &Error{Code: LeaseNotPresentWithResourceOperation}
		lost     = &Error{Code: LeaseLost}
	)
	// want[state] = {write A, write B, write none, read none}; a read
	// with an id answers as the write with that id.
	want := map[string][4]error{
		"available":      {absent, absent, nil, nil},
		"leased":         {nil, mismatch, missing, nil},
		"infinite":       {nil, mismatch, missing, nil},
		"expired":        {lost, lost, nil, nil},
		"written":        {lost, lost, nil, nil},
		"breaking":       {nil, mismatch, missing, nil},
		"breaking inf":   {nil, mismatch, missing, nil},
		"broken":         {absent, absent, nil, nil},
		"broken at once": {absent, absent, nil, nil},
	}
	for from, w := range want {
		l := states[from]
		for i, c := range []struct {
			id    string
			check func(Lease, string, time.Time) error
		}{{idA, CheckWrite}, {idB, CheckWrite}, {"", CheckWrite}, {"", CheckRead}} {
			err := c.check(l, c.id, t0)
			if (err == nil) != (w[i] == nil) || w[i] != nil && !errors.Is(err, w[i]) {
				t.Errorf("%s, check %d (id %q): %v, want %v", from, i, c.id, err, w[i])
			}
			if c.id != "" {
				if rerr := CheckRead(l, c.id, t0); (rerr == nil) != (err == nil) || err != nil && !errors.Is(rerr, err) {
					t.Errorf("%s, read with id %q: %v, want %v", from, c.id, rerr, err)
				}
			}
		}
	}
}

// TestAfterWrite: a write forgets an expired or broken lease (the blob
// is then Available: renew and release with the old id are 409
// LeaseIdMismatchWithLeaseOperation, break 409
// LeaseNotPresentWithLeaseOperation); it keeps an active one.
func TestAfterWrite(t *testing.T) {
	for from, keep := range map[string]bool{
		"available": true, "leased": true, "infinite": true, "expired": false, "written": false,
		"breaking": true, "breaking inf": true, "broken": false, "broken at once": false,
	} {
		l := states[from]
		after := l.AfterWrite(t0)
		switch {
		case keep && after != l:
			t.Errorf("%s: a write changed the lease to %+v", from, after)
		case !keep && (after.StateAt(t0) != Available || after.ID != ""):
			t.Errorf("%s: after a write %s %q, want available", from, after.StateAt(t0), after.ID)
		}
		if keep {
			continue
		}
		for _, c := range []struct {
			req  Request
			code Code
		}{
			{Request{Action: Renew, ID: idA}, LeaseIDMismatchWithLeaseOperation},
			{Request{Action: Release, ID: idA}, LeaseIDMismatchWithLeaseOperation},
			{Request{Action: Break}, LeaseNotPresentWithLeaseOperation},
		} {
			if _, _, err := Decide(after, c.req, t0, Options{}); !errors.Is(err, &Error{Code: c.code}) {
				t.Errorf("%s, written, then %s: %v, want %s", from, c.req.Action, err, c.code)
			}
		}
	}
}

// TestSameID: ids are GUIDs "in any valid GUID string format".
func TestSameID(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{idA, idA, true},
		{"AAAAAAAA-0000-0000-0000-000000000000", idA, true},
		{"{aaaaaaaa-0000-0000-0000-000000000000}", idA, true},
		{"aaaaaaaa000000000000000000000000", idA, true},
		{idA, idB, false},
		{"", "", false},
		{idA, "", false},
	} {
		if got := SameID(c.a, c.b); got != c.same {
			t.Errorf("SameID(%q, %q) = %v", c.a, c.b, got)
		}
	}
	upper := "AAAAAAAA-0000-0000-0000-000000000000"
	if _, _, err := Decide(states["leased"], Request{Action: Release, ID: upper}, t0, Options{}); err != nil {
		t.Errorf("release with the id in upper case: %v", err)
	}
}

// TestValidate: malformed requests are refused before any state is read.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want error
	}{
		{Request{Action: Acquire, Duration: 14}, ErrInvalidDuration},
		{Request{Action: Acquire, Duration: 61}, ErrInvalidDuration},
		{Request{Action: Acquire, Duration: 0}, ErrInvalidDuration},
		{Request{Action: Acquire, Duration: -2}, ErrInvalidDuration},
		{Request{Action: Break, BreakPeriod: new(-1)}, ErrInvalidBreakPeriod},
		{Request{Action: Break, BreakPeriod: new(61)}, ErrInvalidBreakPeriod},
		{Request{Action: Renew}, ErrMissingID},
		{Request{Action: Release}, ErrMissingID},
		{Request{Action: Change, ID: idA}, ErrMissingID},
		{Request{Action: "steal"}, ErrInvalidAction},
	} {
		if _, _, err := Decide(states["leased"], c.req, t0, Options{}); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.req, err, c.want)
		}
	}
}

// TestCodeFor: the two resource-neutral codes take the resource's noun;
// shares answer with the container's.
func TestCodeFor(t *testing.T) {
	for _, c := range []struct {
		code Code
		r    Resource
		want string
	}{
		{LeaseIDMismatchWithResourceOperation, Blob, "LeaseIdMismatchWithBlobOperation"},
		{LeaseIDMismatchWithResourceOperation, Container, "LeaseIdMismatchWithContainerOperation"},
		{LeaseIDMismatchWithResourceOperation, Share, "LeaseIdMismatchWithContainerOperation"},
		{LeaseNotPresentWithResourceOperation, Share, "LeaseNotPresentWithContainerOperation"},
		{LeaseLost, Share, "LeaseLost"},
		{LeaseIDMismatchWithLeaseOperation, Blob, "LeaseIdMismatchWithLeaseOperation"},
	} {
		if got := c.code.For(c.r); got != c.want {
			t.Errorf("%s for %s: %s, want %s", c.code, c.r, got, c.want)
		}
	}
}
