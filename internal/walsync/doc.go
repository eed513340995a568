// Package walsync makes the commits of a SQLite database in WAL mode with
// synchronous=NORMAL durable on demand, in groups: a request that must not
// be acknowledged before its commit survives a power cut calls Sync after
// the commit, and concurrent callers share one fsync of the -wal file.
//
// Why it is enough: with synchronous=NORMAL a COMMIT write()s its frames
// to the -wal file and returns without an fsync. An fsync of that file
// begun after the COMMIT returned makes them durable. Frames a checkpoint
// copied into the database file meanwhile are durable there (SQLite syncs
// the database file after every checkpoint, before the log may be
// restarted over them), and a missing -wal file means everything was
// checkpointed and synced when the last connection closed it.
//
// Why groups: the database has one writer at a time, so a commit that
// synced the log itself (synchronous=FULL) would hold the write lock over
// its fsync and concurrent writers would queue for one fsync each. With
// Sync the commits stay short and one fsync covers every caller that
// arrived before it started: a caller arriving while a sync runs waits
// for the next one, which the first of those waiters starts.
//
// The sync is fdatasync(2) on Linux, as SQLite's own: the frames and the
// log's size, not its times. SQLite writes the log over from its start
// after a checkpoint, so most syncs change no metadata the data needs and
// cost no journal commit of the file system, which on ext4 (ordered mode)
// would wait for the data every other writer has in flight: the block
// files 4 concurrent uploads are syncing.
package walsync
