package azure

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/blobshare/blobshare/blobstore"
)

// Delete is Delete Blob (with its snapshots) with If-Match / If-None-Match.
func (s *Store) Delete(ctx context.Context, key string, cond blobstore.Conditions) error {
	if err := blobstore.ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
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
