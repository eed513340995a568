package blobsvc

import (
	"errors"
	"testing"
	"time"
)

// TestLeaseTable walks Azure's Lease Blob outcome table: every action
// (with the holder's id A, another id B, or none) against every state
// the lease of holder A can be in.
func TestLeaseTable(t *testing.T) {
	const A, B, C = "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(100 * time.Second)
	states := map[LeaseState]Lease{
		LeaseAvailable: {State: LeaseAvailable},
		LeaseLeased:    {State: LeaseLeased, ID: A, Duration: 60, Expires: now.Add(30 * time.Second)},
		LeaseBreaking:  {State: LeaseBreaking, ID: A, Duration: 60, BreakAt: now.Add(10 * time.Second)},
		LeaseBroken:    {State: LeaseBreaking, ID: A, BreakAt: now.Add(-time.Second)},
		LeaseExpired:   {State: LeaseLeased, ID: A, Duration: 15, Expires: now.Add(-time.Second)},
	}
	p0, p10 := 0, 10
	type want struct {
		state LeaseState // "" = fails
		id    string
		err   error
	}
	ok := func(s LeaseState, id string) want { return want{state: s, id: id} }
	fail := func(err error) want { return want{err: err} }
	rows := []struct {
		name string
		req  LeaseRequest
		out  map[LeaseState]want
	}{
		{"acquire (A)", LeaseRequest{Action: LeaseAcquire, ProposedID: A, Duration: 30}, map[LeaseState]want{
			LeaseAvailable: ok(LeaseLeased, A), LeaseLeased: ok(LeaseLeased, A), LeaseBreaking: fail(ErrLeaseBreakingNoAcquire),
			LeaseBroken: ok(LeaseLeased, A), LeaseExpired: ok(LeaseLeased, A)}},
		{"acquire (B)", LeaseRequest{Action: LeaseAcquire, ProposedID: B, Duration: 30}, map[LeaseState]want{
			LeaseAvailable: ok(LeaseLeased, B), LeaseLeased: fail(ErrLeaseAlreadyPresent), LeaseBreaking: fail(ErrLeaseAlreadyPresent),
			LeaseBroken: ok(LeaseLeased, B), LeaseExpired: ok(LeaseLeased, B)}},
		{"break, period 0", LeaseRequest{Action: LeaseBreak, BreakPeriod: &p0}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseNotPresentWithLeaseOp), LeaseLeased: ok(LeaseBroken, A), LeaseBreaking: ok(LeaseBroken, A),
			LeaseBroken: ok(LeaseBroken, A), LeaseExpired: ok(LeaseBroken, A)}},
		{"break, period 10", LeaseRequest{Action: LeaseBreak, BreakPeriod: &p10}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseNotPresentWithLeaseOp), LeaseLeased: ok(LeaseBreaking, A), LeaseBreaking: ok(LeaseBreaking, A),
			LeaseBroken: ok(LeaseBroken, A), LeaseExpired: ok(LeaseBroken, A)}},
		{"change (A) to (B)", LeaseRequest{Action: LeaseChange, ID: A, ProposedID: B}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseNotPresentWithLeaseOp), LeaseLeased: ok(LeaseLeased, B), LeaseBreaking: fail(ErrLeaseBreakingNoChange),
			LeaseBroken: fail(ErrLeaseNotPresentWithLeaseOp), LeaseExpired: fail(ErrLeaseNotPresentWithLeaseOp)}},
		{"change (B) to (A)", LeaseRequest{Action: LeaseChange, ID: B, ProposedID: A}, map[LeaseState]want{
			LeaseLeased: ok(LeaseLeased, A), LeaseBreaking: fail(ErrLeaseIDMismatchWithLeaseOp)}},
		{"change (B) to (C)", LeaseRequest{Action: LeaseChange, ID: B, ProposedID: C}, map[LeaseState]want{
			LeaseLeased: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseBreaking: fail(ErrLeaseIDMismatchWithLeaseOp)}},
		{"renew (A)", LeaseRequest{Action: LeaseRenew, ID: A}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseLeased: ok(LeaseLeased, A), LeaseBreaking: fail(ErrLeaseBrokenNoRenew),
			LeaseBroken: fail(ErrLeaseBrokenNoRenew), LeaseExpired: ok(LeaseLeased, A)}},
		{"renew (B)", LeaseRequest{Action: LeaseRenew, ID: B}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseLeased: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseBreaking: fail(ErrLeaseIDMismatchWithLeaseOp),
			LeaseBroken: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseExpired: fail(ErrLeaseIDMismatchWithLeaseOp)}},
		{"release (A)", LeaseRequest{Action: LeaseRelease, ID: A}, map[LeaseState]want{
			LeaseAvailable: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseLeased: ok(LeaseAvailable, ""), LeaseBreaking: ok(LeaseAvailable, ""),
			LeaseBroken: ok(LeaseAvailable, ""), LeaseExpired: ok(LeaseAvailable, "")}},
		{"release (B)", LeaseRequest{Action: LeaseRelease, ID: B}, map[LeaseState]want{
			LeaseLeased: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseBreaking: fail(ErrLeaseIDMismatchWithLeaseOp),
			LeaseBroken: fail(ErrLeaseIDMismatchWithLeaseOp), LeaseExpired: fail(ErrLeaseIDMismatchWithLeaseOp)}},
	}
	for _, row := range rows {
		for from, w := range row.out {
			got, res, err := row.req.apply(states[from], now, false)
			eff := got.Effective(now)
			switch {
			case w.err != nil && !errors.Is(err, w.err):
				t.Errorf("%s on %s: err %v, want %v", row.name, from, err, w.err)
			case w.err == nil && err != nil:
				t.Errorf("%s on %s: %v", row.name, from, err)
			case w.err == nil && (eff.State != w.state || eff.ID != w.id && w.state != LeaseAvailable):
				t.Errorf("%s on %s: %s (%s), want %s (%s)", row.name, from, eff.State, eff.ID, w.state, w.id)
			case w.err == nil && row.req.Action == LeaseBreak && from == LeaseLeased && res.Time != *row.req.BreakPeriod:
				t.Errorf("%s on %s: lease time %d", row.name, from, res.Time)
			}
		}
	}
}

// TestWriteOutcomeTable walks Azure's "Outcomes of use attempts on blobs
// by lease state" for writes: with the holder's id (A), another id (B) or
// none, against every state of holder A's lease, and the lease the blob
// keeps after a write that succeeds ("Write, no lease specified" on
// Broken (A) and Expired (A): "Available, write succeeds").
func TestWriteOutcomeTable(t *testing.T) {
	const A, B = "aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000"
	now := time.Date(2026, 1, 1, 0, 1, 40, 0, time.UTC)
	states := map[LeaseState]Lease{
		LeaseAvailable: {State: LeaseAvailable},
		LeaseLeased:    {State: LeaseLeased, ID: A, Duration: 60, Expires: now.Add(30 * time.Second)},
		LeaseBreaking:  {State: LeaseBreaking, ID: A, Duration: 60, BreakAt: now.Add(10 * time.Second)},
		LeaseBroken:    {State: LeaseBreaking, ID: A, BreakAt: now.Add(-time.Second)},
		LeaseExpired:   {State: LeaseLeased, ID: A, Duration: 15, Expires: now.Add(-time.Second)},
	}
	type want struct {
		err   error      // nil: the write succeeds
		after LeaseState // the state after a successful write
	}
	rows := []struct {
		name, id string
		out      map[LeaseState]want
	}{
		{"write using (A)", A, map[LeaseState]want{
			LeaseAvailable: {err: ErrLeaseNotPresent}, LeaseLeased: {after: LeaseLeased}, LeaseBreaking: {after: LeaseBreaking},
			LeaseBroken: {err: ErrLeaseNotPresent}, LeaseExpired: {err: ErrLeaseLost}}},
		{"write using (B)", B, map[LeaseState]want{
			LeaseAvailable: {err: ErrLeaseNotPresent}, LeaseLeased: {err: ErrLeaseIDMismatch}, LeaseBreaking: {err: ErrLeaseIDMismatch},
			LeaseBroken: {err: ErrLeaseNotPresent}, LeaseExpired: {err: ErrLeaseLost}}},
		{"write, no lease specified", "", map[LeaseState]want{
			LeaseAvailable: {after: LeaseAvailable}, LeaseLeased: {err: ErrLeaseIDMissing}, LeaseBreaking: {err: ErrLeaseIDMissing},
			LeaseBroken: {after: LeaseAvailable}, LeaseExpired: {after: LeaseAvailable}}},
	}
	for _, row := range rows {
		for from, w := range row.out {
			l := states[from]
			err := checkWriteLease(l, row.id, now)
			if !errors.Is(err, w.err) || (w.err == nil) != (err == nil) {
				t.Errorf("%s on %s: err %v, want %v", row.name, from, err, w.err)
				continue
			}
			if err != nil {
				continue
			}
			after := l.afterWrite(now)
			if got := after.Effective(now).State; got != w.after {
				t.Errorf("%s on %s: lease %s after the write, want %s", row.name, from, got, w.after)
			}
			if w.after == LeaseAvailable && after.ID != "" {
				t.Errorf("%s on %s: the old id %s is kept", row.name, from, after.ID)
			}
			// The Available column of the lease table then holds: renew
			// and release with the old id, and break, fail with 409.
			if w.after != LeaseAvailable {
				continue
			}
			p0 := 0
			for _, req := range []struct {
				r    LeaseRequest
				want error
			}{
				{LeaseRequest{Action: LeaseRenew, ID: A}, ErrLeaseIDMismatchWithLeaseOp},
				{LeaseRequest{Action: LeaseRelease, ID: A}, ErrLeaseIDMismatchWithLeaseOp},
				{LeaseRequest{Action: LeaseBreak, BreakPeriod: &p0}, ErrLeaseNotPresentWithLeaseOp},
			} {
				if _, _, err := req.r.apply(after, now, false); !errors.Is(err, req.want) {
					t.Errorf("%s on %s, then %s: %v, want %v", row.name, from, req.r.Action, err, req.want)
				}
			}
		}
	}
}

// TestBreakPeriodClamp: a break takes effect at now + period, but never
// later than the lease's own end or a break already under way.
func TestBreakPeriodClamp(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p60, p5 := 60, 5
	fixed := Lease{State: LeaseLeased, ID: "x", Duration: 15, Expires: now.Add(12 * time.Second)}
	if _, res, _ := (LeaseRequest{Action: LeaseBreak, BreakPeriod: &p60}).apply(fixed, now, false); res.Time != 12 {
		t.Errorf("60 s break of a lease with 12 s left: %d", res.Time)
	}
	if _, res, _ := (LeaseRequest{Action: LeaseBreak}).apply(fixed, now, false); res.Time != 12 {
		t.Errorf("break without period of a lease with 12 s left: %d", res.Time)
	}
	breaking := Lease{State: LeaseBreaking, ID: "x", BreakAt: now.Add(20 * time.Second)}
	if _, res, _ := (LeaseRequest{Action: LeaseBreak, BreakPeriod: &p60}).apply(breaking, now, false); res.Time != 20 {
		t.Errorf("longer break of a breaking lease: %d", res.Time)
	}
	if _, res, _ := (LeaseRequest{Action: LeaseBreak, BreakPeriod: &p5}).apply(breaking, now, false); res.Time != 5 {
		t.Errorf("shorter break of a breaking lease: %d", res.Time)
	}
}
