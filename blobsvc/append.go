package blobsvc

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/blobshare/blobshare/blobstore"
)

// Append blob errors.
var (
	// ErrInvalidBlobType: an operation of one blob type on a blob of
	// another (409 InvalidBlobType).
	ErrInvalidBlobType = errors.New("invalid blob type for the operation")
	// ErrMaxSizeCondition: x-ms-blob-condition-maxsize would be exceeded
	// (412 MaxBlobSizeConditionNotMet).
	ErrMaxSizeCondition = errors.New("max blob size condition not met")
	// ErrAppendPosCondition: x-ms-blob-condition-appendpos is not the
	// blob's length (412 AppendPositionConditionNotMet).
	ErrAppendPosCondition = errors.New("append position condition not met")
	// ErrBlockCountExceeded: an append past 50,000 committed blocks (409
	// BlockCountExceedsLimit).
	ErrBlockCountExceeded = errors.New("committed block count limit reached")
)

// AppendOptions are Append Block's inputs besides the body.
type AppendOptions struct {
	LeaseID    string
	Cond       Conditions
	MaxSize    *int64 // x-ms-blob-condition-maxsize
	AppendPos  *int64 // x-ms-blob-condition-appendpos
	ContentMD5 []byte
}

// AppendBlock appends r's bytes to an append blob as one new block:
// staged in the content store first (streamed), then, under the blob's
// lock and after the conditions, the lease and the append position and
// size checks, committed as the blob's block list plus this block. It
// returns the blob and the offset the block was appended at.
func (s *Service) AppendBlock(ctx context.Context, container, name string, r io.Reader, o AppendOptions) (Blob, int64, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, 0, err
	}
	// Azurite's order: existence (404 before any condition), type,
	// conditions, lease, block count, position, size.
	check := func(b Blob, n int64) error {
		if b.Type != AppendBlob {
			return fmt.Errorf("blob %s/%s is a %s: %w", container, name, b.Type, ErrInvalidBlobType)
		}
		if err := s.checkWrite(b, true, WriteOptions{LeaseID: o.LeaseID, Cond: o.Cond}, writeUpdate); err != nil {
			return err
		}
		if b.Sealed {
			return fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobSealed)
		}
		if o.AppendPos != nil && *o.AppendPos != b.Size {
			return fmt.Errorf("blob %s/%s: append position %d, length %d: %w", container, name, *o.AppendPos, b.Size, ErrAppendPosCondition)
		}
		if o.MaxSize != nil && b.Size+n > *o.MaxSize {
			return fmt.Errorf("blob %s/%s: %d+%d > max size %d: %w", container, name, b.Size, n, *o.MaxSize, ErrMaxSizeCondition)
		}
		if len(b.Blocks) >= MaxCommittedBlocks {
			return fmt.Errorf("blob %s/%s: %w", container, name, ErrBlockCountExceeded)
		}
		return nil
	}
	// Fail fast before reading the body.
	b, err := s.committedBlob(ctx, container, name)
	if err != nil {
		return Blob{}, 0, err
	}
	if err := check(b, 0); err != nil {
		return Blob{}, 0, err
	}
	var sum hash.Hash
	if o.ContentMD5 != nil {
		sum = md5.New()
		r = io.TeeReader(r, sum)
	}
	storeID := blobstore.NewBlockID()
	n, err := s.content.StageBlock(ctx, b.ContentKey, storeID, r)
	if err != nil {
		return Blob{}, 0, fmt.Errorf("blob %s/%s: append: %w", container, name, err)
	}
	if sum != nil && !equalBytes(sum.Sum(nil), o.ContentMD5) {
		return Blob{}, 0, fmt.Errorf("blob %s/%s: %w", container, name, ErrMD5Mismatch)
	}

	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, 0, err
	}
	defer unlock()
	b, err = s.committedBlob(ctx, container, name)
	if err != nil {
		return Blob{}, 0, err
	}
	if err := check(b, n); err != nil {
		return Blob{}, 0, err
	}
	ids := make([]string, 0, len(b.Blocks)+1)
	for _, blk := range b.Blocks {
		ids = append(ids, blk.StoreID)
	}
	ids = append(ids, storeID)
	offset := b.Size
	b.Blocks = append(b.Blocks, Block{StoreID: storeID, Size: n})
	b.Size += n
	b.ETag, b.LastModified = newETag(), s.Now()
	b.Lease = b.Lease.AfterWrite(b.LastModified)
	if err := s.commitContent(ctx, &b, ids, false); err != nil {
		return Blob{}, 0, err
	}
	return b, offset, nil
}

// committedBlob returns the committed blob or ErrBlobNotFound (no
// conditions evaluated on a missing blob).
func (s *Service) committedBlob(ctx context.Context, container, name string) (Blob, error) {
	b, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if !ok {
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	return b, nil
}

// ErrBlobSealed: Append Block on a sealed append blob (409 BlobIsSealed,
// the code azblob's TestSeal expects).
var ErrBlobSealed = errors.New("append blob is sealed")

// SealAppendBlob seals an append blob (Seal Append Blob): it takes no
// more appends. The conditions, lease and x-ms-blob-condition-appendpos
// are a write's; sealing changes the ETag and Last-Modified. Sealing a
// sealed blob succeeds.
func (s *Service) SealAppendBlob(ctx context.Context, container, name string, o AppendOptions) (Blob, error) {
	return s.updateBlobRow(ctx, container, name, WriteOptions{LeaseID: o.LeaseID, Cond: o.Cond}, func(b *Blob) error {
		if b.Type != AppendBlob {
			return fmt.Errorf("blob %s/%s is a %s: %w", container, name, b.Type, ErrInvalidBlobType)
		}
		if o.AppendPos != nil && *o.AppendPos != b.Size {
			return fmt.Errorf("blob %s/%s: append position %d, length %d: %w", container, name, *o.AppendPos, b.Size, ErrAppendPosCondition)
		}
		b.Sealed = true
		return nil
	})
}
