package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blobshare/blobshare/blobstore"
)

// StageBlock writes r to a temp file in the key directory, starts its
// writeback and renames it to s-<id>, replacing an earlier staging of id.
// The data is not yet durable: the commit that first names the block
// fsyncs it before writing the manifest. It takes no lock: the rename is
// atomic and commits link the staged file they find.
func (s *Store) StageBlock(ctx context.Context, key, blockID string, r io.Reader) (int64, error) {
	return s.stage(ctx, key, blockID, r, false)
}

// StageBlockDurable implements blobstore.DurableStager: StageBlock whose
// block survives a power cut when it returns. Its file's fsync and the
// key directory's run at once, after the name is made (publishDurable).
// Several writers' syncs run at once (no lock is held) and share the
// file system's journal commits; the commit that names the block later
// finds its data clean.
func (s *Store) StageBlockDurable(ctx context.Context, key, blockID string, r io.Reader) (int64, error) {
	return s.stage(ctx, key, blockID, r, true)
}

func (s *Store) stage(ctx context.Context, key, blockID string, r io.Reader, durable bool) (int64, error) {
	kd, err := s.keyDir(key)
	if err != nil {
		return 0, err
	}
	if err := blobstore.ValidBlockID(blockID); err != nil {
		return 0, fmt.Errorf("stage %q: %w", key, err)
	}
	if err := ctxErr(ctx, "stage", key); err != nil {
		return 0, err
	}
	var f *os.File
	for range 10 { // garbage collection may remove an empty key dir meanwhile
		if err = s.ensureKeyDir(kd); err != nil {
			return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, err)
		}
		f, err = os.CreateTemp(kd, tempPrefix+"*")
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, err)
	}
	tmp := f.Name()
	var n int64
	if br, ok := r.(*bytes.Reader); ok {
		n, err = br.WriteTo(f) // in memory already: no copy through a buffer
	} else {
		n, err = s.copyCtx(ctx, f, r)
	}
	if err == nil && durable {
		if err := s.publishDurable(f, kd, tmp, key, blockID); err != nil {
			return 0, err
		}
		return n, nil
	}
	if err == nil {
		startWriteback(f) // fsynced by the commit that uses it
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(kd, stagedPrefix+blockID))
	}
	if err != nil {
		if rerr := os.Remove(tmp); rerr != nil {
			s.log.Warn("blobstore: remove temp block", "path", tmp, "err", rerr)
		}
		return 0, fmt.Errorf("stage %q block %s: %w", key, blockID, err)
	}
	return n, nil
}

// publishDurable gives the written temp file f (path tmp in kd) the name
// of staged block blockID and makes both its data and that name durable
// in one round: the file's fsync and the directory's run at once, where
// syncing the data before the rename and the directory after it cost two
// journal commits one after the other, each waiting for the data other
// writers have in flight. The name comes first, so it may name torn data
// until the round ends; that is safe only for a name nothing refers to,
// so it is made by link(2), which fails on an existing staging of the id
// (its bytes may be acknowledged): such a restaging syncs first and
// renames after, as before. Nobody learns the id before the stage returns
// (Put Block records it afterwards, fs commits it afterwards), and a
// crash leaves the torn staging to garbage collection. f is closed.
func (s *Store) publishDurable(f *os.File, kd, tmp, key, blockID string) error {
	staged := filepath.Join(kd, stagedPrefix+blockID)
	err := os.Link(tmp, staged)
	if errors.Is(err, fs.ErrExist) {
		// Restaging an id: its old bytes stay until the new ones are durable.
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, staged)
		}
		if err == nil {
			err = syncDir(kd)
		} else if rerr := os.Remove(tmp); rerr != nil {
			s.log.Warn("blobstore: remove temp block", "path", tmp, "err", rerr)
		}
		if err != nil {
			return fmt.Errorf("stage %q block %s: %w", key, blockID, err)
		}
		return nil
	}
	linked := err == nil
	if linked {
		err = os.Remove(tmp) // before the directory's sync, which then covers it
	}
	dirSynced := make(chan error, 1)
	if err == nil {
		go func() { dirSynced <- syncDir(kd) }()
		err = f.Sync()
		if derr := <-dirSynced; err == nil {
			err = derr
		}
	}
	if err != nil {
		// Neither name is left naming bytes that may be torn: staged only
		// while it is still this call's file (a concurrent restaging of
		// the id may have renamed its own over it).
		_ = os.Remove(tmp)
		if linked {
			if mine, serr := f.Stat(); serr == nil {
				if cur, serr := os.Stat(staged); serr == nil && os.SameFile(mine, cur) {
					_ = os.Remove(staged)
				}
			}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stage %q block %s: %w", key, blockID, err)
	}
	return nil
}

// copyCtx copies r to w through a pooled buffer, checking ctx between
// chunks.
func (s *Store) copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		// Fill the buffer as far as the reader gives, so writes are large.
		m, rerr := io.ReadAtLeast(r, buf, len(buf))
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return n, nil
		default:
			return n, rerr
		}
	}
}
