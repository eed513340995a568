// Package lease is the one Azure timed-lease state machine, for the
// leases of shares (Lease Share), containers (Lease Container) and blobs
// (Lease Blob): a lease of 15 to 60 seconds or infinite, which expires,
// and breaks over a break period. It has no database and no HTTP: the
// caller stores a Lease with the resource it guards and passes the time
// of its own clock, so expiry and breaks need no timer and tests move
// time explicitly.
//
//   - lease.go: State, Lease (the stored form: State, ID, Duration,
//     Expires, BreakAt; expired and broken are derived from the times),
//     Effective/StateAt/Active/Status/DurationName, AfterWrite, SameID.
//   - decide.go: Request, Decide (acquire, renew, change, release, break),
//     Options (NewID; ModifiedSinceExpiry for blobs).
//   - check.go: CheckWrite and CheckRead, the lease rule of an operation on
//     the leased resource.
//   - errors.go: Code, *Error (the one typed refusal: front ends map it
//     once, storagehttp.LeaseError) and the malformed-request sentinels.
//
// Callers: blobsvc (blobs and containers; its Lease is this Lease, stored
// in its JSON documents under the same field names) and fs (shares and
// share snapshots; stored in ns_share_state in the JSON form it always
// had, fs.storedLease). The FileREST file lease (infinite only, with SMB
// share modes) is another thing and stays in locks.
//
// # Flavours
//
// Shares and containers run the machine with zero Options. Blobs add
// one documented difference: a blob written after its lease expired or
// broke forgets the lease id (Lease.AfterWrite: Lease Blob's "the lease ID
// is maintained by the Blob service until the blob is modified or leased
// again"), and a renew of an expired lease whose blob was written since
// fails (Options.ModifiedSinceExpiry). A container keeps its expired lease
// through writes: Microsoft's own live lease suite (azure-sdk-for-net,
// microsoft-azure-api/Services/Storage/Test/Unit/DotNetCommon/Blob/
// LeaseTests.cs, run against the cloud tenant) has, for blobs, "renew an
// expired lease that has been modified" → 409
// LeaseIdMismatchWithLeaseOperation (BlobRenewLeaseStateTests) and, for
// containers, "Renew expired lease after write" (SetMetadata, then
// RenewLease) succeeding (ContainerRenewLeaseStateTests).
//
// No difference between a share's lease and a container's is documented:
// Lease Share has the same durations, actions and "any valid GUID string
// format" ids, and Azure Files answers with the Blob service's codes and
// words (the azfile recording TestNegativeShareBreakRenewLease, served by
// Windows-Azure-File: 409 LeaseIsBrokenAndCannotBeRenewed, "The lease ID
// matched, but the lease has been broken explicitly and cannot be
// renewed."). Operations on a share answer the …WithContainerOperation
// codes (Code.For).
//
// # Settled
//
// Before this package, locks/timedlease.go (shares) and blobsvc/lease.go
// (blobs, containers) answered these cases differently. Each is settled by
// Azure's evidence; "LeaseTests.cs" is the .NET suite named above.
//
//   - Renew on an available lease: shares answered 409
//     LeaseNotPresentWithLeaseOperation, blobs 409
//     LeaseIdMismatchWithLeaseOperation. Now the mismatch: LeaseTests.cs,
//     "renew a lease while in the available state" → Conflict,
//     LeaseIdMismatchWithLeaseOperation, for blobs and for containers
//     (also "renew a released lease").
//   - Release on an available lease: the same two codes; now the mismatch:
//     LeaseTests.cs, "release a lease when no lease is held" and "release a
//     released lease (using previous lease ID)" → Conflict,
//     LeaseIdMismatchWithLeaseOperation (blobs and containers).
//   - Acquire on a breaking lease with another or no proposed id: shares
//     answered LeaseIsBreakingAndCannotBeAcquired, blobs
//     LeaseAlreadyPresent. Now LeaseAlreadyPresent, and
//     LeaseIsBreakingAndCannotBeAcquired only for the holder's id:
//     LeaseTests.cs, "acquire a lease while breaking (different ID)" →
//     LeaseAlreadyPresent, "… (same ID)" →
//     LeaseIsBreakingAndCannotBeAcquired; its message begins "The lease ID
//     matched, but the lease is currently in breaking state".
//   - Change on a breaking lease with a wrong id: shares answered
//     LeaseIsBreakingAndCannotBeChanged, blobs
//     LeaseIdMismatchWithLeaseOperation. Now the mismatch: LeaseTests.cs,
//     "change a breaking lease (with wrong ID)" →
//     LeaseIdMismatchWithLeaseOperation ("The lease ID matched, but …
//     cannot be changed" is for the holder's id).
//   - Break on an expired lease: shares became available, blobs broken.
//     Now broken: Lease Blob's (and Lease Container's) table, rows
//     "Break, period=0" and "Break, period>0", column Expired (A): "Broken
//     (A)". Release with the old id then succeeds and renew is
//     LeaseIsBrokenAndCannotBeRenewed, as on any broken lease.
//   - An id sent on an operation while the lease is expired: shares
//     answered 412 LeaseNotPresentWithContainerOperation, blobs and
//     containers 412 LeaseLost. Now LeaseLost: Blob service error codes,
//     "LeaseLost | Precondition Failed (412) | A lease ID was specified,
//     but the lease for the blob/container has expired."
//   - Lease-id comparison: shares compared ignoring case, blobs exactly.
//     Now as GUIDs (SameID): x-ms-lease-id "can be specified in any valid
//     GUID string format" (Lease Blob, Lease Container, Lease Share), so
//     letter case, braces and hyphens do not make another id.
//   - Break without a period on a breaking lease that was infinite:
//     blobs kept the break under way, shares broke it at once. Now the
//     break under way stands. The rule "If this header does not appear
//     with a break operation, a fixed-duration lease breaks after the
//     remaining lease period elapses, and an infinite lease breaks
//     immediately" (x-ms-lease-break-period) names the lease's duration,
//     which a breaking lease no longer has: LeaseTests.cs reads
//     x-ms-lease-duration "while lease is breaking" as unspecified
//     (BlobLeaseStatusTest, ContainerLeaseStatusTest), so the remaining
//     lease period is the remaining break period. No recording shows the
//     case ("Break breaking lease (default break time)" asserts only
//     success); Azurite answers the same (LeaseBreakingState.break with no
//     period returns the state unchanged).
//
// The two machines agreed on every other state × action (TestDecideTable
// runs all of them for both flavours). The Azure SDK for Go's lease tests
// (azblob v1.8.3 and azfile v1.7.1, -run 'Test/.*Lease': 281 passed
// before and after the merge) assert no error codes for these cases.
package lease
