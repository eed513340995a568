package blobstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"time"
)

// NewBlockID returns a fresh random block id (32 bytes of [A-Za-z0-9_-],
// 144 random bits), unique for all practical purposes.
func NewBlockID() string {
	var b [18]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// DefaultBlockSize is the block size Put uses when given 0.
const DefaultBlockSize = 4 << 20

// Put streams r into key as a new blob of blocks of blockSize bytes
// (0: DefaultBlockSize) with fresh ids, then commits them under cond. It
// never holds more than one block's worth of I/O in flight and never
// buffers r whole. On error nothing is committed (staged blocks are left
// for garbage collection).
func Put(ctx context.Context, s Store, key string, r io.Reader, blockSize int64, cond Conditions) (Info, error) {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	var ids []string
	for {
		id := NewBlockID()
		n, err := s.StageBlock(ctx, key, id, io.LimitReader(r, blockSize))
		if err != nil {
			return Info{}, fmt.Errorf("put %q: %w", key, err)
		}
		if n > 0 {
			ids = append(ids, id)
		}
		if n < blockSize {
			break
		}
	}
	return s.CommitBlocks(ctx, key, ids, cond)
}

// GCReport says what a garbage collection removed.
type GCReport struct {
	Keys          int   // keys whose directory or entry was examined
	StagedBlocks  int   // staged blocks never committed, removed
	OrphanBlocks  int   // committed-looking blocks no version references, removed
	TempFiles     int   // leftovers of interrupted writes, removed
	BytesFreed    int64 // sum of the removed files' sizes
	EmptyKeysGone int   // key directories or entries removed because empty
	Skipped       int   // keys left alone because their state is damaged
}

// GCOptions says what a garbage collection may remove.
type GCOptions struct {
	// OlderThan: staged blocks and temporary files modified less than
	// OlderThan ago are kept (they may belong to a writer at work).
	OlderThan time.Duration
	// KeepStaged, if set, names staged blocks that a later commit may
	// still reference however old they are (the Blob service's
	// uncommitted blocks, which outlive the process that staged them);
	// they are kept.
	KeepStaged func(blockID string) bool
}

// GarbageCollector is an optional Store capability: stores that keep
// uncommitted or unreferenced data themselves (the local backend) collect
// it on request. Stores whose service collects its own garbage (Azure
// discards uncommitted blocks after a week) do not implement it.
type GarbageCollector interface {
	// CollectGarbage removes staged blocks older than o.OlderThan that no
	// commit referenced and o.KeepStaged does not keep, blocks no
	// committed version references (orphans of crashed commits), and
	// temporary files older than o.OlderThan. It is safe to run while the
	// store is in use, also from another process; blocks being staged or
	// committed right now are never removed as long as o.OlderThan
	// exceeds the longest stage-to-commit delay.
	CollectGarbage(ctx context.Context, o GCOptions) (GCReport, error)
}

// CollectGarbage runs s's garbage collection if it has one
// (GarbageCollector); otherwise it does nothing and returns a zero report.
func CollectGarbage(ctx context.Context, s Store, o GCOptions) (GCReport, error) {
	if gc, ok := s.(GarbageCollector); ok {
		return gc.CollectGarbage(ctx, o)
	}
	if err := ctx.Err(); err != nil {
		return GCReport{}, err
	}
	return GCReport{}, nil
}

// Cloner is an optional Store capability: giving a committed blob a second
// key without the data passing through the caller. The local backend links
// the block files; the Azure backend has the service copy the blob within
// the account. fs uses it to keep a file's content for a share snapshot;
// a store without it cannot snapshot shares holding blob-backed files.
type Cloner interface {
	// CloneBlob makes dst a committed blob with src's current content and
	// block list (the same ids and sizes, in order), and returns dst's
	// Info. Later commits to src or its deletion leave dst as it is;
	// deleting dst releases what only dst kept. cond applies to src
	// (If-Match: clone only that version). dst must not exist
	// (ErrPreconditionFailed). Errors: ErrNotFound (src),
	// ErrPreconditionFailed, ErrInvalidKey.
	CloneBlob(ctx context.Context, src, dst string, cond Conditions) (Info, error)
}

// DurableStager is an optional Store capability: staging a block that is
// durable when the call returns, as a staged block (it survives a power
// cut, not only once a commit names it), so that a server may acknowledge
// it. The local backend syncs the block's data and its name before it
// returns; writers stage at once and their syncs overlap, where a sync at
// commit would make them wait in line for one another's.
type DurableStager interface {
	// StageBlockDurable is StageBlock, durable when it returns nil.
	StageBlockDurable(ctx context.Context, key, blockID string, r io.Reader) (int64, error)
}

// StageBlockDurable stages a block that is durable when it returns: with
// s's StageBlockDurable when s is a DurableStager, otherwise with
// StageBlock (a store without the capability, such as Azure, keeps a
// block durably when it answers Put Block).
func StageBlockDurable(ctx context.Context, s Store, key, blockID string, r io.Reader) (int64, error) {
	if d, ok := s.(DurableStager); ok {
		return d.StageBlockDurable(ctx, key, blockID, r)
	}
	return s.StageBlock(ctx, key, blockID, r)
}
