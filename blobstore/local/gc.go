package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// CollectGarbage walks every key directory under its key lock and removes:
// block files (b-) no committed manifest names, whatever their age (under
// the lock no commit is in progress, and readers hold open fds); staged
// blocks (s-) that o.KeepStaged does not keep and temp files (t-, mt-),
// last modified more than o.OlderThan ago (staging takes no lock, so young
// ones may belong to a writer at work); and key directories left with
// nothing but the lock file.
func (s *Store) CollectGarbage(ctx context.Context, o blobstore.GCOptions) (blobstore.GCReport, error) {
	var rep blobstore.GCReport
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("collect garbage in %s: %w", s.dir, err)
	}
	ents, err := os.ReadDir(s.keysDir)
	if err != nil {
		return rep, fmt.Errorf("collect garbage in %s: %w", s.dir, err)
	}
	cutoff := s.now().Add(-o.OlderThan) // the injected clock (WithClock): tests age files without sleeping
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		key, ok := unescapeKey(e.Name())
		if strings.HasPrefix(e.Name(), hashedPrefix) {
			key, ok = "", true // known from the manifest, if any
		}
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("collect garbage in %s: %w", s.dir, err)
		}
		err := s.collectKey(ctx, key, filepath.Join(s.keysDir, e.Name()), cutoff, o.KeepStaged, &rep)
		if errors.Is(err, errCorrupt) {
			// Leave a damaged key alone (removing blocks we cannot
			// tell are unreferenced would make it worse); go on.
			s.log.Warn("blobstore: garbage collection skips a key with a corrupt manifest", "dir", e.Name(), "err", err)
			rep.Skipped++
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("collect garbage: %w", err)
		}
	}
	return rep, nil
}

func (s *Store) collectKey(ctx context.Context, key, kd string, cutoff time.Time, keepStaged func(string) bool, rep *blobstore.GCReport) error {
	label := key
	if label == "" {
		label = filepath.Base(kd)
	}
	unlock, err := s.lockKey(ctx, label, kd)
	if err != nil {
		return err
	}
	defer unlock()
	rep.Keys++
	m, err := readManifest(key, kd)
	if err != nil && !errors.Is(err, blobstore.ErrNotFound) {
		return err
	}
	referenced := map[string]bool{}
	if m != nil {
		for _, b := range m.Blocks {
			referenced[b.File] = true
		}
	}
	ents, err := os.ReadDir(kd)
	if err != nil {
		return fmt.Errorf("key %q: %w", label, err)
	}
	left := 0
	for _, e := range ents {
		name := e.Name()
		var counter *int
		switch {
		case name == manifestName || name == lockName:
		case strings.HasPrefix(name, blockPrefix):
			if !referenced[name] {
				counter = &rep.OrphanBlocks
			}
		case strings.HasPrefix(name, stagedPrefix):
			if keepStaged == nil || !keepStaged(strings.TrimPrefix(name, stagedPrefix)) {
				counter = &rep.StagedBlocks
			}
		case strings.HasPrefix(name, tempPrefix), strings.HasPrefix(name, mtempPrefix):
			counter = &rep.TempFiles
		}
		if counter == nil {
			if name != lockName {
				left++
			}
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // a writer renamed it meanwhile
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", label, err)
		}
		if counter != &rep.OrphanBlocks && !info.ModTime().Before(cutoff) {
			left++
			continue
		}
		p := filepath.Join(kd, name)
		if err := os.Remove(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("key %q: %w", label, err)
		}
		*counter++
		rep.BytesFreed += info.Size()
	}
	if left == 0 && m == nil {
		// Empty: remove the lock file (others re-check its inode after
		// locking) and the directory; a writer that just created a temp
		// file makes rmdir fail harmlessly.
		if err := os.Remove(filepath.Join(kd, lockName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("key %q: %w", label, err)
		}
		if err := os.Remove(kd); err == nil {
			rep.EmptyKeysGone++
		}
	}
	return nil
}
