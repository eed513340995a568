package azure

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/blobshare/blobshare/blobstore"
)

// commitAttempts bounds how often CommitBlocks stages discarded blocks
// again because other commits keep winning in between.
const commitAttempts = 8

// CommitBlocks is Put Block List with every id as "Latest" (staged first,
// then committed) and the conditions as If-Match / If-None-Match. Put Block
// List does not return the new size, so a Get Block List (all blocks)
// first resolves the ids the way the commit will and sums their sizes; it
// also reports unknown ids as ErrNotFound before anything is sent. An id
// missing because another writer's commit discarded it is staged again
// from the copy this Store kept (keptBlocks).
func (s *Store) CommitBlocks(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return blobstore.Info{}, err
	}
	for _, id := range ids {
		if err := blobstore.ValidBlockID(id); err != nil {
			return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
	}
	for attempt := 1; ; attempt++ {
		info, err := s.commitOnce(ctx, key, ids, cond)
		if err == nil {
			s.kept.committed(key, ids)
			return info, nil
		}
		if bloberror.HasCode(err, bloberror.InvalidBlockList) && s.kept.any(key, ids) && attempt < commitAttempts {
			continue // discarded between Get and Put Block List: stage again
		}
		return blobstore.Info{}, err
	}
}

// commitOnce is one Get Block List, the stagings again of missing blocks
// this Store kept, and one Put Block List.
func (s *Store) commitOnce(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	bc := s.blob(key)
	sizes := map[string]int64{}
	if len(ids) > 0 {
		bl, err := bc.GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
		if err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
			return blobstore.Info{}, fmt.Errorf("commit %q: get block list: %w", key, convert(err))
		}
		// Uncommitted last, so that a staged id shadows a committed one.
		for _, list := range [][]*blockblob.Block{bl.CommittedBlocks, bl.UncommittedBlocks} {
			for _, b := range list {
				id, err := decodeID(deref(b.Name))
				if err != nil {
					continue // not ours; a commit cannot name it anyway
				}
				sizes[id] = deref(b.Size)
			}
		}
	}
	encoded := make([]string, len(ids))
	var size int64
	for i, id := range ids {
		n, ok := sizes[id]
		if !ok {
			var err error
			if n, ok, err = s.restage(ctx, key, id); err != nil {
				return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
			}
			sizes[id] = n
		}
		if !ok {
			// Conditions come first, as in Azure: a writer that lost a
			// race (whose staged blocks the winner's commit discarded)
			// must see ErrPreconditionFailed, not a missing block.
			if err := s.checkNow(ctx, key, cond); err != nil {
				return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
			}
			return blobstore.Info{}, fmt.Errorf("commit %q: block %s neither staged nor committed: %w", key, id, blobstore.ErrNotFound)
		}
		size += n
		encoded[i] = encodeID(id)
	}
	resp, err := bc.CommitBlockList(ctx, encoded, &blockblob.CommitBlockListOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfMatch:     etagPtr(cond.IfMatch),
			IfNoneMatch: etagPtr(cond.IfNoneMatch),
		}},
	})
	if err != nil {
		err = convert(err)
		if cond.IfMatch != "" && errors.Is(err, blobstore.ErrNotFound) && !bloberror.HasCode(err, bloberror.InvalidBlockList) {
			// If-Match on a missing blob: the precondition fails.
			return blobstore.Info{}, fmt.Errorf("commit %q: If-Match on a missing blob (%v): %w", key, err, blobstore.ErrPreconditionFailed)
		}
		if bloberror.HasCode(err, bloberror.InvalidBlockList) {
			// Blocks vanished since Get Block List: another commit won
			// and discarded them. Report the lost race as such.
			if cerr := s.checkNow(ctx, key, cond); errors.Is(cerr, blobstore.ErrPreconditionFailed) {
				return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, cerr)
			}
		}
		return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
	}
	return blobstore.Info{
		Key:          key,
		Size:         size,
		ETag:         string(deref(resp.ETag)),
		LastModified: deref(resp.LastModified),
	}, nil
}

// checkNow evaluates cond against the blob's current properties. (Get
// Block List cannot tell: Azurite reports an ETag for a blob that has only
// uncommitted blocks.)
func (s *Store) checkNow(ctx context.Context, key string, cond blobstore.Conditions) error {
	if cond == (blobstore.Conditions{}) {
		return nil
	}
	info, err := s.Stat(ctx, key)
	if err != nil && !errors.Is(err, blobstore.ErrNotFound) {
		return err
	}
	return cond.Check(err == nil, info.ETag)
}
