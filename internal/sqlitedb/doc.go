// Package sqlitedb opens the SQLite databases of the services' stores
// (blobsvc/sqlstore, msgqueue/sqlstore) one way: a single writer
// connection, so writes queue in the process instead of meeting
// SQLITE_BUSY, and a pool of read-only connections beside it, both in WAL
// mode with synchronous=NORMAL and immediate write transactions.
//
// The lock table (package locks) keeps its own connections: it runs
// BEGIN and COMMIT itself on held connections.
package sqlitedb
