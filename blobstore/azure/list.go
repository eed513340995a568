package azure

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/blobshare/blobshare/blobstore"
)

// List is List Blobs (flat) with the prefix. Azure's continuation token is
// opaque, so the key marker is applied here: entries up to the marker are
// skipped, which costs a walk over them.
func (s *Store) List(ctx context.Context, prefix, marker string, limit int, fn func(blobstore.Info) error) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("list %q: %w", prefix, err)
	}
	opts := &container.ListBlobsFlatOptions{}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	pager := s.c.NewListBlobsFlatPager(opts)
	count := 0
	last := ""
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list %q: %w", prefix, convert(err))
		}
		for _, it := range page.Segment.BlobItems {
			name := deref(it.Name)
			if name <= marker || blobstore.ValidKey(name) != nil {
				continue
			}
			if limit > 0 && count == limit {
				return last, nil // one more exists
			}
			info := blobstore.Info{Key: name}
			if p := it.Properties; p != nil {
				info.Size = deref(p.ContentLength)
				info.ETag = string(deref(p.ETag))
				info.LastModified = deref(p.LastModified)
			}
			if err := fn(info); err != nil {
				return "", err
			}
			count++
			last = name
		}
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("list %q: %w", prefix, err)
		}
	}
	return "", nil
}
