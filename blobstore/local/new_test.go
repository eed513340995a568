package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/blobshare/blobshare/blobstore"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string
		ok    bool
	}{
		{"EmptyDir", func(t *testing.T) string { return t.TempDir() }, true},
		{"Missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "a", "b") }, true},
		{"Reopen", func(t *testing.T) string {
			d := t.TempDir()
			if _, err := New(d); err != nil {
				t.Fatal(err)
			}
			return d
		}, true},
		{"Relative", func(t *testing.T) string {
			t.Chdir(t.TempDir())
			return "rel"
		}, true},
		{"Empty", func(t *testing.T) string { return "" }, false},
		{"File", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"UnderFile", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "sub")
		}, false},
		{"ForeignContent", func(t *testing.T) string {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "photo.jpg"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, false},
		{"OtherFormat", func(t *testing.T) string {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, formatFile), []byte("blobshare local blobstore v9\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			s, err := New(dir)
			if !tc.ok {
				if err == nil {
					t.Fatalf("New(%q) succeeded", dir)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q): %v", dir, err)
			}
			if !filepath.IsAbs(s.Dir()) {
				t.Errorf("Dir() = %q, not absolute", s.Dir())
			}
		})
	}
}

func TestNewReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := blobstore.Put(ctx, s1, "k", strings.NewReader("persisted"), 0, blobstore.Conditions{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, s2, "k"); got != "persisted" {
		t.Fatalf("reopened store reads %q", got)
	}
	if st, err := s2.Stat(ctx, "k"); err != nil || st.ETag != info.ETag || !st.LastModified.Equal(info.LastModified) {
		t.Fatalf("reopened Stat = %+v, %v; committed %+v", st, err, info)
	}
}

func TestNewConcurrentFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = New(dir)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("New %d: %v", i, err)
		}
	}
}

func TestKeyEscaping(t *testing.T) {
	for _, key := range []string{"f/0000000000000042", "a b", "%41", "é/ü", "a-b_c.d", "x%", "100%/done"} {
		esc := escapeKey(key)
		if strings.ContainsAny(esc, "/ \x00") {
			t.Errorf("escapeKey(%q) = %q, not one plain file name", key, esc)
		}
		back, ok := unescapeKey(esc)
		if !ok || back != key {
			t.Errorf("unescapeKey(escapeKey(%q)) = %q, %v", key, back, ok)
		}
	}
	for _, bad := range []string{"%", "%4", "%zz", "a%g0"} {
		if _, ok := unescapeKey(bad); ok {
			t.Errorf("unescapeKey(%q) accepted", bad)
		}
	}
}

func TestLongKeys(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{strings.Repeat("é", 40), true},   // 80 bytes, 240 escaped
		{strings.Repeat("a", 240), true},  // plain bytes stay one byte
		{strings.Repeat("a", 241), false}, // over the directory name budget
		{strings.Repeat("é", 41), false},
	} {
		_, err := blobstore.Put(ctx, s, tc.key, strings.NewReader("x"), 0, blobstore.Conditions{})
		if tc.ok && err != nil {
			t.Errorf("Put with a %d-byte key: %v", len(tc.key), err)
		}
		if !tc.ok && !errors.Is(err, blobstore.ErrInvalidKey) {
			t.Errorf("Put with a %d-byte key (%d escaped): %v, want ErrInvalidKey", len(tc.key), len(escapeKey(tc.key)), err)
		}
	}
}

// TestCorruptManifest: a damaged manifest is an error naming the blob,
// never a panic or a silent empty blob.
func TestCorruptManifest(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	if _, err := blobstore.Put(ctx, s, "k", strings.NewReader("data"), 0, blobstore.Conditions{}); err != nil {
		t.Fatal(err)
	}
	kd, _ := s.keyDir("k")
	if err := os.WriteFile(filepath.Join(kd, manifestName), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Stat(ctx, "k")
	if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("Stat of a corrupt manifest = %v", err)
	}
	if _, _, err := s.ReadRange(ctx, "k", 0, -1); !errors.Is(err, errCorrupt) {
		t.Fatalf("ReadRange of a corrupt manifest = %v", err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a corrupt manifest reads as a missing blob")
	}
}
