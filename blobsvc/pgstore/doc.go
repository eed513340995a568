// Package pgstore is the PostgreSQL implementation of blobsvc.Store, for
// several blobshare gateways on one database: containers, blobs and
// snapshots (one JSON document per row, as in sqlstore), staged blocks,
// commit intents, per-blob claims, soft-deleted blobs and containers and
// the service properties, in the schema the connection string's
// search_path names (numbered migrations, part "blob", internal/pgdb).
// It implements the Store contract of blobsvc/doc.go exactly as sqlstore
// does, and runs the same conformance suite (blobsvc/storetest).
//
// # Atomicity across nodes
//
// Nothing relies on a process-wide lock; every decision is one statement
// or one transaction at READ COMMITTED:
//
//   - A claim (ClaimBlob) is a row of bs_blob_claims: INSERT … ON
//     CONFLICT DO NOTHING, so of two claimers on any nodes the second
//     waits on the unique index for the first's commit and then inserts
//     nothing. A claim whose owner is dead is taken over by an UPDATE
//     naming the holder's token: of two nodes taking over one dead
//     claim, the second's UPDATE waits for the first's row lock,
//     re-reads the row and changes nothing. A release deletes the row
//     only while it still has the releaser's token.
//   - Fencing: every write of a blob whose claim this store holds
//     (PutBlob, DeleteBlob, SoftDelete, DeleteSnapshot, PutIntent,
//     DeleteIntent, UpdateContainer) reads the claim's row FOR SHARE in
//     its transaction and writes nothing if the token is no longer its
//     own (blobsvc.ErrClaimLost). FOR SHARE conflicts with the takeover's
//     UPDATE, so no takeover commits between the check and the write.
//   - ModifyBlob and ModifyContainer take the claim's key in their own
//     transaction: they insert the claim row (ON CONFLICT DO NOTHING; a
//     row there is a held claim, blobsvc.ErrClaimHeld), check there is no
//     commit intent, read the row FOR NO KEY UPDATE, let fn decide,
//     write, and delete the claim row before committing. Meanwhile a ClaimBlob or
//     another modify of the blob on any node waits on the uncommitted
//     row, then proceeds and reads the row this transaction wrote — the
//     check and the write are one step against writers under the claim
//     too (storetest's ModifyBlobAgainstClaims). No other node ever sees
//     the row, so a crash mid-transaction leaves nothing behind.
//   - PutBlob and StageBlock read their container's row FOR KEY SHARE: a
//     Delete Container waits for them and then removes what they wrote.
//
// A claim whose release failed (the database was away), or whose INSERT
// may have committed though its answer was lost, would be held for good:
// its owner is alive. The store remembers its token and deletes the row
// at its next claim or modify, or within a second in the background
// (release.go).
//
// Serialization failures and deadlocks rerun the transaction
// (pgdb.Retry); those and an unreachable database are
// blobsvc.ErrServerBusy (503 ServerBusy, which clients retry).
//
// # Owners and liveness
//
// Claims and intents name their owner session: Options.Owners, on a
// gateway its node in the registry (internal/pgdb, *pgdb.Node: Owner is
// its id). An owner is alive while its row is there, its heartbeat has
// not expired on the database's clock, and its session advisory lock is
// held (pgdb.NodeAlive): a killed node's claims are taken over at once,
// a node frozen past its expiry is dead (and its writes fenced when it
// wakes), and a database restart, which frees every session lock, makes
// nobody dead by itself (a node's lock counts only once it has
// heartbeated since the server started). A probe that fails counts as
// alive.
//
// A node fences itself (Owners.Deciding, pgdb.ErrFenced) when its lock
// connection is lost or its last successful heartbeat was sent Expiry −
// Expiry/5 ago by its own clock: meanwhile ClaimBlob and every fenced
// write under a claim answer blobsvc.ErrServerBusy (meta.ErrUnavailable,
// 503 ServerBusy). A node that lost its session while the server ran on
// comes back under a new id, so its old claims and intents are a dead
// owner's, taken over or resolved by whichever node meets them first
// (itself included). ModifyBlob and ModifyContainer are not fenced: each
// is one transaction conditional on the rows it locks (its transient
// claim row never commits), so it is exact whoever runs it.
//
// # Time
//
// Claims record the database's clock. The Blob service's clock (lease
// expiry and break periods, Last-Modified, snapshot times) is Store.Now:
// local time plus the offset to the database's clock measured at Open,
// so nodes whose clocks disagree still agree on when a lease expires, to
// within a round trip. Times the service passes in (staged ages,
// soft-delete expiries) are stored as given.
//
// # The content store
//
// Rows name content by key in one content store, so every node on a
// database must open the same one: ContentStore records the first Blob
// node's --blob-backend in bs_service (without a key= credential), gives
// it to later nodes that name none, and refuses one that names another
// (ErrContentMismatch).
//
// # Types
//
// Names are text COLLATE "C" (listing order, prefixes and markers are
// bytewise, as on SQLite and Azure), times and sizes bigint, the service
// properties bytea, documents text (not jsonb, which rejects the \u0000
// a hidden container's name may put in a document). PostgreSQL's text
// holds no NUL byte, which hidden container names
// (blobsvc.HiddenContainer) have: columns store names through an escape
// (NUL → 0x01 0x01, 0x01 → 0x01 0x02) that is prefix-free and keeps the
// bytewise order and leaves every valid name as it is.
//
// Content commits need no fsync here: a PostgreSQL commit is durable
// (synchronous_commit), so the store is no blobsvc.DurableStore.
package pgstore
