package fusefs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/blobshare/blobshare/fs"
)

// TestFSX is a seeded fsx-style run: random writes, truncates, reads,
// renames, fsyncs and re-opens of one file through the mount, checked
// against an in-memory model after every read and at every re-open; once
// through one descriptor, once through two (POSIX read-after-write across
// descriptors). BLOBSHARE_FSX_SEED and BLOBSHARE_FSX_OPS change the seed
// (default 1) and the number of operations per run (default 3000).
func TestFSX(t *testing.T) {
	seed := envInt(t, "BLOBSHARE_FSX_SEED", 1)
	ops := envInt(t, "BLOBSHARE_FSX_OPS", 3000)
	for _, descs := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d descriptors", descs), func(t *testing.T) {
			fsx(t, uint64(seed), ops, descs)
		})
	}
}

func fsx(t *testing.T, seed uint64, ops, descs int) {
	t.Logf("fsx seed %d, %d operations, %d descriptors", seed, ops, descs)
	_, share := mountShare(t)
	rng := rand.New(rand.NewPCG(seed, 0x6f7378))

	// Spans two block boundaries of the core's data path.
	const maxSize = 2*fs.BlockSize + 1<<20
	var model []byte
	name := filepath.Join(share, "fsx-0")
	fds := make([]*os.File, descs)
	for k := range fds {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fds[k] = f
	}
	defer func() {
		for _, f := range fds {
			f.Close()
		}
	}()

	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		start := max(0, len(log)-20)
		t.Fatalf("after %d ops (seed %d): %s\nlast ops:\n%s", len(log), seed, fmt.Sprintf(format, args...), joinLines(log[start:]))
	}
	check := func(f *os.File, off, n int) {
		t.Helper()
		buf := make([]byte, n)
		got, err := f.ReadAt(buf, int64(off))
		var want []byte
		if off < len(model) {
			want = model[off:min(off+n, len(model))]
		}
		if got != len(want) {
			fail("read %d@%d: %d bytes (err %v), want %d", n, off, got, err, len(want))
		}
		if !bytes.Equal(buf[:got], want) {
			fail("read %d@%d: content mismatch at byte %d", n, off, firstDiff(buf[:got], want)+off)
		}
	}
	renames := 0
	for i := 0; i < ops; i++ {
		k := rng.IntN(descs)
		f := fds[k]
		switch op := rng.IntN(100); {
		case op < 40: // write
			off := rng.IntN(maxSize - 1)
			n := 1 + rng.IntN(min(64<<10, maxSize-off))
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			log = append(log, fmt.Sprintf("fd%d write %d@%d", k, n, off))
			if _, err := f.WriteAt(data, int64(off)); err != nil {
				fail("write: %v", err)
			}
			if off+n > len(model) {
				model = append(model, make([]byte, off+n-len(model))...)
			}
			copy(model[off:], data)
		case op < 50: // truncate
			size := rng.IntN(maxSize)
			log = append(log, fmt.Sprintf("fd%d truncate %d", k, size))
			if err := f.Truncate(int64(size)); err != nil {
				fail("truncate: %v", err)
			}
			if size < len(model) {
				model = model[:size]
			} else {
				model = append(model, make([]byte, size-len(model))...)
			}
		case op < 80: // read
			off := rng.IntN(maxSize)
			n := 1 + rng.IntN(128<<10)
			log = append(log, fmt.Sprintf("fd%d read %d@%d", k, n, off))
			check(f, off, n)
		case op < 85: // rename (the descriptors stay valid)
			renames++
			next := filepath.Join(share, "fsx-"+strconv.Itoa(renames))
			log = append(log, "rename "+filepath.Base(next))
			if err := os.Rename(name, next); err != nil {
				fail("rename: %v", err)
			}
			name = next
		case op < 90: // fsync
			log = append(log, fmt.Sprintf("fd%d fsync", k))
			if err := f.Sync(); err != nil {
				fail("fsync: %v", err)
			}
		default: // close and re-open, maybe with O_TRUNC; check it whole
			trunc := rng.IntN(8) == 0
			log = append(log, fmt.Sprintf("fd%d reopen trunc=%v", k, trunc))
			if err := f.Close(); err != nil {
				fail("close: %v", err)
			}
			flags := os.O_RDWR
			if trunc {
				flags |= os.O_TRUNC
				model = model[:0]
			}
			f, err := os.OpenFile(name, flags, 0)
			if err != nil {
				fail("reopen: %v", err)
			}
			fds[k] = f
			st, err := f.Stat()
			if err != nil || st.Size() != int64(len(model)) {
				fail("size after reopen: %v (err %v), want %d", st.Size(), err, len(model))
			}
			check(f, 0, len(model)+1)
		}
	}
	// Finally, a fresh descriptor sees everything after close.
	for _, f := range fds {
		if err := f.Close(); err != nil {
			fail("final close: %v", err)
		}
	}
	got, err := os.ReadFile(name)
	if err != nil || !bytes.Equal(got, model) {
		fail("final content: %d bytes (err %v), want %d, first diff at %d", len(got), err, len(model), firstDiff(got, model))
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func firstDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
