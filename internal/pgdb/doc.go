// Package pgdb is what blobshare's PostgreSQL stores share: opening a
// pgxpool, numbered schema migrations recorded in a version row, driver
// errors classified once into sentinels, and the retry loop for the
// transient ones.
//
// Migrations: each store names its part ("queue", "table") and lists its
// migrations in order; meta_schema(part, version) records how many have
// run. Migrate runs the missing ones in one transaction that first takes
// an advisory transaction lock on (schema, "migrations"), so two
// processes opening one fresh schema at once do not both create it
// (PostgreSQL's DDL is transactional: a migration is wholly applied or
// not at all). A schema recorded at a version newer than the process
// knows is ErrIncompatibleSchema: an older node never runs on a schema it
// does not understand. Migrations must keep the previous version working
// (a running older node may share the database until it is upgraded).
//
// Errors: Classify turns SQLSTATE 40001 (serialization_failure) and
// 40P01 (deadlock_detected) into ErrRetry and 23505 into
// ErrUniqueViolation, keeping the driver's error in the chain; Retry
// reruns a transaction on ErrRetry with jittered backoff (1 ms doubling
// to 50 ms, at most MaxAttempts runs). Everything else is returned
// wrapped, at once.
//
// Keys: Key hashes strings (length-prefixed, so ("ab","c") ≠ ("a","bc"))
// into the signed 64-bit key space of pg_advisory_xact_lock. A collision
// only makes two keys share one lock.
package pgdb
