// Package local is the default blobstore backend: blobs in a local
// directory, crash-safe, shareable by several processes.
//
// # Layout
//
//	<dir>/FORMAT                 "blobshare local blobstore v1"
//	<dir>/keys/<escaped key>/    one directory per key; bytes outside
//	                             [A-Za-z0-9_.-] of the key become %XX;
//	                             keys too long for that get "#<sha256>"
//	    m                        committed manifest (text: ETag, time,
//	                             block lines with id, size and file name;
//	                             see manifest.go)
//	    lock                     flock target serialising commits
//	    b-<random>               committed block data, one file per staging
//	    s-<block id>             a staged block, not yet committed
//	    t-<random>, mt-<random>  a block or manifest being written
//
// # Writes
//
// Nothing is overwritten in place. StageBlock streams into a t- file,
// asks the kernel to start writing it back (sync_file_range, no waiting)
// and renames it to s-<id> (replacing an earlier staging of the id).
// CommitBlocks, under the key lock, checks the conditions against the
// current manifest, hard-links each staged block it names to a fresh
// b-<random> name (no data copy; committed ids reuse their b- file), then
// runs one round of fsyncs at once: those new block files (their
// writeback is mostly done by then), the key directory (so the links are
// durable before anything names them) and the new manifest, written to
// an mt- file that nothing names yet. Then it renames the manifest over m
// and fsyncs the directory again. Concurrent fsyncs share journal
// commits; one after the other, each cost a journal commit of its own
// under the key lock, and on ext4 in ordered mode each such commit waits
// for the data other writers have in flight. Every commit gets a new
// random ETag. Only then are the consumed s- names and the blocks the old
// version used and the new one does not removed.
//
// StageBlockDurable (blobstore.DurableStager) is StageBlock for a block
// that is acknowledged before any commit names it (a Blob Put Block, a
// FileREST Put Range): it takes no lock, so concurrent writers' data
// syncs overlap (4 writers each fsyncing 4 MiB reach about the disk's
// buffered bandwidth; one after the other, a quarter of it). It gives the
// t- file its s- name first, with link(2), and then fsyncs the file and
// the key directory at once: one round where syncing the data, renaming
// and syncing the directory took two, one after the other. Until the
// round ends the name may cover torn data, which is safe only because
// the name is new: link fails on an existing staging of the id (whose
// bytes may be acknowledged), and such a restaging syncs its data first
// and renames after. Nobody learns of a block before its stage returns,
// so a crash in between leaves an unreferenced staging that garbage
// collection removes. The commit that names the block then finds its
// data clean: its fsync of the new link is a metadata journal commit.
//
// Deferring the block fsync from StageBlock to the commit keeps the disk
// busy while the next block is staged; fsyncing each 4 MiB block as it was
// staged made sequential writes about a third slower than a plain file
// copy.
//
// A crash at any point leaves m naming the old version or the new one,
// complete: block data is synced before a manifest that references it can
// become durable. Crash leftovers (t-, mt-, s-, unreferenced b- files) are
// removed by CollectGarbage.
//
// # Concurrency
//
// The key lock is an in-process, context-aware mutex per key plus flock(2)
// on the key's lock file, so several processes may share one directory.
// Conditions are checked under that lock. Garbage collection removes empty
// key directories together with their lock file while holding the lock;
// whoever locks checks afterwards that the path still names the inode it
// locked, and starts over otherwise. Staging takes no lock. Waiting for
// a goroutine of this process honours the context; waiting for another
// process (flock) does not, but such waits last one commit (a few
// fsyncs).
//
// # Reads
//
// Stat, Blocks and ReadRange read m without a lock (the rename is atomic).
// ReadRange opens the file of every block overlapping the range before
// returning, so the version stays readable through the open fds even when
// later commits or garbage collection unlink its blocks (snapshot
// isolation); if a block is already gone when opened, a commit came in
// between and ReadRange starts over with the new manifest. A range over
// hundreds of blocks opens only the blocks it covers; each fd is closed as
// soon as it is read. Reads use pread, so readers share nothing; the
// reader implements io.WriterTo with a pooled 1 MiB buffer, and StageBlock
// copies through the same pool.
//
// # Traps
//
// List reads the whole keys directory on every call; it is meant for
// garbage collection and tools, not for hot paths; hashed key directories
// cost it a manifest read each even when the prefix does not match.
// Staged blocks are not discarded by a commit; CollectGarbage removes them
// once older than its olderThan argument, which must exceed the longest
// stage-to-commit delay of any writer.
//
// A ReadRange over a whole blob holds one fd per block until the reader
// gets there (a 1 GiB blob of 4 MiB blocks: 256 fds); Go raises the soft
// RLIMIT_NOFILE to the hard limit at start, so this is rarely a concern,
// but many readers of huge blobs at once add up.
//
// Blocks staged with StageBlock are not durable until a commit names
// them: after a power loss a staging may be gone, which only matters to a
// writer that also survived, and it would have to restage anyway. Blocks
// staged with StageBlockDurable are durable when it returns.
//
// If the manifest rename succeeds but the directory fsync after it fails,
// CommitBlocks returns an error although readers may already see the new
// version; it keeps every block either version names. Garbage collection
// leaves a key whose manifest cannot be parsed alone (GCReport.Skipped).
package local
