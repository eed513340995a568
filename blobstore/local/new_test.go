package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestLongKeys: keys whose escaped form does not fit a file name live in
// hashed directories and still list, read, collect and delete normally.
func TestLongKeys(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	keys := []string{
		strings.Repeat("é", 40),            // 80 bytes, 240 escaped: still plain
		strings.Repeat("a", 241),           // plain bytes, over the budget
		"long/" + strings.Repeat("é", 500), // 1005 bytes
		strings.Repeat("k", blobstore.MaxKeyLen),
	}
	for _, key := range keys {
		if _, err := blobstore.Put(ctx, s, key, strings.NewReader(key[:5]), 0, blobstore.Conditions{}); err != nil {
			t.Fatalf("Put with a %d-byte key: %v", len(key), err)
		}
		if got := readString(t, s, key); got != key[:5] {
			t.Fatalf("%d-byte key reads %q", len(key), got)
		}
		kd, _ := s.keyDir(key)
		if hashed := strings.HasPrefix(filepath.Base(kd), hashedPrefix); hashed != (len(escapeKey(key)) > maxEscapedKey) {
			t.Errorf("%d-byte key (%d escaped) in directory %s", len(key), len(escapeKey(key)), filepath.Base(kd))
		}
	}
	// Two keys sharing a long prefix are distinct.
	if got := readString(t, s, strings.Repeat("a", 241)); got != "aaaaa" {
		t.Fatal(got)
	}
	var listed []string
	if _, err := s.List(ctx, "", "", 0, func(i blobstore.Info) error { listed = append(listed, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("List = %d keys %q…, want %d", len(listed), listed, len(want))
	}
	if got, _ := listAllLocal(t, s, "long/"); len(got) != 1 || got[0] != keys[2] {
		t.Fatalf("List(prefix long/) = %q", got)
	}
	if _, err := s.CollectGarbage(ctx, blobstore.GCOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if err := s.Delete(ctx, key, blobstore.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{})
	if err != nil || rep.EmptyKeysGone != len(keys) {
		t.Fatalf("collection after deleting = %+v, %v; want %d empty keys gone", rep, err, len(keys))
	}
}

func listAllLocal(t *testing.T, s *Store, prefix string) ([]string, string) {
	t.Helper()
	var keys []string
	next, err := s.List(context.Background(), prefix, "", 0, func(i blobstore.Info) error { keys = append(keys, i.Key); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return keys, next
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
	// Garbage collection skips the damaged key, keeps its blocks, and
	// still collects the others.
	if _, err := s.StageBlock(ctx, "other", "x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	blocksBefore, _ := filepath.Glob(filepath.Join(kd, blockPrefix+"*"))
	rep, err := s.CollectGarbage(ctx, blobstore.GCOptions{})
	if err != nil {
		t.Fatalf("CollectGarbage with a corrupt key: %v", err)
	}
	if rep.Skipped != 1 || rep.StagedBlocks != 1 {
		t.Fatalf("report %+v, want 1 skipped key and the other key's staged block removed", rep)
	}
	if blocksAfter, _ := filepath.Glob(filepath.Join(kd, blockPrefix+"*")); len(blocksAfter) != len(blocksBefore) || len(blocksBefore) == 0 {
		t.Fatalf("blocks of the corrupt key: %d before, %d after collection", len(blocksBefore), len(blocksAfter))
	}
}
