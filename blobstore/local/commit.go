package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/blobshare/blobshare/blobstore"
)

// CommitBlocks writes a new manifest under the key lock. Staged blocks are
// hard-linked to fresh b-<unique> names (no data copy; committed blocks
// are reused by name); the new links' files, the directory holding their
// names and the manifest's temp file are synced in one round
// (syncForCommit; the blocks' writeback started when they were staged),
// the manifest is renamed over the old one, and the directory synced. Then
// the consumed staged names and the old version's blocks that the new one
// does not use are removed (readers already reading hold open fds).
func (s *Store) CommitBlocks(ctx context.Context, key string, ids []string, cond blobstore.Conditions) (blobstore.Info, error) {
	kd, err := s.keyDir(key)
	if err != nil {
		return blobstore.Info{}, err
	}
	for _, id := range ids {
		if err := blobstore.ValidBlockID(id); err != nil {
			return blobstore.Info{}, fmt.Errorf("commit %q: %w", key, err)
		}
	}
	if err := ctxErr(ctx, "commit", key); err != nil {
		return blobstore.Info{}, err
	}
	unlock, err := s.lockKey(ctx, key, kd)
	if err != nil {
		return blobstore.Info{}, err
	}
	defer unlock()

	cur, err := readManifest(key, kd)
	if err != nil && !errors.Is(err, blobstore.ErrNotFound) {
		return blobstore.Info{}, err
	}
	if err := checkConds(key, cur, cond); err != nil {
		return blobstore.Info{}, err
	}
	committed := map[string]manifestBlk{}
	if cur != nil {
		for _, b := range cur.Blocks {
			committed[b.ID] = b
		}
	}

	// Resolve every id first: staged (linked to a new name) wins over
	// committed, as Azure's "Latest" does.
	resolved := make(map[string]manifestBlk, len(ids))
	var linked []string // new b- names, removed again on failure
	var consumed []string
	fail := func(err error) (blobstore.Info, error) {
		for _, name := range linked {
			_ = os.Remove(filepath.Join(kd, name))
		}
		return blobstore.Info{}, err
	}
	isStaged, err := stagedSet(kd, len(ids))
	if err != nil {
		return fail(fmt.Errorf("commit %q: %w", key, err))
	}
	for _, id := range ids {
		if _, ok := resolved[id]; ok {
			continue
		}
		staged := filepath.Join(kd, stagedPrefix+id)
		name := blockPrefix + randHex(12)
		err := fs.ErrNotExist
		if isStaged(id) {
			err = os.Link(staged, filepath.Join(kd, name))
		}
		switch {
		case err == nil:
			linked = append(linked, name)
			consumed = append(consumed, staged)
			st, err := os.Stat(filepath.Join(kd, name))
			if err != nil {
				return fail(fmt.Errorf("commit %q block %s: %w", key, id, err))
			}
			resolved[id] = manifestBlk{ID: id, Size: st.Size(), File: name}
		case errors.Is(err, fs.ErrNotExist):
			b, ok := committed[id]
			if !ok {
				return fail(fmt.Errorf("commit %q: block %s neither staged nor committed: %w", key, id, blobstore.ErrNotFound))
			}
			resolved[id] = b
		default:
			return fail(fmt.Errorf("commit %q block %s: %w", key, id, err))
		}
	}
	if err := ctxErr(ctx, "commit", key); err != nil {
		return fail(err)
	}

	m := &manifest{Key: key, ETag: newETag(), Modified: s.now().UTC(), Blocks: make([]manifestBlk, 0, len(ids))}
	if cur != nil && m.ETag == cur.ETag { // 64 random bits; be sure anyway
		m.ETag = newETag()
	}
	for _, id := range ids {
		m.Blocks = append(m.Blocks, resolved[id])
	}
	data := m.marshal()
	// One round of syncs before the rename, all at once: the new block
	// links' files, the manifest's temp file (nothing names it until the
	// rename) and, once both the links and the temp file exist, the key
	// directory holding their names. Concurrent fsyncs share the file
	// system's journal commits; one after the other, each cost a journal
	// commit of its own under the key lock (the FileREST profile: 23 ms
	// of a group commit's 26 in CommitBlocks, three rounds of syncs).
	tmp, err := s.syncForCommit(kd, linked, data)
	if err != nil {
		return fail(fmt.Errorf("commit %q: %w", key, err))
	}
	if renamed, err := s.installManifest(kd, tmp, false); err != nil {
		if renamed {
			// The new manifest is in place (readers may see it) but its
			// durability is unknown: keep everything it names; the
			// old version's blocks are left to garbage collection.
			return blobstore.Info{}, fmt.Errorf("commit %q: committed but not synced: %w", key, err)
		}
		return fail(fmt.Errorf("commit %q: %w", key, err))
	}

	// Committed. Clean up best effort; garbage collection catches the rest.
	for _, p := range consumed {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("blobstore: remove consumed staged block", "path", p, "err", err)
		}
	}
	if cur != nil {
		s.removeUnreferenced(kd, cur, m)
	}
	return m.info(key), nil
}

// stagedScanFrom is the length of a block list from which CommitBlocks
// reads the key directory's names once rather than trying a link per id:
// a FileREST upload's every commit names all the file's blocks (256 for
// 1 GiB), nearly all of them committed already, and 256 failed link(2)
// calls under the key lock cost more than the commit's own syncs.
const stagedScanFrom = 16

// stagedSet reports which block ids may have a staging in kd, for a commit
// of n ids: every id when n is small (the link tells), else those whose
// s- name was in the directory when read. The caller holds the key lock,
// so no staging it finds disappears (garbage collection and commits take
// the lock); a staging that appears meanwhile is of a stage that did not
// return before the commit began.
func stagedSet(kd string, n int) (func(id string) bool, error) {
	if n < stagedScanFrom {
		return func(string) bool { return true }, nil
	}
	d, err := os.Open(kd)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", kd, err)
	}
	staged := map[string]bool{}
	for _, name := range names {
		if id, ok := strings.CutPrefix(name, stagedPrefix); ok {
			staged[id] = true
		}
	}
	return func(id string) bool { return staged[id] }, nil
}

// writeManifest replaces kd/m with data durably. syncLinks: new block
// links exist in kd and must be durable before the manifest names them.
// renamed reports whether the new manifest took the place of the old one
// (then an error means only that syncing the directory failed).
func (s *Store) writeManifest(kd string, data []byte, syncLinks bool) (renamed bool, err error) {
	tmp, err := writeTemp(kd, data)
	if err != nil {
		return false, err
	}
	return s.installManifest(kd, tmp, syncLinks)
}

// syncForCommit writes data to a new mt- file in kd and makes it, the
// files of kd named by linked and their names in kd durable, in one round
// of concurrent fsyncs (the links exist before the call; the temp file's
// name need not be durable, only what the rename will make of it). It
// returns the temp file's path.
func (s *Store) syncForCommit(kd string, linked []string, data []byte) (string, error) {
	var linksSynced chan error
	if len(linked) > 0 {
		linksSynced = make(chan error, 2)
		go func() { linksSynced <- syncFiles(kd, linked) }()
		go func() { linksSynced <- syncDir(kd) }()
	}
	tmp, err := writeTemp(kd, data)
	if linksSynced != nil {
		for range 2 {
			if lerr := <-linksSynced; lerr != nil && err == nil {
				_ = os.Remove(tmp)
				err = lerr
			}
		}
	}
	if err != nil {
		return "", err
	}
	return tmp, nil
}

// writeTemp writes data to a new mt- file in kd and syncs it.
func writeTemp(kd string, data []byte) (string, error) {
	f, err := os.CreateTemp(kd, mtempPrefix+"*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// installManifest renames the synced manifest temp file tmp over kd/m
// and syncs kd (first too when syncLinks: new block links must be durable
// before the manifest names them). On failure before the rename tmp is
// removed.
func (s *Store) installManifest(kd, tmp string, syncLinks bool) (renamed bool, err error) {
	if syncLinks {
		err = syncDir(kd)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(kd, manifestName))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	return true, syncDir(kd)
}

// removeUnreferenced removes the blocks of old that next does not use.
// Caller holds the key lock.
func (s *Store) removeUnreferenced(kd string, old, next *manifest) {
	keep := map[string]bool{}
	if next != nil {
		for _, b := range next.Blocks {
			keep[b.File] = true
		}
	}
	for _, b := range old.Blocks {
		if keep[b.File] {
			continue
		}
		keep[b.File] = true // an old list may name a file twice
		p := filepath.Join(kd, b.File)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("blobstore: remove unreferenced block", "path", p, "err", err)
		}
	}
}

// syncFiles fsyncs the named files of dir, several at a time (concurrent
// fsyncs share journal commits).
func syncFiles(dir string, names []string) error {
	const parallel = 8
	sem := make(chan struct{}, parallel)
	errs := make(chan error, len(names))
	for _, name := range names {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- syncFile(filepath.Join(dir, name))
		}()
	}
	var first error
	for range names {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
