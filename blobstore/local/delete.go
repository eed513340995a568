package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blobshare/blobshare/blobstore"
)

// Delete removes the manifest under the key lock, syncs the directory and
// removes the version's blocks. Staged blocks and the empty key directory
// are left to garbage collection.
func (s *Store) Delete(ctx context.Context, key string, cond blobstore.Conditions) error {
	kd, err := s.keyDir(key)
	if err != nil {
		return err
	}
	if err := ctxErr(ctx, "delete", key); err != nil {
		return err
	}
	if cond.IfMatch == "" {
		// Nothing to delete: do not create a key directory to lock.
		if _, err := os.Stat(filepath.Join(kd, manifestName)); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	unlock, err := s.lockKey(ctx, key, kd)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := readManifest(key, kd)
	if errors.Is(err, blobstore.ErrNotFound) {
		if cond.IfMatch != "" {
			return fmt.Errorf("delete %q: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	if err := checkConds(key, cur, cond); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := os.Remove(filepath.Join(kd, manifestName)); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	if err := syncDir(kd); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	s.removeUnreferenced(kd, cur, nil)
	return nil
}
