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
	keys := make([]string, 0, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		k, ok := unescapeKey(e.Name())
		if !ok || !strings.HasPrefix(k, prefix) || k <= marker {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	count := 0
	last := ""
	for _, k := range keys {
		if err := ctxErr(ctx, "list", prefix); err != nil {
			return "", err
		}
		m, err := readManifest(k, filepath.Join(s.keysDir, escapeKey(k)))
		if errors.Is(err, blobstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("list %q: %w", prefix, err)
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
