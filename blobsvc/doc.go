// Package blobsvc is the Azure Blob service's semantics, without HTTP:
// containers (metadata, ACLs, leases), block blobs with their committed
// and uncommitted block lists, append blobs, page blobs, snapshots,
// synchronous copies, index tags, ETags, the conditional headers
// (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since) and
// the lease state machine of blobs and containers.
//
// # Content layout
//
// A block blob's content-store blocks are its client blocks (each under a
// fresh store id). An append blob's are its appended blocks. A page
// blob's are its written 4 MiB chunks in index order (unwritten chunks
// read as zeros; page.go). A snapshot's content is a streamed copy under
// its own key.
//
// # Layers
//
// Metadata (containers, blob properties, block lists, leases) lives in a
// Store (package sqlstore: SQLite in --data). Content lives in a
// blobstore.Store under a key derived from the container and blob name;
// each client block is staged there under a fresh content-store block
// id, so re-staging a client id never disturbs a committed block of the
// same id. A commit (Put Blob, Put Block List, Append Block, Put Page)
// records the new metadata row as an intent, commits the content, then
// writes the row (dropping the intent in the same transaction); Recover
// finishes or drops what a crash left in between.
//
// # Durability
//
// What is acknowledged survives a power cut, not only a crash of the
// process. A Put Block's content is staged durably
// (blobstore.StageBlockDurable: the local store fsyncs the block and its
// name, with no lock held, so 4 blocks in flight sync at once) and its
// row is durable before the answer: the metadata store commits with
// synchronous=NORMAL (no fsync while a transaction holds the one writer)
// and the service then calls its Sync (DurableStore), which syncs the
// log once for every request that committed before it started. A commit
// of content (Put Blob, Put Block List, Append Block, Put Page) syncs the
// log the same way after its row; the content store's commit is durable
// already.
//
// # Concurrency
//
// Last writer wins by default. Writers of one blob are serialised by a
// striped in-process lock held from their condition and lease checks to
// their metadata write, so an If-Match or a lease check and the write it
// guards are one step: of two writers conditioned on the same ETag exactly
// one succeeds. Uploads stream into the content store before the lock is
// taken. A reader holds the stripe shared only while it reads the row and
// opens the content version it names, then streams without it: a Get
// Blob streaming while a Put Blob replaces the blob returns the old
// version whole. One process owns a metadata database: the writer claim
// below makes sure of it.
//
// # One writer per metadata database
//
// The in-process lock serialises only one process's writers, and a
// commit's intent (see Recover) says nothing of who is still committing
// it, so two processes on one blob.db (two `blobshare serve` on one
// --data, which the command line allows) would both win If-Match races,
// and the second one's recovery would resolve the first one's commits in
// flight. The metadata store (blobsvc/sqlstore) therefore has a writer
// claim owned by an owner session of package locks — the one liveness the
// lock table already keeps (registered, heartbeating, a flock the kernel
// drops at SIGKILL) — and serve takes it before it recovers or serves:
//
//   - a claim whose owner is dead (killed, closed, or its heartbeat
//     expired) is free at once: the next serve takes it, no clean-up, no
//     stale file;
//   - commit intents name their owner; Intents, hence Recover, runs only
//     under the claim and lists only dead owners' intents, so a live
//     owner's commit in progress is never rolled back or forward;
//   - every write of a claiming store checks the claim in its own
//     transaction: a store whose claim was taken over (its session
//     expired, SIGSTOP past the expiry) writes nothing any more
//     (sqlstore.ErrClaimLost, an internal error to the client) instead of
//     writing beside the new holder. It does not claim again by itself,
//     even when nobody took over: its commits in flight belong to its
//     old, dead session, which only a restart's recovery resolves.
//
// A second serve whose Blob service cannot take the claim fails at start
// with one line naming the holder's pid (and --blob-addr off to serve the
// rest beside it). Not waiting: serve would then sit silent on a port
// that answers nothing, with no end in sight (the holder may serve for
// weeks), and whoever started it would never learn why. Not serving
// read-only: every Blob read path would have to learn a third answer, and
// a client writing to it would get errors for the whole life of the
// process instead of one line at start; a refusal at start loses nothing,
// and serve serves what its flags say or nothing (cli-contract.md).
//
// # Leases
//
// Lease is package lease's one timed-lease machine (shared with
// containers and shares): Azure's Lease Blob table (acquire, renew,
// change, release, break; available, leased, expired, breaking, broken),
// with the error codes lease/doc.go settles. Expired
// and broken are derived from stored times at each request with the
// injected clock, so no timer runs and tests move time explicitly. Lease
// operations never change the ETag or Last-Modified. A write (one that
// changes the blob, Put Block, Set Blob Tags) makes a broken or expired
// lease available and forgets its id
// (Lease.AfterWrite: "Write, no lease specified" on Broken (A) and Expired
// (A) is "Available, write succeeds", and "the lease ID is maintained by
// the Blob service until the blob is modified or leased again"); a break
// of an expired lease breaks it ("Broken (A)"). A lease id on a write that
// would create the blob is ErrLeaseNotPresent: there is no lease to hold.
//
// # Soft delete
//
// Under the service's DeleteRetentionPolicy (DeletePolicy, read from the
// stored service properties) Delete Blob moves the rows it deletes to the
// store's soft-deleted rows (Store.SoftDelete, one transaction), each
// with its deletion time and the end of its retention; a base blob's
// content is first copied off the key its name gives it (a new blob of
// that name writes there), snapshots keep their own keys. UndeleteBlob
// restores them, staging a base blob's content back under the name's key
// in the pieces its layout names (committed blocks, appended blocks, page
// chunks) so later writes find them; a blob written since keeps its place
// and the deleted one returns as a snapshot. A write that replaces a
// committed blob's content under the policy keeps the version it replaces
// as a soft-deleted snapshot (keepOverwritten, under the blob's lock,
// recorded once the write commits). Rows past their retention
// are purged when read and by PurgeDeleted (run with the content store's
// garbage collection, KeptStagedBlocks). Container soft delete
// (SetContainerRetention) copies each blob's content off its name's key,
// then keeps the container's rows under HiddenContainer(name, version)
// until RestoreContainer or the retention ends (softdelete.go,
// containerdelete.go).
//
// # Access tiers
//
// Set Blob Tier from Archive to an online tier starts a Rehydration
// (tier.go): the blob stays Archive until the service's rehydration time
// (SetRehydrateTime, DefaultRehydrateTime) has passed since the request,
// then takes the tier with that moment as its change time. As with
// leases, completion is derived from the stored time at each read
// (settle, in blobOrMissing and ListBlobs) with the injected clock: no
// timer runs and a write of the row stores the settled state.
//
// # Incremental copies
//
// StartIncrementalCopy records an Incremental Copy Blob pending on its
// destination (CopyInfo with Incremental and Status CopyPending);
// FinishIncrementalCopy, run by the caller after it answers, copies the
// source snapshot's pages through CopyBlob, snapshots the destination and
// records success or failure (incremental.go). The destination refuses
// every other write, read and lease (checkIncremental) except Delete
// Blob; the finishing writes carry the copy's CopyInfo and stop if the
// destination no longer waits for it (deleted or recopied meanwhile).
//
// # Page write history
//
// A page blob's PageState records its creation (Lineage), a generation
// counter and, per page range, the generation that last wrote or cleared
// it (Touched). A snapshot keeps the state it was taken with, so
// PageRangesDiff answers the pages touched since a snapshot's generation,
// written or cleared, as Azure does, without reading content; a blob
// stored before the history is compared by content.
//
// # Conditions
//
// Conditions.checkWrite refuses, before anything else, the combinations
// "Specifying conditional headers for Blob service operations" forbids on
// writes (ValidateWrite: ErrMultipleConditions), then evaluates the ETag
// header of a pair alone. Reads (checkRead) take any combination. A
// copy's unmet destination condition is ErrConditionNotMet, as any
// write's; its unmet source condition ErrSourceConditionNotMet
// (SourceCondition).
// Conditions.EncryptionKeySHA256 carries a request's customer-provided
// key hash, checked like a condition against the hash kept with the blob
// (Blob.EncryptionKeySHA256) by the reads, snapshots and in-place writes;
// Put Blob, Put Block List, the copies and a new page blob record it
// instead (cpk.go).
package blobsvc
