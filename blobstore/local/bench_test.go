package local

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// Run with, e.g.:
//
//	go test -run '^$' -bench 'Sequential' -benchtime 3x ./blobstore/local/
//
// BenchmarkSequential{Write,Read} move benchSize bytes per iteration
// through the store and through a plain file on the same disk (io.Copy,
// then fsync for writes), alternating which goes first, and report both
// throughputs and their ratio (store / file; aim >= 0.8). The write
// benchmark also reports a tuned plain write (the store's I/O pattern
// without the store) and the ratio against it, so the store's own
// overhead shows apart from its I/O pattern.

const benchSize = 256 << 20

// repeatReader yields n bytes by repeating a random buffer: cheap, so the
// benchmark measures I/O rather than data generation.
type repeatReader struct {
	buf []byte
	n   int64
	off int
}

func newRepeatReader(n int64) *repeatReader {
	buf := make([]byte, 4<<20+13) // odd length: blocks do not repeat
	r := rand.New(rand.NewPCG(1, 2))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	return &repeatReader{buf: buf, n: n}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	k := copy(p, r.buf[r.off:])
	r.off = (r.off + k) % len(r.buf)
	r.n -= int64(k)
	return k, nil
}

func (r *repeatReader) reset(n int64) { r.n, r.off = n, 0 }

func plainWrite(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func plainRead(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(io.Discard, f)
}

func storeRead(ctx context.Context, s *Store, key string) (int64, error) {
	rc, _, err := s.ReadRange(ctx, key, 0, -1)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}

type pair struct{ file, store, tuned time.Duration }

func (p pair) report(b *testing.B, iters int) {
	mb := float64(benchSize) * float64(iters) / 1e6
	fileMBps, storeMBps := mb/p.file.Seconds(), mb/p.store.Seconds()
	b.ReportMetric(fileMBps, "file-MB/s")
	b.ReportMetric(storeMBps, "store-MB/s")
	b.ReportMetric(storeMBps/fileMBps, "ratio")
	if p.tuned > 0 {
		tunedMBps := mb / p.tuned.Seconds()
		b.ReportMetric(tunedMBps, "tuned-file-MB/s")
		b.ReportMetric(storeMBps/tunedMBps, "ratio-vs-tuned")
	}
}

// tunedWrite is the best plain file write we know, for reference: the
// store's own tricks (1 MiB writes, writeback started every 4 MiB, one
// fsync at the end) without the store.
func tunedWrite(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var since int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			if since += int64(n); since >= 4<<20 {
				startWriteback(f)
				since = 0
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

func timed(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

func BenchmarkSequentialWrite(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := New(filepath.Join(dir, "store"))
	if err != nil {
		b.Fatal(err)
	}
	src := newRepeatReader(benchSize)
	plain := filepath.Join(dir, "plain")
	var tot pair
	b.SetBytes(3 * benchSize) // three copies per iteration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		file := func() error { src.reset(benchSize); return plainWrite(plain, src) }
		store := func() error {
			src.reset(benchSize)
			_, err := blobstore.Put(ctx, s, "bench/seq", src, blobstore.DefaultBlockSize, blobstore.Conditions{})
			return err
		}
		b.StopTimer()
		_ = os.Remove(plain)
		_ = os.Remove(plain + "-tuned")
		if err := s.Delete(ctx, "bench/seq", blobstore.Conditions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		tuned := func() error { src.reset(benchSize); return tunedWrite(plain+"-tuned", src) }
		var df, ds, dt time.Duration
		var err1, err2, err3 error
		if i%2 == 0 {
			df, err1 = timed(file)
			ds, err2 = timed(store)
			dt, err3 = timed(tuned)
		} else {
			dt, err3 = timed(tuned)
			ds, err2 = timed(store)
			df, err1 = timed(file)
		}
		if err1 != nil || err2 != nil || err3 != nil {
			b.Fatal(err1, err2, err3)
		}
		tot.file += df
		tot.store += ds
		tot.tuned += dt
	}
	tot.report(b, b.N)
}

func BenchmarkSequentialRead(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := New(filepath.Join(dir, "store"))
	if err != nil {
		b.Fatal(err)
	}
	src := newRepeatReader(benchSize)
	plain := filepath.Join(dir, "plain")
	if err := plainWrite(plain, src); err != nil {
		b.Fatal(err)
	}
	src.reset(benchSize)
	if _, err := blobstore.Put(ctx, s, "bench/seq", src, blobstore.DefaultBlockSize, blobstore.Conditions{}); err != nil {
		b.Fatal(err)
	}
	var tot pair
	b.SetBytes(2 * benchSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var df, ds time.Duration
		var nf, ns int64
		var err1, err2 error
		file := func() (err error) { nf, err = plainRead(plain); return err }
		store := func() (err error) { ns, err = storeRead(ctx, s, "bench/seq"); return err }
		if i%2 == 0 {
			df, err1 = timed(file)
			ds, err2 = timed(store)
		} else {
			ds, err2 = timed(store)
			df, err1 = timed(file)
		}
		if err1 != nil || err2 != nil || nf != benchSize || ns != benchSize {
			b.Fatal(err1, err2, nf, ns)
		}
		tot.file += df
		tot.store += ds
	}
	tot.report(b, b.N)
}

// BenchmarkCommitOneBlock is fs's write pattern on a large file: stage one
// 64 KiB block and commit a list that reuses the other committed blocks,
// with If-Match. It reports the cost of one such update.
func BenchmarkCommitOneBlock(b *testing.B) {
	for _, nblocks := range []int{1, 256} {
		b.Run(fmt.Sprintf("blocks=%d", nblocks), func(b *testing.B) {
			ctx := context.Background()
			s, err := New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			const key = "bench/commit"
			info, err := blobstore.Put(ctx, s, key, newRepeatReader(int64(nblocks)*64<<10), 64<<10, blobstore.Conditions{})
			if err != nil {
				b.Fatal(err)
			}
			blocks, _, err := s.Blocks(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]string, len(blocks))
			for i, bl := range blocks {
				ids[i] = bl.ID
			}
			data := strings.Repeat("u", 64<<10)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := blobstore.NewBlockID()
				if _, err := s.StageBlock(ctx, key, id, strings.NewReader(data)); err != nil {
					b.Fatal(err)
				}
				ids[i%len(ids)] = id
				if info, err = s.CommitBlocks(ctx, key, ids, blobstore.Conditions{IfMatch: info.ETag}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadRange4K reads 4 KiB at random offsets of a 256-block blob.
func BenchmarkReadRange4K(b *testing.B) {
	ctx := context.Background()
	s, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	const key, size = "bench/range", 256 * 64 << 10
	if _, err := blobstore.Put(ctx, s, key, newRepeatReader(size), 64<<10, blobstore.Conditions{}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 4096)
	b.SetBytes(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rc, _, err := s.ReadRange(ctx, key, r.Int64N(size-4096), 4096)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc, buf); err != nil {
			b.Fatal(err)
		}
		rc.Close()
	}
}
