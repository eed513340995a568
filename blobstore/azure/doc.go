// Package azure is the blobstore backend on Azure Blob Storage (or
// Azurite), through the official SDK (azblob).
//
// # Mapping
//
// Each blobstore key is a block blob of that name in one container
// (Config.Container, created by New if missing):
//
//	StageBlock    Put Block (the block read into a pooled buffer of
//	              MemBlockLimit bytes, or spooled to an unlinked temp
//	              file when larger: the SDK needs a seekable body of
//	              known length to retry); a copy is kept until committed
//	CommitBlocks  Get Block List (all), Put Block again for kept blocks
//	              that are gone, then Put Block List with every id as
//	              "Latest" and If-Match / If-None-Match
//	Blocks        Get Block List (committed)
//	ReadRange     Get Blob with a Range header, read through the SDK's
//	              retry reader
//	Stat          Get Blob Properties
//	Delete        Delete Blob (snapshots included) with If-Match;
//	              without conditions, Get Blob Properties first and
//	              Delete Blob If-Match its ETag
//	List          List Blobs (flat) with the prefix
//	CloneBlob     Copy Blob within the container (blobstore.Cloner),
//	              source conditions as x-ms-source-if-match, the
//	              destination If-None-Match "*"; polled while pending
//
// Block ids: Azure requires every block id of a blob to have the same
// length and to be base64. blobshare ids (1–64 bytes of [A-Za-z0-9_-]) are
// padded with '.' to 64 bytes and base64-encoded; decoding trims the
// padding. Blocks with ids not written this way are reported as errors by
// Blocks and ignored by CommitBlocks.
//
// CloneBlob lets the service copy the data: nothing passes through
// blobshare. Azurite's copy of a block blob keeps the committed block ids
// and sizes (the conformance suite checks it), so block-list comparisons
// (fs's range diffs) work across a clone. Unlike the local backend's hard
// links the copy is stored (and billed) as data of its own; a copy that
// Azure completes asynchronously (pending) is polled, which Azurite,
// completing every copy at once, never exercises. A copy that fails or whose context ends is aborted
// and its destination deleted.
//
// Errors: convert is the one place that maps Azure error codes to
// blobstore.ErrNotFound, ErrPreconditionFailed, ErrInvalidKey and
// ErrInvalidRange, wrapping the *azcore.ResponseError as well so callers
// can still reach the status and code with errors.As (a commit and a
// clone also read a code or two of their own, to decide what to do).
//
// # Concurrency and consistency
//
// Azure evaluates the commit's conditions atomically, so of several
// commits conditioned on one ETag exactly one wins. Put Block List also
// discards the blob's other uncommitted blocks, those of every other
// writer of the blob, conditional or not: two Put Ranges into one file at
// once would make the second commit name blocks that no longer exist. So
// StageBlock keeps a copy of each block it staged (an unlinked temp file,
// keptBlocks) until a commit through this Store names it, and CommitBlocks
// stages a missing block again from its copy before Put Block List, and
// once more if Put Block List answers InvalidBlockList (another commit
// came in between; at most commitAttempts times). This works across
// processes too: each writer keeps and restages its own blocks. A missing
// block without a copy (never staged here, or kept longer than keptTTL)
// is ErrNotFound, after the conditions are evaluated against the blob's
// current properties so that the loser of a conditional race gets
// ErrPreconditionFailed.
//
// The copies cost a local write of every staged block and an open file
// each until their commit. They are bounded: at most keptMax bytes (1 GiB)
// in all, each for at most keptTTL (an hour) when never committed; a block
// staged past the bound is not kept, and fails its commit with ErrNotFound
// if another writer's commit discards it (a handle that stages a file of
// several GiB before committing it on close, while another writer commits
// the same file).
//
// Put Block List does not return the blob's size; CommitBlocks computes it
// from the block sizes Get Block List reported. A reader's Get Blob serves
// one version; if the connection breaks, the retry reader resumes with
// If-Match on that version's ETag and fails rather than mixing versions.
//
// # Traps
//
// A range starting at or past the end is answered 416 by Azure; ReadRange
// turns that into an empty reader (after a Stat, so a missing blob is
// still ErrNotFound). Azurite answers Get Block List for a blob with only
// uncommitted blocks with an ETag, real Azure without; Blocks falls back
// to Get Blob Properties whenever the committed list is empty. Azurite
// answers 412, real Azure may answer 404, to a conditional Delete of a
// missing blob; Delete checks which it is. Azurite also treats a key with
// only staged blocks as an existing blob, and Delete Blob (even with
// If-Match "*") discards those blocks; an unconditional Delete therefore
// deletes only a committed version it has seen (Get Blob Properties, then
// If-Match), so a writer staging a key's first commit keeps its blocks. List's marker is a key, not
// Azure's opaque continuation token, so List walks the prefix from its
// start and skips entries up to the marker. The service itself discards
// uncommitted blocks after a week, so this backend has no garbage
// collector (blobstore.CollectGarbage does nothing for it).
package azure
