package fs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestGetFileWriteTo: a FileReader that writes itself out (the path an
// HTTP response takes, where the local blob store hands over its block
// files for sendfile) delivers exactly the bytes Read delivers, for
// ranges inside a block, across blocks and windows, and past the blob's
// end into the zeros of a file extended without writing; whether the
// destination reads from a reader itself (a buffer, a file) or not.
func TestGetFileWriteTo(t *testing.T) {
	e := newEnv(t)
	sh := e.share("data")
	const data = readWindow + 3*BlockSize + 12345 // more than one window
	model := pattern(data, 3)
	e.putFile("data/f", model)
	size := int64(data + 5000)
	f, err := e.fs.Lookup(ctxBG, sh, "f")
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	if _, err := e.fs.Setattr(ctxBG, f.ID, SetattrRequest{Size: &size}); err != nil {
		t.Fatalf("extend: %v", err)
	}
	model = append(model, make([]byte, 5000)...)

	dests := []struct {
		name string
		make func(t *testing.T) (io.Writer, func() []byte)
	}{
		{"buffer", func(t *testing.T) (io.Writer, func() []byte) {
			var b bytes.Buffer
			return &b, b.Bytes
		}},
		{"plain writer", func(t *testing.T) (io.Writer, func() []byte) {
			var b bytes.Buffer
			return struct{ io.Writer }{&b}, b.Bytes
		}},
		{"file", func(t *testing.T) (io.Writer, func() []byte) {
			p := filepath.Join(t.TempDir(), "out")
			fh, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fh.Close() })
			return fh, func() []byte {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}},
	}
	ranges := []struct {
		name     string
		off, n   int64
		ranged   bool
		wantSize int64
	}{
		{"whole", 0, -1, false, size},
		{"inside a block", 10, 100, true, 100},
		{"across blocks", BlockSize - 7, 2*BlockSize + 14, true, 2*BlockSize + 14},
		{"across the window", readWindow - 3, 10, true, 10},
		{"into the zeros", data - 20, 1000, true, 1000},
		{"zeros only", data + 100, 200, true, 200},
	}
	for _, d := range dests {
		for _, r := range ranges {
			t.Run(d.name+"/"+r.name, func(t *testing.T) {
				fr, err := e.fs.GetFile(ctxBG, GetFileRequest{Path: "data/f", Offset: r.off, Length: r.n, Ranged: r.ranged})
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				defer fr.Close()
				w, got := d.make(t)
				n, err := io.Copy(w, fr) // io.Copy takes fr.WriteTo
				if err != nil || n != r.wantSize || fr.Length != r.wantSize {
					t.Fatalf("copied %d (length %d), %v; want %d", n, fr.Length, err, r.wantSize)
				}
				if want := model[r.off : r.off+r.wantSize]; !bytes.Equal(got(), want) {
					t.Fatalf("bytes differ from the model (%d bytes)", len(want))
				}
			})
		}
	}
}
