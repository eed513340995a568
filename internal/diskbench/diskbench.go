package diskbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// chunk is the size of each write: the benchmarks' 4 MiB blocks.
const chunk = 4 << 20

// Write copies the first n bytes of src into a new file in dir, in 4 MiB
// writes, fsyncing after every syncEvery bytes (0: once, at the end), and
// returns how long that took, the file's creation and the last fsync
// included. The file is removed afterwards.
//
// With syncEvery 4 MiB it is what a server that acknowledges each 4 MiB
// range durably must do at the least; with 0 it is the disk's sequential
// write speed, the most any durable upload of n bytes can reach.
func Write(dir string, src io.ReaderAt, n, syncEvery int64) (time.Duration, error) {
	buf := make([]byte, chunk)
	start := time.Now()
	f, err := os.CreateTemp(dir, "diskbench-*")
	if err != nil {
		return 0, fmt.Errorf("diskbench: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	var unsynced int64
	for off := int64(0); off < n; {
		m, err := src.ReadAt(buf[:min(chunk, n-off)], off)
		if err != nil && !(errors.Is(err, io.EOF) && int64(m) == n-off) {
			return 0, fmt.Errorf("diskbench: read at %d: %w", off, err)
		}
		if _, err := f.Write(buf[:m]); err != nil {
			return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
		}
		off += int64(m)
		unsynced += int64(m)
		if syncEvery > 0 && unsynced >= syncEvery {
			if err := f.Sync(); err != nil {
				return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
			}
			unsynced = 0
		}
	}
	if unsynced > 0 || syncEvery == 0 {
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
		}
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
	zeros := make([]byte, chunk)
	for off := int64(0); off < n; off += chunk {
		if _, err := f.Write(zeros[:min(chunk, n-off)]); err != nil {
			f.Close()
			return nil, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("diskbench: %s: %w", f.Name(), err)
	}
	return f, nil
}
