package azure

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/blobshare/blobshare/blobstore"
)

// Delete is Delete Blob (with its snapshots) with If-Match / If-None-Match;
// without conditions, of the committed version only (deleteCommitted).
func (s *Store) Delete(ctx context.Context, key string, cond blobstore.Conditions) error {
	if err := blobstore.ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	if cond == (blobstore.Conditions{}) {
		return s.deleteCommitted(ctx, key)
	}
	return s.deleteBlob(ctx, key, cond)
}

// deleteAttempts bounds deleteCommitted's races with commits.
const deleteAttempts = 8

// deleteCommitted is an unconditional Delete that leaves a key without a
// committed blob alone: Azurite treats a key with only staged blocks as a
// blob, and Delete Blob would discard the blocks a writer is staging for
// the key's first commit. So it deletes the committed version it finds
// (If-Match its ETag), and looks again if a commit came in between.
func (s *Store) deleteCommitted(ctx context.Context, key string) error {
	for range deleteAttempts {
		info, err := s.Stat(ctx, key)
		if errors.Is(err, blobstore.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		err = s.deleteBlob(ctx, key, blobstore.Conditions{IfMatch: info.ETag})
		if !errors.Is(err, blobstore.ErrPreconditionFailed) && !errors.Is(err, blobstore.ErrNotFound) {
			return err
		}
	}
	return s.deleteBlob(ctx, key, blobstore.Conditions{}) // commits keep coming: delete whatever is there
}

// deleteBlob is Delete Blob with cond.
func (s *Store) deleteBlob(ctx context.Context, key string, cond blobstore.Conditions) error {
	_, err := s.blob(key).Delete(ctx, &blob.DeleteOptions{
		DeleteSnapshots: to(blob.DeleteSnapshotsOptionTypeInclude),
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfMatch:     etagPtr(cond.IfMatch),
			IfNoneMatch: etagPtr(cond.IfNoneMatch),
		}},
	})
	err = convert(err)
	if errors.Is(err, blobstore.ErrNotFound) && cond.IfMatch == "" {
		return nil
	}
	if errors.Is(err, blobstore.ErrPreconditionFailed) && cond.IfMatch != "" {
		// Azurite answers 412 to If-Match on a missing blob; the
		// contract says ErrNotFound then.
		if _, serr := s.Stat(ctx, key); errors.Is(serr, blobstore.ErrNotFound) {
			return fmt.Errorf("delete %q: %w", key, serr)
		}
	}
	if err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	return nil
}

func to[T any](v T) *T { return &v }
