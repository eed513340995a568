// Package sqlstore is the SQLite implementation of tablesvc.Store: one
// database file (table.db in --data) holding tables with their ACLs,
// entities and the service properties.
//
// Schema: tb_tables(name_lower PRIMARY KEY, name as created, acl JSON);
// tb_entities(tbl = the table's lower-cased name, pk, rk, ts = Timestamp
// in 100 ns ticks since 0001-01-01, props = tablesvc.EncodeProps's
// compact binary form) with PRIMARY KEY (tbl, pk, rk) WITHOUT ROWID, so
// entities are stored in key order and every PartitionKey/RowKey range
// and continuation of a query is a range of the primary key;
// tb_service(k, v) for the service properties document.
//
// Writes: Write runs the Service's decision inside one transaction that
// sqlmeta.OpenStore opens with BEGIN IMMEDIATE, so SQLite's database-wide write
// lock is held from the transaction's first read to its commit — the
// ETag and existence checks read what the commit will overwrite, for
// every connection and every process on the file (busy_timeout 5 s lets
// a second process wait for the lock). Within a process writes go
// through one connection and are group-committed (groupcommit.go): the
// writes queued while a transaction runs share the next one, each in a
// savepoint of its own (but see below), answered after the COMMIT that
// holds it; queries
// and the table reads use a small pool in WAL mode beside it.
// synchronous=NORMAL in WAL mode: a process crash (SIGKILL) loses no
// committed transaction, and a batch is wholly applied or wholly absent.
//
// One-entity writes (tablesvc.SingleWriter) need no savepoint in a
// group: nothing to undo if they fail before their one change, and a
// failed change abandons the group. Insert Entity is one statement
// (tablesvc.Inserter: INSERT … ON CONFLICT DO NOTHING) instead of a read
// and a write.
//
// Reads: Get answers the table's and the entity's absence in one
// statement, run by the group-commit leader on the writer's connection
// (whose page cache survives its own commits) before the group's writes,
// so it sees exactly what was committed when it was queued (the price: a
// point read waits for the group ahead of it, and so, when another
// process holds SQLite's write lock, for that lock too, up to the busy
// timeout, where a reader connection would not); Scan runs on
// the reader pool in one read transaction (a consistent snapshot: a page
// never sees half of a batch) and decodes one row at a time as the
// caller asks for it. Statements are prepared once.
package sqlstore
