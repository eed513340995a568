package diskbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// chunked returns n bytes whose 4 MiB chunks each start with their index,
// so a chunk found in a file names the one it is.
func chunked(n int64) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	for c := int64(0); c*chunk < n; c++ {
		binary.LittleEndian.PutUint64(data[c*chunk:], uint64(c))
	}
	return data
}

// TestWriteParallel checks that WriteParallel writes every 4 MiB chunk of
// the first n bytes exactly once, with an fsync after each write, that the
// writers' fsyncs overlap (each fsync of the first round waits until all
// writers are in one), and that nothing is left behind.
func TestWriteParallel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int64
		writers int
	}{
		{"4 writers, 8 chunks, a partial last one", 7*chunk + 9, 4},
		{"4 writers, exactly 4 chunks", 4 * chunk, 4},
		{"2 writers, 3 chunks", 3 * chunk, 2},
		{"1 writer", 2*chunk + 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := chunked(tc.n)
			dir := t.TempDir()
			chunks := int((tc.n + chunk - 1) / chunk)
			var mu sync.Mutex
			seen := map[uint64]int{}
			sizes := map[string]int64{}
			arrived := 0
			all := make(chan struct{})
			check := func(f *os.File) error {
				st, err := f.Stat()
				if err != nil {
					return err
				}
				mu.Lock()
				prev := sizes[f.Name()]
				sizes[f.Name()] = st.Size()
				mu.Unlock()
				written := st.Size() - prev
				if written <= 0 || written > chunk {
					t.Errorf("%s: %d bytes since the last fsync, want one write of up to 4 MiB", f.Name(), written)
					return f.Sync()
				}
				got := make([]byte, written)
				if _, err := f.ReadAt(got, prev); err != nil {
					return err
				}
				c := binary.LittleEndian.Uint64(got)
				if c >= uint64(chunks) || !bytes.Equal(got, data[c*chunk:min(int64(c+1)*chunk, tc.n)]) {
					t.Errorf("%s: the bytes at %d are no chunk of the source", f.Name(), prev)
				}
				mu.Lock()
				seen[c]++
				arrived++
				if arrived == min(tc.writers, chunks) {
					close(all)
				}
				mu.Unlock()
				select {
				case <-all:
				case <-time.After(10 * time.Second):
					t.Error("the first fsyncs of the writers never overlapped")
				}
				return f.Sync()
			}
			if _, err := writeParallel(dir, bytes.NewReader(data), tc.n, tc.writers, check); err != nil {
				t.Fatal(err)
			}
			for c := range chunks {
				if seen[uint64(c)] != 1 {
					t.Errorf("chunk %d written %d times, want once", c, seen[uint64(c)])
				}
			}
			if len(sizes) > tc.writers {
				t.Errorf("%d files, want at most %d", len(sizes), tc.writers)
			}
			var total int64
			for _, s := range sizes {
				total += s
			}
			if total != tc.n {
				t.Errorf("%d bytes written, want %d", total, tc.n)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left %d files behind", len(left))
			}
		})
	}
	t.Run("past the source's end", func(t *testing.T) {
		_, err := WriteParallel(t.TempDir(), bytes.NewReader(make([]byte, 10)), 11, 4)
		if !errors.Is(err, io.EOF) {
			t.Errorf("got %v, want an error wrapping io.EOF", err)
		}
	})
	t.Run("no writers", func(t *testing.T) {
		if _, err := WriteParallel(t.TempDir(), bytes.NewReader(nil), 0, 0); err == nil {
			t.Error("0 writers accepted")
		}
	})
}

// TestWarm checks that the warm-up leaves nothing behind and fails,
// naming the directory, when it cannot write there.
func TestWarm(t *testing.T) {
	dir := t.TempDir()
	if err := Warm(dir, bytes.NewReader(chunked(chunk+8)), chunk+8); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d files behind", len(left))
	}
	missing := dir + "/missing"
	if err := Warm(missing, bytes.NewReader(nil), 0); err == nil || !bytes.Contains([]byte(err.Error()), []byte(missing)) {
		t.Errorf("got %v, want an error naming %s", err, missing)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
