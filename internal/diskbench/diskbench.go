package diskbench

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// chunk is the size of each write: the benchmarks' 4 MiB ranges.
const chunk = 4 << 20

// Write copies the first n bytes of src into a new file in dir in 4 MiB
// writes, each followed by an fsync, and returns how long that took, the
// file's creation included; the file is removed afterwards. It is one
// writer acknowledging 4 MiB ranges durably, one after the other: a
// server writing several ranges at once can beat it.
func Write(dir string, src io.ReaderAt, n int64) (time.Duration, error) {
	return write(dir, src, n, (*os.File).Sync)
}

// write is Write with the fsync replaceable (tests count and check them).
func write(dir string, src io.ReaderAt, n int64, sync func(*os.File) error) (time.Duration, error) {
	buf := make([]byte, chunk)
	start := time.Now()
	f, err := os.CreateTemp(dir, "diskbench-*")
	if err != nil {
		return 0, fmt.Errorf("diskbench: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	for off := int64(0); off < n; {
		m, err := src.ReadAt(buf[:min(chunk, n-off)], off)
		if err != nil && !(errors.Is(err, io.EOF) && int64(m) == n-off) {
			return 0, fmt.Errorf("diskbench: read at %d: %w", off, err)
		}
		if _, err := f.Write(buf[:m]); err != nil {
			return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
		}
		if err := sync(f); err != nil {
			return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
		}
		off += int64(m)
	}
	d := time.Since(start)
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
	}
	return d, nil
}

// Sink creates a file of n bytes in dir for downloads to overwrite, its
// blocks allocated and on disk: a download into a new file would also
// time the file system allocating blocks, which costs more the more the
// disk has been written (a benchmark's later rounds pay more than its
// first). The caller closes it.
func Sink(dir string, n int64) (*os.File, error) {
	f, err := os.CreateTemp(dir, "sink-*")
	if err != nil {
		return nil, fmt.Errorf("diskbench: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
	}
	zeros := make([]byte, chunk)
	for off := int64(0); off < n; off += chunk {
		if _, err := f.Write(zeros[:min(chunk, n-off)]); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return f, nil
}

// Source creates a file of n random bytes in dir for uploads to stream
// from (nothing holds the whole payload in memory), synced before anything
// is timed: its writeback would slow whatever writes next. The caller
// closes it.
func Source(dir string, n int64) (*os.File, error) {
	f, err := os.CreateTemp(dir, "payload-*")
	if err != nil {
		return nil, fmt.Errorf("diskbench: %w", err)
	}
	if _, err := io.CopyN(f, rand.Reader, n); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
	}
	return f, nil
}

// TransferBytes is the size of the transfer benchmarks:
// BLOBSHARE_BENCH_BYTES (1073741824 for the aims' 1 GiB), 64 MiB when it
// is unset so that runs stay short.
func TransferBytes() (int64, error) {
	v := os.Getenv("BLOBSHARE_BENCH_BYTES")
	if v == "" {
		return 64 << 20, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("BLOBSHARE_BENCH_BYTES=%q: want a positive byte count", v)
	}
	return n, nil
}
