package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/blobshare/blobshare/blobstore"
)

// Stat is Get Blob Properties.
func (s *Store) Stat(ctx context.Context, key string) (blobstore.Info, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return blobstore.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blobstore.Info{}, fmt.Errorf("stat %q: %w", key, err)
	}
	p, err := s.blob(key).GetProperties(ctx, nil)
	if err != nil {
		return blobstore.Info{}, fmt.Errorf("stat %q: %w", key, convert(err))
	}
	return blobstore.Info{Key: key, Size: deref(p.ContentLength), ETag: string(deref(p.ETag)), LastModified: deref(p.LastModified)}, nil
}

// Blocks is Get Block List (committed).
func (s *Store) Blocks(ctx context.Context, key string) ([]blobstore.Block, blobstore.Info, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return nil, blobstore.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, blobstore.Info{}, fmt.Errorf("blocks %q: %w", key, err)
	}
	bl, err := s.blob(key).GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
	if err != nil {
		return nil, blobstore.Info{}, fmt.Errorf("blocks %q: %w", key, convert(err))
	}
	if len(bl.CommittedBlocks) == 0 {
		// An empty blob, or only uncommitted blocks (no blob yet), for
		// which Azure sends no ETag but Azurite does: ask the properties.
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, blobstore.Info{}, fmt.Errorf("blocks: %w", err)
		}
		return []blobstore.Block{}, info, nil
	}
	out := make([]blobstore.Block, 0, len(bl.CommittedBlocks))
	for _, b := range bl.CommittedBlocks {
		id, err := decodeID(deref(b.Name))
		if err != nil {
			return nil, blobstore.Info{}, fmt.Errorf("blocks %q: %w", key, err)
		}
		out = append(out, blobstore.Block{ID: id, Size: deref(b.Size)})
	}
	info := blobstore.Info{Key: key, Size: deref(bl.BlobContentLength), ETag: string(deref(bl.ETag)), LastModified: deref(bl.LastModified)}
	return out, info, nil
}

// ReadRange is a ranged Get Blob. One GET serves one version; should the
// connection break, the SDK's retry reader resumes with If-Match on the
// version's ETag, so a reader never mixes versions (it fails instead if
// the version is gone by then).
func (s *Store) ReadRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, blobstore.Info, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return nil, blobstore.Info{}, err
	}
	if off < 0 {
		return nil, blobstore.Info{}, fmt.Errorf("read %q at %d: %w", key, off, blobstore.ErrInvalidRange)
	}
	if n > math.MaxInt64-off {
		n = -1 // off+n would overflow: to the end
	}
	if err := ctx.Err(); err != nil {
		return nil, blobstore.Info{}, fmt.Errorf("read %q: %w", key, err)
	}
	empty := func() (io.ReadCloser, blobstore.Info, error) {
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, blobstore.Info{}, err
		}
		return io.NopCloser(strings.NewReader("")), info, nil
	}
	if n == 0 {
		return empty()
	}
	count := max(n, 0) // the SDK's 0 means "to the end"
	resp, err := s.blob(key).DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: count}})
	if err != nil {
		err = convert(err)
		if errors.Is(err, blobstore.ErrInvalidRange) {
			return empty() // off at or past the end
		}
		return nil, blobstore.Info{}, fmt.Errorf("read %q: %w", key, err)
	}
	info := blobstore.Info{Key: key, Size: deref(resp.ContentLength), ETag: string(deref(resp.ETag)), LastModified: deref(resp.LastModified)}
	if total, ok := rangeTotal(deref(resp.ContentRange)); ok {
		info.Size = total
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3, EarlyCloseAsError: true})
	return body, info, nil
}

// rangeTotal parses the total of "bytes 0-9/300".
func rangeTotal(cr string) (int64, bool) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(cr[i+1:], 10, 64)
	return v, err == nil
}
