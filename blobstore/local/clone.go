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

var _ blobstore.Cloner = (*Store)(nil)

// CloneBlob gives the committed content of src a second key, dst, without
// copying data: dst's block files are hard links to src's. Later commits
// to src replace src's manifest and unlink only src's names, so dst keeps
// the content until dst itself is deleted; garbage collection sees dst's
// manifest name its links. cond applies to src (If-Match: clone only that
// version). dst must not exist (ErrPreconditionFailed). Errors:
// ErrNotFound (src), ErrPreconditionFailed.
//
// Locks src, then dst; nothing locks a clone's key before its source's.
func (s *Store) CloneBlob(ctx context.Context, src, dst string, cond blobstore.Conditions) (blobstore.Info, error) {
	sd, err := s.keyDir(src)
	if err != nil {
		return blobstore.Info{}, err
	}
	dd, err := s.keyDir(dst)
	if err != nil {
		return blobstore.Info{}, err
	}
	if err := ctxErr(ctx, "clone", src); err != nil {
		return blobstore.Info{}, err
	}
	unlockSrc, err := s.lockKey(ctx, src, sd)
	if err != nil {
		return blobstore.Info{}, err
	}
	defer unlockSrc()
	m, err := readManifest(src, sd)
	if err != nil {
		return blobstore.Info{}, err
	}
	if err := checkConds(src, m, cond); err != nil {
		return blobstore.Info{}, err
	}
	unlockDst, err := s.lockKey(ctx, dst, dd)
	if err != nil {
		return blobstore.Info{}, err
	}
	defer unlockDst()
	if _, err := readManifest(dst, dd); !errors.Is(err, blobstore.ErrNotFound) {
		if err == nil {
			err = fmt.Errorf("clone %q to %q: the destination exists: %w", src, dst, blobstore.ErrPreconditionFailed)
		}
		return blobstore.Info{}, err
	}
	out := &manifest{Key: dst, ETag: newETag(), Modified: m.Modified, Blocks: make([]manifestBlk, 0, len(m.Blocks))}
	linked := map[string]bool{} // a list may name a file twice
	var made []string
	fail := func(err error) (blobstore.Info, error) {
		for _, name := range made {
			_ = os.Remove(filepath.Join(dd, name))
		}
		return blobstore.Info{}, fmt.Errorf("clone %q to %q: %w", src, dst, err)
	}
	for _, b := range m.Blocks {
		if !linked[b.File] {
			err := os.Link(filepath.Join(sd, b.File), filepath.Join(dd, b.File))
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return fail(err)
			}
			linked[b.File] = true
			made = append(made, b.File)
		}
		out.Blocks = append(out.Blocks, b)
	}
	// The data is durable (src's commit synced it); the new names must be
	// before the manifest that names them.
	if _, err := s.writeManifest(dd, out.marshal(), len(made) > 0); err != nil {
		return fail(err)
	}
	return out.info(dst), nil
}
