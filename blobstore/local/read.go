package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/blobshare/blobshare/blobstore"
)

// Stat reads the committed manifest.
func (s *Store) Stat(ctx context.Context, key string) (blobstore.Info, error) {
	kd, err := s.keyDir(key)
	if err != nil {
		return blobstore.Info{}, err
	}
	if err := ctxErr(ctx, "stat", key); err != nil {
		return blobstore.Info{}, err
	}
	m, err := readManifest(key, kd)
	if err != nil {
		return blobstore.Info{}, err
	}
	return m.info(key), nil
}

// Blocks returns the committed block list.
func (s *Store) Blocks(ctx context.Context, key string) ([]blobstore.Block, blobstore.Info, error) {
	kd, err := s.keyDir(key)
	if err != nil {
		return nil, blobstore.Info{}, err
	}
	if err := ctxErr(ctx, "blocks", key); err != nil {
		return nil, blobstore.Info{}, err
	}
	m, err := readManifest(key, kd)
	if err != nil {
		return nil, blobstore.Info{}, err
	}
	out := make([]blobstore.Block, len(m.Blocks))
	for i, b := range m.Blocks {
		out[i] = blobstore.Block{ID: b.ID, Size: b.Size}
	}
	return out, m.info(key), nil
}

// maxReadAttempts bounds how often ReadRange starts over when a commit
// removes a block between reading the manifest and opening the block.
const maxReadAttempts = 20

// ReadRange reads the manifest without a lock (the rename that commits it
// is atomic) and opens every block overlapping the range right away: the
// open fds keep the version readable even when a later commit or garbage
// collection unlinks its blocks. If a block is already gone, a commit
// happened in between; start over with the new manifest.
func (s *Store) ReadRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, blobstore.Info, error) {
	kd, err := s.keyDir(key)
	if err != nil {
		return nil, blobstore.Info{}, err
	}
	if off < 0 {
		return nil, blobstore.Info{}, fmt.Errorf("read %q at %d: %w", key, off, blobstore.ErrInvalidRange)
	}
	if n > math.MaxInt64-off {
		n = -1 // off+n would overflow: to the end
	}
	for range maxReadAttempts {
		if err := ctxErr(ctx, "read", key); err != nil {
			return nil, blobstore.Info{}, err
		}
		m, err := readManifest(key, kd)
		if err != nil {
			return nil, blobstore.Info{}, err
		}
		rr, err := s.openRange(ctx, kd, m, off, n)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, blobstore.Info{}, fmt.Errorf("read %q: %w", key, err)
		}
		return rr, m.info(key), nil
	}
	return nil, blobstore.Info{}, fmt.Errorf("read %q: blob changed %d times while opening", key, maxReadAttempts)
}

func (s *Store) openRange(ctx context.Context, kd string, m *manifest, off, n int64) (*rangeReader, error) {
	rr := &rangeReader{ctx: ctx, s: s}
	end := int64(-1) // exclusive; -1: to the end
	if n >= 0 {
		end = off + n
	}
	var pos int64
	for _, b := range m.Blocks {
		bstart, bend := pos, pos+b.Size
		pos = bend
		if bend <= off || b.Size == 0 {
			continue
		}
		if end >= 0 && bstart >= end {
			break
		}
		f, err := os.Open(filepath.Join(kd, b.File))
		if err != nil {
			rr.Close()
			return nil, err
		}
		from := max(off, bstart) - bstart
		to := b.Size
		if end >= 0 && end < bend {
			to = end - bstart
		}
		rr.segs = append(rr.segs, segment{f: f, off: from, n: to - from})
	}
	return rr, nil
}

type segment struct {
	f   *os.File
	off int64 // next offset within the block file
	n   int64 // bytes left to read from it
}

// rangeReader reads segments of block files in order with pread, so it
// shares no file offset. Each block's fd is closed when it is used up.
type rangeReader struct {
	ctx  context.Context
	s    *Store
	segs []segment
	i    int
}

var (
	_ io.ReadCloser = (*rangeReader)(nil)
	_ io.WriterTo   = (*rangeReader)(nil)
)

func (r *rangeReader) Read(p []byte) (int, error) {
	for r.i < len(r.segs) {
		if err := r.ctx.Err(); err != nil {
			return 0, err
		}
		sg := &r.segs[r.i]
		if sg.n == 0 {
			sg.f.Close()
			sg.f = nil
			r.i++
			continue
		}
		if len(p) == 0 {
			return 0, nil
		}
		k := min(int64(len(p)), sg.n)
		m, err := sg.f.ReadAt(p[:k], sg.off)
		sg.off += int64(m)
		sg.n -= int64(m)
		if m > 0 {
			return m, nil
		}
		if err == io.EOF {
			return 0, fmt.Errorf("block %s: %w (shorter than its manifest says)", sg.f.Name(), io.ErrUnexpectedEOF)
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, io.EOF
}

// WriteTo copies the rest of the range to w. A w that reads from a
// reader itself (an HTTP response, a TCP connection, a file) is handed
// each block file positioned at its segment, so the kernel copies it
// (sendfile, copy_file_range) and the bytes never pass through this
// process; any other w gets them through a pooled 1 MiB buffer, so large
// reads take few system calls.
func (r *rangeReader) WriteTo(w io.Writer) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return r.writeSegments(rf)
	}
	bp := r.s.bufs.Get().(*[]byte)
	defer r.s.bufs.Put(bp)
	buf := *bp
	var total int64
	for {
		m, err := r.Read(buf)
		if m > 0 {
			wm, werr := w.Write(buf[:m])
			total += int64(wm)
			if werr != nil {
				return total, werr
			}
			if wm < m {
				return total, io.ErrShortWrite
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// writeSegments hands rf each remaining segment as its block file, seeked
// to the segment and limited to its length. Every segment has an fd of
// its own (openRange), so moving its offset disturbs no other reader.
func (r *rangeReader) writeSegments(rf io.ReaderFrom) (int64, error) {
	var total int64
	for ; r.i < len(r.segs); r.i++ {
		if err := r.ctx.Err(); err != nil {
			return total, err
		}
		sg := &r.segs[r.i]
		if sg.n > 0 {
			if _, err := sg.f.Seek(sg.off, io.SeekStart); err != nil {
				return total, fmt.Errorf("block %s: %w", sg.f.Name(), err)
			}
			want := sg.n
			m, err := rf.ReadFrom(&io.LimitedReader{R: sg.f, N: want})
			total += m
			sg.off += m
			sg.n -= m
			if err != nil {
				return total, err
			}
			if m < want {
				return total, fmt.Errorf("block %s: %w (shorter than its manifest says)", sg.f.Name(), io.ErrUnexpectedEOF)
			}
		}
		sg.f.Close()
		sg.f = nil
	}
	return total, nil
}

// Close closes the fds not yet used up. It is idempotent.
func (r *rangeReader) Close() error {
	for i := range r.segs {
		if r.segs[i].f != nil {
			r.segs[i].f.Close()
			r.segs[i].f = nil
		}
	}
	r.i = len(r.segs)
	return nil
}
