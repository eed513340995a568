package diskbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
)

// WriteParallel writes the first n bytes of src with writers goroutines at
// once, each into a file of its own in dir, in 4 MiB writes each followed
// by an fsync, and returns how long that took, the files' creation
// included; the files are removed afterwards. The writers take the 4 MiB
// chunks in turn from one counter, as a server's requests take the ranges
// or blocks an SDK keeps in flight: it is the disk's durable bandwidth at
// the transfer benchmarks' concurrency (4), the yardstick of a server that
// acknowledges every range durably without making its writers wait in
// line for one another's fsync.
func WriteParallel(dir string, src io.ReaderAt, n int64, writers int) (time.Duration, error) {
	return writeParallel(dir, src, n, writers, (*os.File).Sync)
}

// writeParallel is WriteParallel with the fsync replaceable (tests count
// the fsyncs and check that they overlap).
func writeParallel(dir string, src io.ReaderAt, n int64, writers int, fsync func(*os.File) error) (time.Duration, error) {
	if writers < 1 {
		return 0, fmt.Errorf("diskbench: %d writers", writers)
	}
	chunks := (n + chunk - 1) / chunk
	var (
		mu    sync.Mutex
		next  int64
		first error
		wg    sync.WaitGroup
	)
	take := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= chunks {
			return 0, false
		}
		next++
		return next - 1, true
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.CreateTemp(dir, "diskbench-*")
			if err != nil {
				fail(fmt.Errorf("diskbench: %w", err))
				return
			}
			defer os.Remove(f.Name())
			defer f.Close()
			buf := make([]byte, chunk)
			for {
				c, ok := take()
				if !ok {
					break
				}
				off := c * chunk
				m, err := src.ReadAt(buf[:min(chunk, n-off)], off)
				if err != nil && !(errors.Is(err, io.EOF) && int64(m) == n-off) {
					fail(fmt.Errorf("diskbench: read at %d: %w", off, err))
					return
				}
				if _, err := f.Write(buf[:m]); err != nil {
					fail(fmt.Errorf("diskbench: %s: %w", f.Name(), err))
					return
				}
				if err := fsync(f); err != nil {
					fail(fmt.Errorf("diskbench: %s: %w", f.Name(), err))
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if first != nil {
		return 0, first
	}
	return d, nil
}

// Warm readies the page cache for the side timed next, the same way for
// every side: sync(2), write the first n bytes of src to a file in dir
// and unlink it, sync(2). This machine hands freed memory back to its
// host, so the first gigabyte of new page cache after a pause pays a
// fault per page (4 fsyncing writers measured 490 MB/s after 15 s idle,
// 1.1–1.5 GB/s right after an untimed 1 GiB write and unlink); without
// the warm-up whichever side runs second inherits the first one's freed
// memory. The sync before leaves no other side's dirty pages to write
// back, the one after leaves none of the warm-up's.
func Warm(dir string, src io.ReaderAt, n int64) error {
	syscall.Sync()
	f, err := os.CreateTemp(dir, "warm-*")
	if err != nil {
		return fmt.Errorf("diskbench: %w", err)
	}
	_, err = io.Copy(f, io.NewSectionReader(src, 0, n))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	syscall.Sync()
	if err != nil {
		return fmt.Errorf("diskbench: warm-up in %s: %w", dir, err)
	}
	return nil
}

// Median returns the median of xs (the mean of the middle two for an even
// count; 0 for none): the transfer benchmarks report the median of their
// per-round ratios, which one slow round on a shared machine does not
// move.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
