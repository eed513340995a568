package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/blobshare/blobshare/blobstore"
)

// StageBlock is Put Block. The SDK needs a seekable body of known length
// (it rewinds on retries), so the block is read into a pooled buffer of
// MemBlockLimit bytes, or spooled to a temp file when larger.
func (s *Store) StageBlock(ctx context.Context, key, blockID string, r io.Reader) (int64, error) {
	if err := blobstore.ValidKey(key); err != nil {
		return 0, err
	}
	if err := blobstore.ValidBlockID(blockID); err != nil {
		return 0, fmt.Errorf("stage %q: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("stage %q: %w", key, err)
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	var body io.ReadSeekCloser
	var size int64
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		body = streaming.NopCloser(bytes.NewReader(buf[:n]))
		size = int64(n)
	case err != nil:
		return 0, fmt.Errorf("stage %q block %s: read: %w", key, blockID, err)
	default:
		f, fsize, err := spool(ctx, buf, r)
		if err != nil {
			return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, err)
		}
		defer f.Close()
		body = streaming.NopCloser(f)
		size = fsize
	}
	if _, err := s.blob(key).StageBlock(ctx, encodeID(blockID), body, nil); err != nil {
		return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, convert(err))
	}
	return size, nil
}

// spool writes head and the rest of r to an unlinked temp file, rewound.
func spool(ctx context.Context, head []byte, r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "blobshare-block-*")
	if err != nil {
		return nil, 0, err
	}
	_ = os.Remove(f.Name()) // lives until closed
	fail := func(err error) (*os.File, int64, error) { f.Close(); return nil, 0, err }
	if _, err := f.Write(head); err != nil {
		return fail(err)
	}
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, int64(len(head)) + n, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
