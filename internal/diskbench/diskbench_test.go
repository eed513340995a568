package diskbench

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestWrite checks that Write writes the first n bytes of its source, in
// order, with an fsync after every 4 MiB write and after the last, and
// leaves nothing behind.
func TestWrite(t *testing.T) {
	data := make([]byte, 9<<20+3)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	src := bytes.NewReader(data)
	for _, tc := range []struct {
		name  string
		n     int64
		syncs int
	}{
		{"whole source, a partial last write", int64(len(data)), 3},
		{"a prefix of whole writes", 8 << 20, 2},
		{"one byte", 1, 1},
		{"nothing", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			syncs := 0
			check := func(f *os.File) error {
				syncs++
				st, err := f.Stat()
				if err != nil {
					return err
				}
				if want := min(int64(syncs)*chunk, tc.n); st.Size() != want {
					t.Errorf("fsync %d: file holds %d bytes, want %d", syncs, st.Size(), want)
				}
				if syncs == tc.syncs {
					got, err := os.ReadFile(f.Name())
					if err != nil {
						return err
					}
					if !bytes.Equal(got, data[:tc.n]) {
						t.Errorf("the file differs from the first %d bytes of the source", tc.n)
					}
				}
				return f.Sync()
			}
			if _, err := write(dir, src, tc.n, check); err != nil {
				t.Fatal(err)
			}
			if syncs != tc.syncs {
				t.Errorf("%d fsyncs, want %d", syncs, tc.syncs)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left %d files behind", len(left))
			}
		})
	}
	t.Run("past the source's end", func(t *testing.T) {
		_, err := Write(t.TempDir(), src, int64(len(data))+1)
		if !errors.Is(err, io.EOF) {
			t.Errorf("got %v, want an error wrapping io.EOF", err)
		}
	})
}

// TestSink checks that the sink has the size asked for, its blocks
// allocated (not a sparse file).
func TestSink(t *testing.T) {
	const n = 9<<20 + 5
	f, err := Sink(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != n {
		t.Errorf("size %d, want %d", st.Size(), n)
	}
	// st_blocks counts 512-byte units.
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; blocks*512 < n {
		t.Errorf("%d bytes allocated of %d", blocks*512, n)
	}
}

// TestSource checks that Source writes n bytes that are not all alike,
// ready to read from the start.
func TestSource(t *testing.T) {
	const n = 5<<20 + 7
	f, err := Source(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := io.ReadAll(io.NewSectionReader(f, 0, n+1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d bytes, want %d", len(got), n)
	}
	if bytes.Count(got, got[:1]) == n {
		t.Error("every byte the same: not random")
	}
}

func TestTransferBytes(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int64
		bad  bool
	}{{"", 64 << 20, false}, {"1073741824", 1 << 30, false}, {"0", 0, true}, {"1 GiB", 0, true}} {
		t.Setenv("BLOBSHARE_BENCH_BYTES", tc.env)
		n, err := TransferBytes()
		if (err != nil) != tc.bad || n != tc.want {
			t.Errorf("BLOBSHARE_BENCH_BYTES=%q: %d, %v", tc.env, n, err)
		}
	}
}
