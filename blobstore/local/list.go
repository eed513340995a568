package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blobshare/blobshare/blobstore"
)

// List reads the keys directory, decodes and sorts the names, and reads
// the manifest of each candidate after marker. A key directory without a
// manifest (deleted, or only staged blocks) is not listed. Each call scans
// the whole directory: fine for garbage collection and tools, not meant
// for hot paths.
func (s *Store) List(ctx context.Context, prefix, marker string, limit int, fn func(blobstore.Info) error) (string, error) {
	if err := ctxErr(ctx, "list", prefix); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(s.keysDir)
	if err != nil {
		return "", fmt.Errorf("list %q: %w", prefix, err)
	}
	type candidate struct {
		key, dir string
		m        *manifest // already read (hashed directory names)
	}
	cands := make([]candidate, 0, len(ents))
	match := func(k string) bool { return strings.HasPrefix(k, prefix) && k > marker }
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.keysDir, e.Name())
		if strings.HasPrefix(e.Name(), hashedPrefix) {
			m, err := readManifest("", dir)
			if errors.Is(err, blobstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("list %q: %w", prefix, err)
			}
			if match(m.Key) {
				cands = append(cands, candidate{m.Key, dir, m})
			}
			continue
		}
		k, ok := unescapeKey(e.Name())
		if ok && match(k) {
			cands = append(cands, candidate{k, dir, nil})
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return strings.Compare(a.key, b.key) })
	count := 0
	last := ""
	for _, c := range cands {
		if err := ctxErr(ctx, "list", prefix); err != nil {
			return "", err
		}
		k, m := c.key, c.m
		if m == nil {
			var err error
			m, err = readManifest(k, c.dir)
			if errors.Is(err, blobstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("list %q: %w", prefix, err)
			}
		}
		if limit > 0 && count == limit {
			return last, nil // one more exists
		}
		if err := fn(m.info(k)); err != nil {
			return "", err
		}
		count++
		last = k
	}
	return "", nil
}
