package azure

import (
	"io"
	"os"
	"sync"
	"time"
)

// keptTTL is how long a staged block's copy is kept when no commit through
// this Store names it (an abandoned write): long enough for a handle that
// stages blocks and commits them on close.
const keptTTL = time.Hour

// keptMax bounds the bytes of all copies: a writer that stages a huge file
// before committing it (a handle closed at the end) keeps the first GiB;
// blocks past that are not kept and, if discarded, fail the commit.
const keptMax = 1 << 30

// keptBlocks holds a copy of every block this Store staged that no commit
// through it has named yet, in an unlinked temp file each, so that
// CommitBlocks can stage a block again when another writer's Put Block
// List discarded it (Azure discards every uncommitted block a commit does
// not name). Copies go when a commit names them, or after keptTTL.
type keptBlocks struct {
	mu    sync.Mutex
	m     map[keptRef]*keptBlock
	bytes int64 // of the copies in m, plus reservations
	// oldest is no later than the oldest copy's time, so that reserve
	// looks for expired copies only when one may be there, not at every
	// block staged.
	oldest time.Time
}

type keptRef struct{ key, id string }

// keptBlock is one copy. refs counts restages reading it; a dropped copy
// is closed when the last of them is done.
type keptBlock struct {
	f       *os.File
	size    int64
	at      time.Time
	refs    int
	dropped bool
}

// reserve makes room for a copy of size bytes, dropping copies older than
// keptTTL first; false when keptMax would be exceeded (the block is then
// not kept). A reservation is ended by put or unreserve.
func (k *keptBlocks) reserve(size int64) bool {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.oldest) > keptTTL {
		k.oldest = now
		for r, b := range k.m {
			if now.Sub(b.at) > keptTTL {
				k.dropLocked(r, b)
			} else if b.at.Before(k.oldest) {
				k.oldest = b.at
			}
		}
	}
	if k.bytes+size > keptMax {
		return false
	}
	k.bytes += size
	return true
}

func (k *keptBlocks) unreserve(size int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bytes -= size
}

// put keeps f (size bytes, read with ReadAt, reserved) for key's block
// id, replacing an earlier staging of the id.
func (k *keptBlocks) put(key, id string, f *os.File, size int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[keptRef]*keptBlock{}
	}
	r := keptRef{key, id}
	if old, ok := k.m[r]; ok {
		k.dropLocked(r, old)
	}
	now := time.Now()
	if len(k.m) == 0 {
		k.oldest = now
	}
	k.m[r] = &keptBlock{f: f, size: size, at: now}
}

// open returns a reader of key's block id and a function to call when
// done with it, or ok false when no copy is kept.
func (k *keptBlocks) open(key, id string) (rd *io.SectionReader, done func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.m[keptRef{key, id}]
	if !ok {
		return nil, nil, false
	}
	b.refs++
	return io.NewSectionReader(b.f, 0, b.size), func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		b.refs--
		if b.dropped && b.refs == 0 {
			b.f.Close()
		}
	}, true
}

// any reports whether a copy of one of key's blocks ids is kept.
func (k *keptBlocks) any(key string, ids []string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		if _, ok := k.m[keptRef{key, id}]; ok {
			return true
		}
	}
	return false
}

// committed drops the copies of ids: a commit of key named them.
func (k *keptBlocks) committed(key string, ids []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		r := keptRef{key, id}
		if b, ok := k.m[r]; ok {
			k.dropLocked(r, b)
		}
	}
}

func (k *keptBlocks) dropLocked(r keptRef, b *keptBlock) {
	delete(k.m, r)
	k.bytes -= b.size
	b.dropped = true
	if b.refs == 0 {
		b.f.Close()
	}
}

// tempFile is an unlinked temp file: it lives until closed, and a crash
// leaves nothing behind.
func tempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "blobshare-block-*")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}
