package lockstest

import (
	"testing"

	"github.com/blobshare/blobshare/locks"
)

// Process is one process's Table on the test's database: its own owner
// session, its own connections. Kill ends the process as a SIGKILL would:
// its owner session is dead to the others at once (they reap its handles),
// its rows stay, and its Table is not used again (the Opener releases its
// connections without the cleanup a Close would run).
type Process struct {
	Table *locks.Table
	Kill  func(t testing.TB)
}

// Opener opens a new process (a Table with opts) on one database: every
// call of one Opener opens the same database. The Table is closed when t
// ends, and the Opener fails t if the engine's lock audit caught a read
// for update without its key lock (locks/keylock.go).
type Opener func(t *testing.T, opts locks.Options) Process

// Run runs the lock table's conformance suite (doc.go); newDB returns an
// Opener on a fresh, empty database each time it is called. Tests that
// need one database call it once and open several Tables on it.
func Run(t *testing.T, newDB func(t *testing.T) Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, func(*testing.T) Opener)
	}{
		// locking.md §1: share modes, REST checks, read-only (spec.go).
		{"SharingCheckRows", testSharingCheckRows},
		{"SharingWorkedExamples", testSharingWorkedExamples},
		{"ShareModeRESTMatrix", testShareModeRESTMatrix},
		{"RESTOneDirection", testRESTOneDirection},
		{"LeaseAcquireVsHandles", testLeaseAcquireVsHandles},
		{"ReadOnlyREST", testReadOnlyREST},
		// §2: delete-pending and delete-on-close (spec.go).
		{"DispositionTable", testDispositionTable},
		{"Undelete", testUndelete},
		{"WhilePending", testWhilePending},
		{"UnlinkOpen", testUnlinkOpen},
		{"UnlinkLeavesNoState", testUnlinkLeavesNoState},
		{"OpenReadOnly", testOpenReadOnly},
		{"OpenCreated", testOpenCreated},
		// §3, §4: byte-range locks, leases, check order (spec2.go).
		{"ByteRangeConflictTable", testByteRangeConflictTable},
		{"ByteRangeModel", testByteRangeModel},
		{"RESTVsByteRangeLocks", testRESTVsByteRangeLocks},
		{"LeaseStateMachine", testLeaseStateMachine},
		{"LeaseVsREST", testLeaseVsREST},
		{"LeaseVsOpens", testLeaseVsOpens},
		{"RESTCheckOrder", testRESTCheckOrder},
		// Listings, force-close, the I/O paths (listing.go).
		{"ForceCloseAfterDeadOwner", testForceCloseAfterDeadOwner},
		{"CheckRESTLease", testCheckRESTLease},
		{"CheckIOPaths", testCheckIOPaths},
		// Several processes, POSIX and flock locks, bad input (misc.go).
		{"ConcurrentOpensNeverConflict", testConcurrentOpensNeverConflict},
		{"BadInput", testBadInput},
		{"POSIXLocks", testPOSIXLocks},
		{"Flock", testFlock},
		{"HandleListingAndForceClose", testHandleListingAndForceClose},
		{"LiveOwnersStay", testLiveOwnersStay},
		{"Lifecycle", testLifecycle},
		{"HandleLimit", testHandleLimit},
		{"SMBAndPOSIXLocksApart", testSMBAndPOSIXLocksApart},
		{"ConflictErrorNamesBlockers", testConflictErrorNamesBlockers},
		{"OnCommit", testOnCommit},
		{"CloseQuiet", testCloseQuiet},
		{"HandleOpen", testHandleOpen},
		// The randomized comparison with the reference model (model.go).
		{"RandomizedAgainstModel", testRandomizedAgainstModel},
		// K processes deciding at once, replayed on the model in the order
		// they decided (concurrent.go).
		{"ConcurrentAgainstModel", testConcurrentAgainstModel},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newDB) })
	}
}
