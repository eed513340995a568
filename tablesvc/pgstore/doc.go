// Package pgstore is the PostgreSQL implementation of tablesvc.Store, for
// several blobshare gateways on one database: tables with their ACLs,
// entities and the service properties in the schema the connection
// string's search_path names (created by numbered migrations, part
// "table", see internal/pgdb).
//
// Schema: as sqlstore's, in PostgreSQL's types: tb_tables(name_lower
// PRIMARY KEY, name, acl JSON text); tb_entities(tbl, pk, rk, ts bigint
// 100 ns ticks, props bytea) with PRIMARY KEY (tbl, pk, rk); tb_service.
// Every key column is text COLLATE "C", so ORDER BY, ranges and
// continuations compare bytes — the ordinal order Azure's queries use —
// whatever the database's locale.
//
// # Writes: READ COMMITTED plus per-entity advisory locks, not SERIALIZABLE
//
// tablesvc.Store asks that each Write be serializable with every other
// Write on the table, across processes. Write runs fn at READ COMMITTED
// and makes it so with two-phase locking on the entities it touches: the
// first Tx.Get, Put or Delete of a key (table, PartitionKey, RowKey)
// takes pg_advisory_xact_lock on the key's 64-bit hash, as a statement of
// its own, before the statement that reads or writes the row — a READ
// COMMITTED statement takes its snapshot when it starts, so the read sees
// every commit of the key's previous holder. The locks are held to commit
// or rollback. The table's row is read FOR KEY SHARE, so Delete Table
// waits for running writes and a write after it finds no table.
//
// Deadlock freedom: a transaction waits only for keys greater than every
// key it holds; a key below one it holds is only tried
// (pg_try_advisory_xact_lock). When the try fails the transaction rolls
// back and runs fn again, taking every key it has learned first, in
// ascending order (one round trip, a pgx batch of one statement per key).
// The Service's writes touch one entity, or one partition's entities in a
// batch, so a second run is rare and a third rarer still; waits are in
// ascending key order, so no cycle can form.
//
// Why not SERIALIZABLE: it is exact without this bookkeeping and the
// contract lets fn run again, but PostgreSQL's SSI tracks reads with
// page- and relation-level predicate locks, so writers of unrelated
// entities fail each other: measured for the lock table's open/close on
// this kind of machine (../shared/spec/meta-engine.md §4.1), 1.25
// retries per operation on distinct keys and 3–9 on one hot key, p99 up
// to 738 ms. Per-key locks queue writers of one entity without retries
// and let writers of different entities run side by side. A
// serialization failure or deadlock (which this scheme should never see)
// is still classified and retried (internal/pgdb.Retry).
//
// Reads: Get is one statement (the table's and the entity's absence
// apart); Scan runs in one REPEATABLE READ READ ONLY transaction (one
// snapshot: a page never sees half a batch) through a cursor fetched 64
// rows at a time, each row decoded and yielded as it arrives, so a large
// table streams, and stopping early reads at most the rest of one fetch.
package pgstore
