package blobstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// Errors every backend returns (wrapped with the key concerned).
var (
	// ErrNotFound: the blob (or a block a commit names) does not exist.
	// It matches io/fs.ErrNotExist too.
	ErrNotFound = notFound{}
	// ErrPreconditionFailed: an If-Match / If-None-Match condition failed.
	ErrPreconditionFailed = errors.New("blobstore: precondition failed")
	// ErrInvalidKey: the key or block id is not acceptable to the store.
	ErrInvalidKey = errors.New("blobstore: invalid key")
)

type notFound struct{}

func (notFound) Error() string        { return "blobstore: not found" }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// Info describes a committed blob.
type Info struct {
	Key          string
	Size         int64
	ETag         string // opaque; changes with every commit
	LastModified time.Time
}

// Block is one entry of a committed block list.
type Block struct {
	ID   string // opaque, 1 to 64 bytes of [A-Za-z0-9_-] (see ValidBlockID)
	Size int64
}

// Conditions guard a commit or delete. Zero value: unconditional.
type Conditions struct {
	IfMatch     string // commit only if the blob's current ETag is this
	IfNoneMatch string // "*": commit only if the blob does not exist
}

// Store is a blob backend. A blob is a committed list of blocks, as Azure
// block blobs are. Writers stage blocks and commit a new list in one atomic
// step; readers always see one committed version, never part of a commit.
// Blobs are never modified in place. All methods are safe for concurrent use,
// also by several processes sharing one backend.
//
// Keys must pass ValidKey and block ids ValidBlockID; anything else gets
// ErrInvalidKey. Every backend accepts every key ValidKey accepts.
//
// Block ids are scoped per key and chosen by the caller. One id names one
// payload: a new payload needs a fresh id (fs uses random or sequence ids).
// Reusing an id in a commit means "the block of that id", looked up first
// among the key's staged blocks and then in its committed list (Azure's
// "Latest" rule), so staging an id that is already committed shadows the
// committed block for the next commit. A block stays committable by the
// Store value that staged it until a commit through that Store names it,
// whatever other writers of the key commit meanwhile (Azure's Put Block
// List discards the blocks it does not name; the azure backend keeps a
// copy and stages it again). Blocks no commit ever names are collected
// eventually (CollectGarbage, or the service).
//
// Every method that is handed a done context returns an error matching
// ctx.Err() without doing the operation.
//
// Optimistic concurrency: read the ETag (Stat, Blocks or ReadRange), stage
// the new blocks, commit with If-Match. On ErrPreconditionFailed start
// over from reading; the staged blocks may be named again.
type Store interface {
	// StageBlock stores the block id for key from r (streamed, not
	// buffered whole) and returns its size. Staged blocks are invisible
	// until committed; staging the same id again replaces the staged data.
	// Blocks staged but never committed are collected eventually. An
	// empty block is allowed.
	StageBlock(ctx context.Context, key, blockID string, r io.Reader) (int64, error)

	// CommitBlocks makes blocks the blob's content, atomically: readers see
	// the old version or the new one, never a mix. Each id names a block
	// staged for key or a block of key's current committed list; an id may
	// appear more than once; an empty list commits an empty blob.
	// ErrPreconditionFailed if cond fails; ErrNotFound if an id is unknown
	// (nothing is committed then). Returns the new Info (new ETag).
	CommitBlocks(ctx context.Context, key string, blocks []string, cond Conditions) (Info, error)

	// Blocks returns the committed block list of key (ErrNotFound).
	Blocks(ctx context.Context, key string) ([]Block, Info, error)

	// ReadRange streams n bytes from offset off of the committed blob
	// (n < 0: to the end). The reader sees the version committed when
	// ReadRange was called even if a commit follows. The caller closes it.
	// The reader is bound to ctx: once ctx is done, reads fail.
	// A range past the end is cut short (off >= size gives an empty
	// reader); a negative off is ErrInvalidRange; ErrNotFound if the blob
	// is missing. The returned Info is the version being read.
	ReadRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, Info, error)

	// Stat returns the committed blob's Info (ErrNotFound).
	Stat(ctx context.Context, key string) (Info, error)

	// Delete removes the blob. Deleting a missing blob is not an error
	// unless cond.IfMatch is set (then ErrNotFound); a mismatching IfMatch
	// is ErrPreconditionFailed. Blocks staged for a key that has no
	// committed blob survive an unconditional Delete (a writer may be
	// staging the key's first commit); those of a committed blob may go
	// with it (Azure discards them).
	Delete(ctx context.Context, key string, cond Conditions) error

	// List calls fn for committed blobs whose key starts with prefix, in
	// key order (bytewise), starting after marker; it stops early when fn
	// returns an error (returned as is) or after limit blobs (limit <= 0:
	// no limit), and returns the marker to continue from ("" when done).
	// Pass the returned marker back with the same prefix to get the next
	// page. Blobs committed or deleted during a listing may or may not
	// appear.
	List(ctx context.Context, prefix, marker string, limit int, fn func(Info) error) (next string, err error)
}

// ErrInvalidRange: ReadRange was given a negative offset.
var ErrInvalidRange = errors.New("blobstore: invalid range")
