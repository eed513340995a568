// Package storetest is the conformance suite of what several processes
// sharing one blobsvc.Store database rely on (blobsvc/doc.go, "Several
// processes on one metadata database", "Store contract"): per-blob
// claims (exclusive, taken over from dead owners only, fencing the
// writes of a claim taken over) and the one-transaction row writes
// (ModifyBlob, ModifyContainer, also against writers under the claim),
// and the engine-neutral rest of the contract of one process (Contract,
// SoftDelete: sentinels, bytewise listing order, staged blocks, soft
// delete of blobs and containers). Every store runs Run with an Opener
// that starts "processes" on one fresh database per test: sqlstore's are
// stores of one blob.db, each with an owner session of its own lock
// table; a server engine's would be connections with their own owner
// sessions (blobsvc/pgstore: stores on one schema, each with a node of
// its own in the node registry).
package storetest

import (
	"testing"

	"github.com/blobshare/blobshare/blobsvc"
)

// Process is one process's store on the test's database, with its own
// owner session. Kill ends that session as a SIGKILL would (the others
// judge it dead at once) while Store keeps running, as a stopped process
// that wakes would.
type Process struct {
	Store blobsvc.Store
	Owner string // the owner session's id, as claims name it
	Kill  func()
}

// Opener starts a process on the test's database; every call within one
// test opens the same database.
type Opener func(t *testing.T) Process

// Run runs the suite; newDB returns, for each test, an Opener on a fresh
// database.
func Run(t *testing.T, newDB func(t *testing.T) Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"BlobClaims", testBlobClaims},
		{"BlobClaimRaces", testBlobClaimRaces},
		{"ModifyBlob", testModifyBlob},
		{"ModifyBlobAgainstClaims", testModifyAgainstClaims},
		{"Contract", testContract},
		{"SoftDelete", testSoftDelete},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newDB(t)) })
	}
}
