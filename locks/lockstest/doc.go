// Package lockstest is the conformance suite of package locks: the rules
// of ../shared/spec/locking.md as every engine under a locks.Table must
// keep them, run through real Tables on a real database, several of them
// ("processes", each with its own owner session) on one database where the
// rule is about processes. An engine runs Run with a function that returns,
// for each test, an Opener on a fresh database (locks/lockstest_test.go
// runs it on SQLite; a second engine's test file is a few lines like it).
//
//   - spec.go: §1 the MS-FSA sharing check, share modes against REST calls,
//     lease acquire against handles, ReadOnly; §2 delete-pending,
//     delete-on-close, unlink of open files, opens of read-only and
//     created files.
//   - spec2.go: §3 byte-range locks (the conflict table, a model of MS-FSA
//     lock and unlock, REST against locks; zero-length requests), §4 the
//     file lease state machine and its checks, the check order.
//   - listing.go, misc.go: handle listings and force-close (also of a dead
//     owner's handles), the I/O paths, POSIX and flock locks, handle
//     limits, bad input, OnCommit, CloseQuiet, HandleOpen, and concurrent
//     opens from two processes that must never coexist in conflict.
//   - model.go: a reference model written from the spec text, and the
//     randomized comparison of the Table (two processes) with it.
//   - concurrent.go: K processes deciding at once on a few files, each
//     outcome checked against the model replayed in the order the
//     decisions took (a position taken inside each decision's
//     transaction, under its file's key lock): the check that an engine
//     without SQLite's writer lock still decides one file at a time
//     (../shared/spec/meta-engine.md §3.9).
//
// The tests moved here from package locks unchanged in what they assert;
// what reads SQLite itself (schema, reader pool, Peek's connections, the
// owners' flock files and processes, checkpoints) stays in package locks,
// SQLite-only by name. The tests of SMB caching (caching_test.go,
// smbcache_test.go) are not in the suite yet.
package lockstest
