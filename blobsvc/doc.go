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
// Store (package sqlstore: SQLite in --data; package pgstore: PostgreSQL,
// serve --meta postgres://…). Content lives in a
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
// Last writer wins by default. Every write that checks a condition or a
// lease (Put Blob, Put Block List, Put Block's row, properties, metadata,
// tags, tier, Lease Blob and Lease Container, deletes, undelete,
// snapshots, copies, append and page writes) holds its blob's claim (name
// "" for a container's) from its checks to the metadata write they guard,
// so an If-Match or a lease check and the write are one step: of two
// writers conditioned on the same ETag exactly one succeeds, in one
// process or several. Uploads stream into the content store before the
// claim is taken. A reader takes no claim: it reads the row and opens the
// content version it names under an in-process lock (the blob's stripe),
// then streams without it: a Get Blob streaming while a Put Blob replaces
// the blob returns the old version whole.
//
// # Several processes on one metadata database
//
// Two `blobshare serve` on one --data (and, on a server engine, nodes on
// one database) serve Blob side by side. A claim is the Store's
// (ClaimBlob): a row keyed by the blob, owned by the writing process's
// owner session (package locks: registered, heartbeating, a flock the
// kernel drops at SIGKILL; on PostgreSQL the process's node in the
// registry of internal/pgdb: heartbeats on the database's clock, a
// session lock the database drops when the process dies). lockBlob takes the in-process stripe, then
// the claim:
//
//  1. Claim. Free, it is taken at once; held by a dead owner, it is taken
//     over at once (Claim.From); held by a live owner, the writer lets
//     the stripe go and polls (1 ms doubling to 50 ms: no wake-up crosses
//     processes on SQLite; a waiting writer blocks no reader or writer of
//     its own process) until it is free, its request's context ends, or
//     ClaimWait (30 s) passes: ErrServerBusy, 503 ServerBusy, which
//     clients retry.
//  2. Resolve. A commit intent of the blob found under the claim is no
//     commit in progress (its writer would hold the claim): its writer
//     died, or its request ended between intent and row. It is finished
//     (the content store's version is no longer the row's: the intent
//     becomes the row) or dropped, whoever wrote it (resolveIntent).
//  3. Check the conditions and the lease against the row read now.
//  4. Commit the content (a commit of content: intent first, then the
//     content store's commit, then the row with the intent dropped in one
//     transaction).
//  5. Write the row; give the claim up.
//
// Writes that change only a row (Set Blob Properties and Metadata, Seal
// Append Blob, Lease Blob, a container's metadata, ACL and lease) are
// instead one transaction of the store (Store.ModifyBlob,
// ModifyContainer: the check and the write on one row, no other writer
// in between), which falls back to the claim when the blob is claimed or
// has a commit intent (modify.go): as fast as before claims (Set Blob
// Metadata 222 µs against 214–229 µs on the commit before, here; with
// the claim's three statements it took 0.9–1.0 ms).
//
// A live owner's commit in progress is never adopted: its intent is
// resolved only under its blob's claim, which its owner holds while it
// lives. Recover (at start) lists the intents of dead owners only and
// resolves each under its claim, so a process starting beside a running
// one touches nothing of the running one's. A reader that opens a content
// version other than its row's (another process committed content between
// the two) reads again, and if the blob's claim is free or dead it
// resolves the intent itself: a blob whose writer was killed after its
// content commit reads whole at once, not only after its next write. A
// reader meanwhile beside a live writer held between content and row (a
// stopped process) answers 500 after a few tries: the old content is gone
// and the new not yet the blob's.
//
// Fencing: every write the Store makes of a blob whose claim it holds
// checks, in its own transaction, that the claim is still its own, so a
// process judged dead (SIGSTOP past its session's expiry) whose claim was
// taken over writes no row when it wakes (ErrClaimLost, an internal
// error to its client). Its content-store commit is not fenced: a
// process stopped between intent and content commit for longer than its
// session lives may commit content after another resolved its intent;
// the row then names the older content version and readers see them
// apart (ErrContentMismatch) until the blob's next write.
//
// # Store contract
//
// The Store names no engine: blobsvc/pgstore implements it on PostgreSQL
// as sqlstore does on SQLite. Each method is atomic (one statement or one
// transaction); the claim is a row whose unique key makes two claimers
// exclusive (INSERT ... ON CONFLICT DO NOTHING, then a takeover UPDATE
// naming the dead holder's token); the Store judges owners' liveness
// (sqlstore: the lock table's; pgstore: the node registry's, whose
// ModifyBlob takes the claim's key in its transaction); a Store's writes of a blob it holds the
// claim of check the claim's token in their transaction; its reads see
// every commit made before they start. Nothing relies on a process-wide
// lock of the database. Package storetest is this contract as a
// conformance suite every store runs (TestConformance of sqlstore and
// pgstore).
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
