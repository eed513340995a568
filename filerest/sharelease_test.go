package filerest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/blobshare/blobshare/filerest"
)

// fakeClock is the injected clock of server and fs: tests move it
// instead of sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Now().UTC()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func withClock(c *fakeClock) func(*filerest.Config) {
	return func(cfg *filerest.Config) { cfg.Now = c.Now }
}

// leaseState reads x-ms-lease-state/-status/-duration of a share.
func leaseState(t *testing.T, s *share.Client) (state, status, duration string) {
	t.Helper()
	p, err := s.GetProperties(ctxBG, nil)
	if err != nil {
		t.Fatalf("share properties: %v", err)
	}
	return string(deref(p.LeaseState)), string(deref(p.LeaseStatus)), string(deref(p.LeaseDuration))
}

func TestShareLeaseLifecycle(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock))
	s := e.mustShare("leased")
	lc, err := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr("00000000-0000-0000-0000-00000000000a")})
	if err != nil {
		t.Fatal(err)
	}
	if st, status, _ := leaseState(t, s); st != "available" || status != "unlocked" {
		t.Fatalf("new share: %s %s", st, status)
	}
	before, _ := s.GetProperties(ctxBG, nil)

	// Durations outside 15..60 (and not -1) are refused.
	for _, d := range []int32{0, 14, 61, -2} {
		_, err := lc.Acquire(ctxBG, d, nil)
		wantCode(t, "acquire with a bad duration", err, "InvalidHeaderValue")
	}

	acq, err := lc.Acquire(ctxBG, 15, nil)
	if err != nil || deref(acq.LeaseID) != *lc.LeaseID() {
		t.Fatalf("acquire: %v %v", deref(acq.LeaseID), err)
	}
	if st, status, d := leaseState(t, s); st != "leased" || status != "locked" || d != "fixed" {
		t.Fatalf("after acquire: %s %s %s", st, status, d)
	}
	after, _ := s.GetProperties(ctxBG, nil)
	if deref(after.ETag) != deref(before.ETag) {
		t.Fatalf("a lease changed the share's ETag %v → %v", deref(before.ETag), deref(after.ETag))
	}

	// Another id cannot acquire; Delete Share needs the id.
	other, _ := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr("00000000-0000-0000-0000-00000000000b")})
	_, err = other.Acquire(ctxBG, 30, nil)
	wantCode(t, "acquire over a lease", err, "LeaseAlreadyPresent")
	_, err = s.Delete(ctxBG, nil)
	wantCode(t, "delete a leased share without the id", err, "LeaseIdMissing")
	_, err = s.Delete(ctxBG, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: other.LeaseID()}})
	wantCode(t, "delete with another id", err, "LeaseIdMismatchWithContainerOperation")
	_, err = s.SetMetadata(ctxBG, &share.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")},
		LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: other.LeaseID()}})
	wantCode(t, "set metadata with another id", err, "LeaseIdMismatchWithContainerOperation")
	if _, err := s.SetMetadata(ctxBG, &share.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}}); err != nil {
		t.Fatalf("set metadata without a lease id on a leased share: %v", err)
	}

	// The lease expires after its duration by the injected clock; renew
	// brings it back, even once expired.
	clock.Advance(14 * time.Second)
	if st, _, _ := leaseState(t, s); st != "leased" {
		t.Fatalf("14 s into a 15 s lease: %s", st)
	}
	clock.Advance(time.Second)
	if st, status, _ := leaseState(t, s); st != "expired" || status != "unlocked" {
		t.Fatalf("after 15 s: %s %s", st, status)
	}
	// An id sent while the lease is expired: "LeaseLost | Precondition
	// Failed (412) | A lease ID was specified, but the lease for the
	// blob/container has expired" (lease/doc.go, "Settled").
	_, err = s.SetMetadata(ctxBG, &share.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")},
		LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: lc.LeaseID()}})
	wantCode(t, "set metadata with the id of an expired lease", err, "LeaseLost")
	if _, err := lc.Renew(ctxBG, nil); err != nil {
		t.Fatalf("renew an expired lease: %v", err)
	}
	if st, _, _ := leaseState(t, s); st != "leased" {
		t.Fatalf("after renew: %s", st)
	}
	_, err = other.Renew(ctxBG, nil)
	wantCode(t, "renew with another id", err, "LeaseIdMismatchWithLeaseOperation")

	// Change, then the old id is refused.
	newID := "00000000-0000-0000-0000-00000000000c"
	if _, err := lc.Change(ctxBG, newID, nil); err != nil {
		t.Fatalf("change: %v", err)
	}
	if *lc.LeaseID() != newID {
		t.Fatalf("lease client id after change %s", *lc.LeaseID())
	}
	_, err = s.Delete(ctxBG, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: to.Ptr("00000000-0000-0000-0000-00000000000a")}})
	wantCode(t, "delete with the id before the change", err, "LeaseIdMismatchWithContainerOperation")

	// Break with a period: breaking until the period ends, then broken.
	br, err := lc.Break(ctxBG, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(10))})
	if err != nil || deref(br.LeaseTime) != 10 {
		t.Fatalf("break with a 10 s period: time %v %v", deref(br.LeaseTime), err)
	}
	if st, status, _ := leaseState(t, s); st != "breaking" || status != "locked" {
		t.Fatalf("during the break period: %s %s", st, status)
	}
	// Only the holder's id gets "The lease ID matched, but the lease is
	// currently in breaking state" (lease/doc.go, "Settled").
	_, err = other.Acquire(ctxBG, -1, nil)
	wantCode(t, "acquire while breaking with another id", err, "LeaseAlreadyPresent")
	_, err = lc.Acquire(ctxBG, -1, nil)
	wantCode(t, "acquire while breaking with the holder's id", err, "LeaseIsBreakingAndCannotBeAcquired")
	_, err = lc.Change(ctxBG, "00000000-0000-0000-0000-00000000000d", nil)
	wantCode(t, "change while breaking", err, "LeaseIsBreakingAndCannotBeChanged")
	clock.Advance(10 * time.Second)
	if st, status, _ := leaseState(t, s); st != "broken" || status != "unlocked" {
		t.Fatalf("after the break period: %s %s", st, status)
	}
	_, err = lc.Renew(ctxBG, nil)
	wantCode(t, "renew a broken lease", err, "LeaseIsBrokenAndCannotBeRenewed")

	// A broken lease can be acquired by anyone; an infinite one breaks
	// at once without a period; release frees it.
	if _, err := other.Acquire(ctxBG, -1, nil); err != nil {
		t.Fatalf("acquire a broken lease: %v", err)
	}
	if st, _, d := leaseState(t, s); st != "leased" || d != "infinite" {
		t.Fatalf("infinite lease: %s %s", st, d)
	}
	clock.Advance(time.Hour)
	if br, err := other.Break(ctxBG, nil); err != nil || deref(br.LeaseTime) != 0 {
		t.Fatalf("break an infinite lease: %v %v", deref(br.LeaseTime), err)
	}
	if st, _, _ := leaseState(t, s); st != "broken" {
		t.Fatalf("after breaking an infinite lease: %s", st)
	}
	if _, err := other.Release(ctxBG, nil); err != nil {
		t.Fatalf("release a broken lease: %v", err)
	}
	// Release on an available lease is a mismatch, as for containers
	// (lease/doc.go, "Settled").
	_, err = other.Release(ctxBG, nil)
	wantCode(t, "release without a lease", err, "LeaseIdMismatchWithLeaseOperation")
	_, err = s.Delete(ctxBG, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: other.LeaseID()}})
	wantCode(t, "delete with an id when there is no lease", err, "LeaseNotPresentWithContainerOperation")

	// Delete with the lease id.
	if _, err := other.Acquire(ctxBG, 60, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctxBG, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: other.LeaseID()}}); err != nil {
		t.Fatalf("delete with the lease id: %v", err)
	}
	// The lease went with the share: a new share of that name is free.
	s2 := e.mustShare("leased")
	if st, _, _ := leaseState(t, s2); st != "available" {
		t.Fatalf("recreated share's lease: %s", st)
	}
}

// A finite lease broken without a period breaks when it would have
// expired; a period longer than what is left is cut to it.
func TestShareLeaseBreakPeriods(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock))
	s := e.mustShare("breaks")
	lc, _ := lease.NewShareClient(s, nil)
	if _, err := lc.Acquire(ctxBG, 40, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	br, err := lc.Break(ctxBG, nil)
	if err != nil || deref(br.LeaseTime) != 30 {
		t.Fatalf("break without a period: %v %v, want 30 s", deref(br.LeaseTime), err)
	}
	br, err = lc.Break(ctxBG, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(60))})
	if err != nil || deref(br.LeaseTime) != 30 {
		t.Fatalf("break again with a longer period: %v %v, want 30 s", deref(br.LeaseTime), err)
	}
	br, err = lc.Break(ctxBG, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(5))})
	if err != nil || deref(br.LeaseTime) != 5 {
		t.Fatalf("break again with a shorter period: %v %v, want 5 s", deref(br.LeaseTime), err)
	}
	_, err = lc.Break(ctxBG, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(61))})
	wantCode(t, "break period 61", err, "InvalidHeaderValue")
	// While breaking, delete still needs the id.
	_, err = s.Delete(ctxBG, nil)
	wantCode(t, "delete a share whose lease is breaking", err, "LeaseIdMissing")
	clock.Advance(5 * time.Second)
	if _, err := s.Delete(ctxBG, nil); err != nil {
		t.Fatalf("delete a share whose lease is broken: %v", err)
	}
}

// Concurrent acquires with distinct ids: exactly one wins.
func TestShareLeaseConcurrentAcquire(t *testing.T) {
	e := newEnv(t)
	s := e.mustShare("race")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc, _ := lease.NewShareClient(s, nil)
			_, errs[i] = lc.Acquire(ctxBG, -1, nil)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if errCode(err) != "LeaseAlreadyPresent" {
			t.Fatalf("losing acquire: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d acquires won, want 1", won)
	}
}

// TestShareLeaseBreakExpired: a break of an expired lease leaves it
// broken, not available (Lease Share follows Lease Container's table:
// "Break" on "Expired (A)" is "Broken (A)"; lease/doc.go, "Settled"): the
// old id can release it, and cannot renew it.
func TestShareLeaseBreakExpired(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, withClock(clock))
	s := e.mustShare("brokenexpired")
	lc, err := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr("00000000-0000-0000-0000-00000000000e")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(ctxBG, 15, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * time.Second)
	if st, _, _ := leaseState(t, s); st != "expired" {
		t.Fatalf("after 20 s of a 15 s lease: %s", st)
	}
	br, err := lc.Break(ctxBG, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(10))})
	if err != nil || deref(br.LeaseTime) != 0 {
		t.Fatalf("break an expired lease: time %v %v", deref(br.LeaseTime), err)
	}
	if st, status, _ := leaseState(t, s); st != "broken" || status != "unlocked" {
		t.Fatalf("after breaking an expired lease: %s %s", st, status)
	}
	_, err = lc.Renew(ctxBG, nil)
	wantCode(t, "renew the broken lease", err, "LeaseIsBrokenAndCannotBeRenewed")
	if _, err := lc.Release(ctxBG, nil); err != nil {
		t.Fatalf("release the broken lease with its id: %v", err)
	}
	if st, _, _ := leaseState(t, s); st != "available" {
		t.Fatalf("after release: %s", st)
	}
}
