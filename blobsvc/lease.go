package blobsvc

import (
	"time"

	"github.com/blobshare/blobshare/lease"
)

// The lease of a blob or container is package lease's one timed-lease
// machine; these names keep blobsvc's API and its stored JSON (the
// fields of lease.Lease are the ones blobsvc always stored: State, ID,
// Duration, Expires, BreakAt).
type (
	Lease        = lease.Lease
	LeaseState   = lease.State
	LeaseAction  = lease.Action
	LeaseRequest = lease.Request
	LeaseResult  = lease.Result
)

const (
	LeaseAvailable = lease.Available
	LeaseLeased    = lease.Leased
	LeaseExpired   = lease.Expired
	LeaseBreaking  = lease.Breaking
	LeaseBroken    = lease.Broken

	LeaseAcquire = lease.Acquire
	LeaseRenew   = lease.Renew
	LeaseChange  = lease.Change
	LeaseRelease = lease.Release
	LeaseBreak   = lease.Break

	MinLeaseSeconds = lease.MinSeconds
	MaxLeaseSeconds = lease.MaxSeconds
	InfiniteLease   = lease.Infinite
	MaxBreakPeriod  = lease.MaxBreakPeriod
)

// checkWriteLease checks a write's x-ms-lease-id against the lease at
// now (lease.CheckWrite).
func checkWriteLease(l Lease, leaseID string, now time.Time) error {
	return lease.CheckWrite(l, leaseID, now)
}

// checkReadLease checks a read's optional x-ms-lease-id (lease.CheckRead).
func checkReadLease(l Lease, leaseID string, now time.Time) error {
	return lease.CheckRead(l, leaseID, now)
}
