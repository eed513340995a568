package azure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/blobshare/blobshare/blobstore"
)

var _ blobstore.Cloner = (*Store)(nil)

// copyPollMax bounds the wait between two looks at a pending copy.
const copyPollMax = time.Second

// CloneBlob is Copy Blob from src to dst within the container: the service
// copies the data, nothing passes through blobshare, and a block blob's
// copy keeps its committed block ids. cond is sent as the source's
// conditions, If-None-Match "*" as the destination's, so an existing dst
// is ErrPreconditionFailed. A copy within one account usually completes
// at once; a pending one is polled (Get Blob Properties) until it ends.
// A copy that fails or is abandoned (ctx done) is aborted and its
// destination deleted, so dst is either the whole clone or absent.
func (s *Store) CloneBlob(ctx context.Context, src, dst string, cond blobstore.Conditions) (blobstore.Info, error) {
	for _, k := range []string{src, dst} {
		if err := blobstore.ValidKey(k); err != nil {
			return blobstore.Info{}, err
		}
	}
	fail := func(err error) (blobstore.Info, error) {
		return blobstore.Info{}, fmt.Errorf("clone %q to %q: %w", src, dst, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	bc := s.blob(dst)
	resp, err := bc.StartCopyFromURL(ctx, s.blob(src).URL(), &blob.StartCopyFromURLOptions{
		SourceModifiedAccessConditions: &blob.SourceModifiedAccessConditions{
			SourceIfMatch:     etagPtr(cond.IfMatch),
			SourceIfNoneMatch: etagPtr(cond.IfNoneMatch),
		},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfNoneMatch: to(azcore.ETagAny),
		}},
	})
	if err != nil {
		return fail(s.copyError(ctx, src, err))
	}
	status := deref(resp.CopyStatus)
	var desc string
	wait := 10 * time.Millisecond
	for status == blob.CopyStatusTypePending {
		select {
		case <-ctx.Done():
			s.dropCopy(ctx, dst, deref(resp.CopyID))
			return fail(ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, copyPollMax)
		p, err := bc.GetProperties(ctx, nil)
		if err != nil {
			s.dropCopy(ctx, dst, deref(resp.CopyID))
			return fail(convert(err))
		}
		status, desc = deref(p.CopyStatus), deref(p.CopyStatusDescription)
	}
	if status != blob.CopyStatusTypeSuccess {
		s.dropCopy(ctx, dst, "")
		return fail(fmt.Errorf("the service's copy ended %s: %s", status, desc))
	}
	// Copy Blob answers no size: ask for the properties.
	info, err := s.Stat(ctx, dst)
	if err != nil {
		return fail(err)
	}
	return info, nil
}

// copyError maps a refused Copy Blob. A missing source may come back as
// 404 BlobNotFound or as CannotVerifyCopySource (the service could not
// read the source); the latter is ErrNotFound when the source is indeed
// gone.
func (s *Store) copyError(ctx context.Context, src string, err error) error {
	if bloberror.HasCode(err, bloberror.CannotVerifyCopySource) {
		if _, serr := s.Stat(ctx, src); errors.Is(serr, blobstore.ErrNotFound) {
			return fmt.Errorf("%w: %w", serr, err)
		}
	}
	return convert(err)
}

// dropCopy aborts a pending copy (when id is known) and deletes its
// destination; it runs even when ctx is done, as cleanup.
func (s *Store) dropCopy(ctx context.Context, dst, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if id != "" {
		_, _ = s.blob(dst).AbortCopyFromURL(ctx, id, nil)
	}
	_ = s.Delete(ctx, dst, blobstore.Conditions{})
}
