package fs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/blobshare/blobshare/locks"
)

// benchSize is the file size of the sequential benchmarks (64 MiB keeps a
// run short on a shared machine; the ratio to a plain file is the number
// that matters).
const benchSize = 64 << 20

const benchChunk = 128 << 10 // FUSE's default max write / readahead unit

// BenchmarkSequential compares the fs data path (handle writes, flush,
// handle reads) with plain file I/O on the same disk, in one run.
func BenchmarkSequential(b *testing.B) {
	chunk := pattern(benchChunk, 9)
	b.Run("write/fs", func(b *testing.B) {
		e := newEnv(b)
		e.share("data")
		b.SetBytes(benchSize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h := e.mustOpen(fmt.Sprintf("data/f%d", i), rw, allShare, DispositionCreate)
			for off := int64(0); off < benchSize; off += benchChunk {
				if _, err := h.WriteAt(ctxBG, chunk, off); err != nil {
					b.Fatal(err)
				}
			}
			if err := h.Close(ctxBG); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write/plain", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(benchSize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%d", i)))
			if err != nil {
				b.Fatal(err)
			}
			for off := int64(0); off < benchSize; off += benchChunk {
				if _, err := f.WriteAt(chunk, off); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("read/fs", func(b *testing.B) {
		e := newEnv(b)
		e.share("data")
		h := e.mustOpen("data/f", rw, allShare, DispositionCreate)
		for off := int64(0); off < benchSize; off += benchChunk {
			if _, err := h.WriteAt(ctxBG, chunk, off); err != nil {
				b.Fatal(err)
			}
		}
		if err := h.Close(ctxBG); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, benchChunk)
		b.SetBytes(benchSize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h := e.mustOpen("data/f", locks.AccessRead, allShare, DispositionOpen)
			for off := int64(0); ; off += benchChunk {
				_, err := h.ReadAt(ctxBG, buf, off)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			h.Close(ctxBG)
		}
	})
	b.Run("read/plain", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "f")
		f, _ := os.Create(p)
		for off := int64(0); off < benchSize; off += benchChunk {
			f.WriteAt(chunk, off)
		}
		f.Close()
		buf := make([]byte, benchChunk)
		b.SetBytes(benchSize)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f, _ := os.Open(p)
			for off := int64(0); ; off += benchChunk {
				_, err := f.ReadAt(buf, off)
				if err != nil {
					break
				}
			}
			f.Close()
		}
	})
}

// BenchmarkSmallFiles measures, through the mount view, what the FUSE
// small-files benchmark asks of the file system for each file: a negative
// lookup, create, a 4 KiB write, flush, close, lookup, rename and unlink.
// Besides ns/op (one file) it reports µs per step, wall clock and CPU, to
// show where a file's time goes. The CPU figure is the steadier one on a
// shared machine; it is the whole process's, so background work (a
// checkpoint, the garbage collector) counts to the step it overlaps.
func BenchmarkSmallFiles(b *testing.B) {
	e := newEnv(b)
	sh := e.share("data")
	data := make([]byte, 4096)
	steps := []string{"lookup-missing", "create", "write", "flush", "close", "lookup", "rename", "unlink"}
	spent := make([]time.Duration, len(steps))
	cpu := make([]time.Duration, len(steps))
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("f%d", i)
		i++
		var h *Handle
		for k, step := range []func() error{
			func() error {
				if _, err := e.fs.LookupStat(ctxBG, sh, name); !errors.Is(err, ErrNotFound) {
					return fmt.Errorf("lookup of a missing name: %v", err)
				}
				return nil
			},
			func() (err error) {
				h, _, err = e.fs.Create(ctxBG, CreateRequest{Parent: sh, Name: name, Exclusive: true, Open: OpenOptions{Access: rw, Share: allShare}})
				return err
			},
			func() error { _, err := h.WriteAt(ctxBG, data, 0); return err },
			func() error { return h.Flush(ctxBG) },
			func() error { return h.Close(ctxBG) },
			func() error { _, err := e.fs.LookupStat(ctxBG, sh, name); return err },
			func() error {
				return e.fs.Rename(ctxBG, RenameRequest{OldParent: sh, OldName: name, NewParent: sh, NewName: "g" + name})
			},
			func() error { return e.fs.Unlink(ctxBG, sh, "g"+name) },
		} {
			start, startCPU := time.Now(), cpuTime()
			if err := step(); err != nil {
				b.Fatalf("%s %s: %v", steps[k], name, err)
			}
			spent[k] += time.Since(start)
			cpu[k] += cpuTime() - startCPU
		}
	}
	for k, step := range steps {
		b.ReportMetric(float64(spent[k].Nanoseconds())/1e3/float64(b.N), step+"-µs")
		b.ReportMetric(float64(cpu[k].Nanoseconds())/1e3/float64(b.N), step+"-cpu-µs")
	}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
