// Package blobstore is where blobshare keeps file content: a small
// interface over block blobs, with a local directory backend (the default,
// package local) and an Azure Blob Storage backend (package azure), chosen
// by URL (package storeurl).
//
// # Model
//
// A blob is a committed list of blocks, as an Azure block blob is. A writer
// stages blocks (StageBlock, streamed) and then commits a list of block ids
// in one atomic step (CommitBlocks). The list may mix freshly staged ids
// and ids of the blob's current committed list, so rewriting part of a
// large file only uploads the changed blocks; reused blocks are never
// copied. Readers read byte ranges of the last committed version
// (ReadRange) and never see part of a commit: a reader keeps reading the
// version it opened even if commits follow.
//
// Every commit gets a new opaque ETag. Commits and deletes take Conditions
// (If-Match / If-None-Match) so that concurrent writers can do
// optimistic concurrency: read the ETag, stage, commit with If-Match, and
// retry from the start on ErrPreconditionFailed. Exactly one of several
// commits conditioned on the same ETag wins.
//
// # Keys and block ids
//
// ValidKey defines portable keys ("f/0000000000000042"); ValidBlockID
// defines block ids (1–64 bytes of [A-Za-z0-9_-]). Block ids are scoped per
// key and chosen by the caller; a fresh payload needs a fresh id
// (NewBlockID). See Store for how a staged id shadows a committed one.
//
// # Errors
//
// Backends return ErrNotFound (which also matches io/fs.ErrNotExist),
// ErrPreconditionFailed, ErrInvalidKey and ErrInvalidRange wrapped with the
// key concerned; match them with errors.Is. A done context gives an error
// matching ctx.Err().
//
// # Optional capabilities
//
// Extras live in separate interfaces found by type assertion, each with a
// package helper that falls back when absent (io/fs ReadDir style):
// GarbageCollector / CollectGarbage. Cloner (CloneBlob: a second key for a
// committed blob, without the data passing through blobshare) has no
// fallback: copying through the caller is what it exists to avoid, so a
// caller without it refuses the operation that needs it (fs: share
// snapshots). Put is a helper over any Store that streams a reader into
// fixed-size blocks and commits them.
//
// # Conformance
//
// Package storetest holds the suite every backend passes.
package blobstore
