// Package pgstore is the PostgreSQL implementation of msgqueue.Store, for
// several blobshare gateways on one database: queues, messages and the
// service properties in the schema the connection string's search_path
// names (numbered migrations, part "queue", see internal/pgdb).
//
// Every message change is one statement keyed by what the caller saw, as
// in sqlstore, and none relies on a lock held around a read: Claim
// updates only rows still visible and unexpired, Delete and Update only a
// row still carrying the caller's pop receipt (at READ COMMITTED a row
// changed by a concurrent commit is re-checked against the WHERE clause
// before it is changed). Claim picks its rows with FOR UPDATE SKIP
// LOCKED: without it, concurrent gets would queue on the same oldest rows
// and, once the first commits, find them taken and answer fewer messages
// than were visible. Insert reads the queue's row FOR KEY SHARE, so a
// Delete Queue waits for the put and then deletes its message too (a put
// that commits after the queue's deletion would otherwise leave a message
// behind for a queue created again under the name).
//
// # Time: the database's clock
//
// By default every time a message decision depends on is the database's
// clock, read inside the statement that decides (clock_timestamp(), in
// milliseconds, once per statement in a MATERIALIZED CTE): Claim, Delete
// and Update ignore the caller's clock function, Peek, Queue and Sweep
// the time passed, and Insert keeps the message's visibility timeout and
// TTL (NextVisible and Expires relative to Inserted) but starts them at
// the database's now. So gateways whose clocks disagree still agree on
// when a message becomes visible or expires (visibility timeouts, TTLs).
// The clock is read after the statement's snapshot is taken, so a put
// whose commit the statement sees was stamped no later than the
// statement's now: a get that waited behind a put sees the message
// (msgqueue.Store's ordering rule, across processes, with no mutex).
// Store.Now is a clock for the gateway's msgqueue.Service — local time
// plus the offset to the database measured at Open — so that the times
// Put answers match the stored ones to within a round trip; no decision
// depends on it.
//
// Options.CallerClock decides on the caller's times and clock instead,
// exactly as sqlstore does (a process mutex orders the clock reads of
// Insert, Claim, Delete and Update with their statements): that is how
// the conformance suite's injected clock drives visibility and TTL edges
// to the millisecond. Gateways on several hosts want the default.
//
// Types: every time and count is bigint (milliseconds since 1970), the
// sequence an identity column, names text COLLATE "C" (listing order and
// markers are bytewise, as Azure's), message text bytea (kept as sent).
package pgstore
