package diskbench

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	src := bytes.NewReader(bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16+3))
	for _, tc := range []struct {
		name      string
		n         int64
		syncEvery int64
	}{
		{"whole, one fsync", src.Size(), 0},
		{"fsync every 4 MiB", src.Size(), 4 << 20},
		{"a prefix", 5<<20 + 1, 4 << 20},
		{"nothing", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := Write(dir, src, tc.n, tc.syncEvery)
			if err != nil {
				t.Fatal(err)
			}
			if d <= 0 {
				t.Errorf("took %v", d)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left %d files behind", len(left))
			}
		})
	}
	if _, err := Write(t.TempDir(), src, src.Size()+1, 0); err == nil {
		t.Error("writing past the source's end: no error")
	}
}

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
	// Allocated, not sparse: st_blocks counts 512-byte units.
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; blocks*512 < n {
		t.Errorf("%d bytes allocated of %d", blocks*512, n)
	}
}
