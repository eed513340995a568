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
// MemBlockLimit bytes, or spooled to a temp file when larger. The block's
// data is also kept in a temp file until a commit through this Store names
// it (keptBlocks), so a commit can stage it again if another writer's
// commit discarded it.
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
	fail := func(err error) (int64, error) {
		return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, err)
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	var f *os.File // the spooled block, or the copy to keep
	var size int64
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		size = int64(n)
	case err != nil:
		return fail(fmt.Errorf("read: %w", err))
	default:
		if f, size, err = spool(ctx, buf, r); err != nil {
			return fail(err)
		}
	}
	keep := s.kept.reserve(size)
	if f == nil && keep {
		if f, err = tempFile(); err == nil {
			_, err = f.Write(buf[:size])
		}
		if err != nil {
			s.kept.unreserve(size)
			if f != nil {
				f.Close()
			}
			return fail(err)
		}
	}
	var body io.ReadSeekCloser
	if size <= int64(len(buf)) {
		body = streaming.NopCloser(bytes.NewReader(buf[:size])) // from memory: no read back
	} else {
		body = streaming.NopCloser(io.NewSectionReader(f, 0, size))
	}
	_, err = s.blob(key).StageBlock(ctx, encodeID(blockID), body, nil)
	if err == nil && keep {
		s.kept.put(key, blockID, f, size)
		return size, nil
	}
	if keep {
		s.kept.unreserve(size)
	}
	if f != nil {
		f.Close()
	}
	if err != nil {
		return fail(convert(err))
	}
	return size, nil
}

// restage stages key's block id again from its kept copy; ok is false
// when there is none.
func (s *Store) restage(ctx context.Context, key, id string) (size int64, ok bool, err error) {
	rd, done, ok := s.kept.open(key, id)
	if !ok {
		return 0, false, nil
	}
	defer done()
	if _, err := s.blob(key).StageBlock(ctx, encodeID(id), streaming.NopCloser(rd), nil); err != nil {
		return 0, true, fmt.Errorf("stage %q block %s again: %w", key, id, convert(err))
	}
	return rd.Size(), true, nil
}

// spool writes head and the rest of r to an unlinked temp file.
func spool(ctx context.Context, head []byte, r io.Reader) (*os.File, int64, error) {
	f, err := tempFile()
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, int64, error) { f.Close(); return nil, 0, err }
	if _, err := f.Write(head); err != nil {
		return fail(err)
	}
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err != nil {
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
