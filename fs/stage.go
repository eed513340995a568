package fs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/blobshare/blobshare/blobstore"
)

// zeroBlockID names the all-zero block of BlockSize bytes that fills holes.
const zeroBlockID = "z"

// newBlockID returns a fresh random block id (unique across processes, so
// two writers never replace each other's staged blocks).
func newBlockID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("fs: crypto/rand: %v", err)) // the runtime guarantees Read does not fail
	}
	return "b" + hex.EncodeToString(b[:])
}

// iv is a half-open byte interval [lo, hi) within a block.
type iv struct{ lo, hi int64 }

// part is a partially written block: its dirty intervals, and their bytes
// either in buf (in memory, at block offsets) or in the spill file at
// idx*BlockSize + offset.
type part struct {
	buf []byte
	ivs []iv // sorted, disjoint, non-adjacent
}

func (p *part) add(lo, hi int64) {
	ivs := append(p.ivs, iv{lo, hi})
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].lo < ivs[j].lo })
	out := ivs[:0]
	for _, v := range ivs {
		if n := len(out); n > 0 && v.lo <= out[n-1].hi {
			if v.hi > out[n-1].hi {
				out[n-1].hi = v.hi
			}
			continue
		}
		out = append(out, v)
	}
	p.ivs = out
}

func (p *part) complete() bool {
	return len(p.ivs) == 1 && p.ivs[0].lo == 0 && p.ivs[0].hi == BlockSize
}

// stage holds one writer's uncommitted writes to one file: whole blocks
// already staged in the blob store, partial blocks in memory or spilled.
// Memory is bounded by memBlks blocks; a 10 GiB write stages its whole
// blocks as it goes and never holds more than that.
type stage struct {
	fsys    *FileSystem
	file    FileID
	memBlks int
	// durable: whole blocks are staged durably (blobstore.StageBlockDurable)
	// as they arrive, outside any lock, so that writers' data syncs
	// overlap and the commit that names them finds them clean. A REST
	// write is acknowledged durable; its commit, serialised per file,
	// then syncs no data of its own.
	durable bool

	full    map[int64]string // block index → staged block id (or zeroBlockID)
	parts   map[int64]*part
	inMem   []int64 // indexes of parts with a buf, oldest first
	spill   *os.File
	end     int64 // highest byte written + 1 (0 when nothing)
	cleared []iv  // absolute ranges cleared (REST Put Range clear)

	// Blocks completed in memory are stored in the background (see
	// stageAhead): ahead holds a slot per block on its way, inflight
	// counts them, and bgErr is the first of them to fail.
	ahead    chan struct{}
	inflight sync.WaitGroup
	bgMu     sync.Mutex
	bgErr    error
}

// stageAhead is how many completed blocks one stage stores in the
// background while its writer goes on. The next block's bytes then arrive
// through FUSE (or a REST body) while the last one is written to the
// blob store: on the local store that write took 60% of a sequential
// writer's time, and on Azure it is an upload.
const stageAhead = 2

func newStage(fsys *FileSystem, file FileID) *stage {
	return &stage{fsys: fsys, file: file, memBlks: fsys.memBlks, full: map[int64]string{}, parts: map[int64]*part{}}
}

func (s *stage) empty() bool { return len(s.full) == 0 && len(s.parts) == 0 }

// touches reports whether staged data lies in blocks overlapping [off, off+n).
func (s *stage) touches(off, n int64) bool {
	if s.empty() || n <= 0 {
		return false
	}
	first, last := off/BlockSize, (off+n-1)/BlockSize
	if last-first > int64(len(s.full)+len(s.parts)) {
		for i := range s.full {
			if i >= first && i <= last {
				return true
			}
		}
		for i := range s.parts {
			if i >= first && i <= last {
				return true
			}
		}
		return false
	}
	for i := first; i <= last; i++ {
		if _, ok := s.full[i]; ok {
			return true
		}
		if _, ok := s.parts[i]; ok {
			return true
		}
	}
	return false
}

// hasFull reports whether block i was staged whole (its bytes can no
// longer be read back before a commit).
func (s *stage) hasFull(i int64) bool { _, ok := s.full[i]; return ok }

// write stages p at off. The caller has made sure no block p touches is in
// s.full (commit first otherwise).
func (s *stage) write(ctx context.Context, p []byte, off int64) error {
	if err := s.backgroundErr(); err != nil {
		return err
	}
	for len(p) > 0 {
		idx, boff := off/BlockSize, off%BlockSize
		n := int64(len(p))
		if n > BlockSize-boff {
			n = BlockSize - boff
		}
		if err := s.writeBlock(ctx, idx, boff, p[:n]); err != nil {
			return err
		}
		p, off = p[n:], off+n
		if off > s.end {
			s.end = off
		}
	}
	return nil
}

func (s *stage) writeBlock(ctx context.Context, idx, boff int64, p []byte) error {
	n := int64(len(p))
	pt := s.parts[idx]
	if pt == nil {
		if boff == 0 && n == BlockSize {
			// A whole block: stage it straight away.
			id := newBlockID()
			if _, err := s.stageBlock(ctx, id, bytes.NewReader(p)); err != nil {
				return fmt.Errorf("stage block %d: %w", idx, err)
			}
			s.full[idx] = id
			return nil
		}
		pt = &part{}
		s.parts[idx] = pt
		if err := s.makeRoom(); err != nil {
			return err
		}
		pt.buf = s.newPartBuf(boff + n)
		s.inMem = append(s.inMem, idx)
	}
	if pt.buf != nil {
		if int64(len(pt.buf)) < boff+n {
			// Grow on demand: a small write to a new file does not pay
			// for a whole block.
			need := boff + n
			if int64(cap(pt.buf)) < need {
				nb := s.newPartBuf(max(2*int64(cap(pt.buf)), need))
				pt.buf = append(nb, pt.buf...)
			}
			pt.buf = pt.buf[:need]
		}
		copy(pt.buf[boff:], p)
	} else if _, err := s.spill.WriteAt(p, idx*BlockSize+boff); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	pt.add(boff, boff+n)
	if pt.complete() && pt.buf != nil {
		// The part's buffer goes with the block to the background.
		buf := s.takePart(idx)[:BlockSize]
		id := newBlockID()
		s.full[idx] = id
		s.storeInBackground(ctx, idx, id, buf)
		return nil
	}
	if pt.complete() {
		rd, err := s.partReader(idx, pt)
		if err != nil {
			return err
		}
		id := newBlockID()
		if _, err := s.stageBlock(ctx, id, rd); err != nil {
			return fmt.Errorf("stage block %d: %w", idx, err)
		}
		s.dropPart(idx)
		s.full[idx] = id
	}
	return nil
}

// stageBlock stages one whole block of the file, durably when s.durable.
func (s *stage) stageBlock(ctx context.Context, id string, r io.Reader) (int64, error) {
	if s.durable {
		return blobstore.StageBlockDurable(ctx, s.fsys.store, blobKey(s.file), id, r)
	}
	return s.fsys.store.StageBlock(ctx, blobKey(s.file), id, r)
}

// storeInBackground stages block idx from buf, a block buffer the caller
// gives up, under id on a goroutine of its own; it waits only while
// stageAhead blocks are on their way already. A failure is reported by
// the stage's next write and by settle, so by the flush, fsync or close
// that would have committed the block.
func (s *stage) storeInBackground(ctx context.Context, idx int64, id string, buf []byte) {
	if s.ahead == nil {
		s.ahead = make(chan struct{}, stageAhead)
	}
	s.ahead <- struct{}{}
	s.inflight.Add(1)
	// The block outlives the call that completed it.
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer s.inflight.Done()
		_, err := s.stageBlock(ctx, id, bytes.NewReader(buf))
		s.fsys.putBuf(buf)
		<-s.ahead
		if err != nil {
			s.bgMu.Lock()
			if s.bgErr == nil {
				s.bgErr = fmt.Errorf("stage block %d: %w", idx, err)
			}
			s.bgMu.Unlock()
		}
	}()
}

func (s *stage) backgroundErr() error {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	return s.bgErr
}

// settle waits for the blocks stored in the background and returns the
// first error among them: every block s.full names is staged when it
// returns nil.
func (s *stage) settle() error {
	s.inflight.Wait()
	return s.backgroundErr()
}

// newPartBuf returns an empty buffer for at least size bytes of a block.
// Small ones are allocated to fit; from an eighth of a block on — a
// sequential writer, whose FUSE writes are up to 1 MiB — a recycled whole
// block, so the part neither grows by copies nor leaves garbage behind.
func (s *stage) newPartBuf(size int64) []byte {
	if size >= BlockSize/8 {
		return s.fsys.getBuf()[:0]
	}
	return make([]byte, 0, max(4<<10, size))
}

// makeRoom spills the oldest in-memory part when the budget is used up.
func (s *stage) makeRoom() error {
	if len(s.inMem) < s.memBlks {
		return nil
	}
	idx := s.inMem[0]
	s.inMem = s.inMem[1:]
	pt := s.parts[idx]
	if s.spill == nil {
		f, err := os.CreateTemp(s.fsys.spillDir, "blobshare-spill-*")
		if err != nil {
			return fmt.Errorf("spill file: %w", err)
		}
		// Unlinked at once: the kernel reclaims it even after a crash.
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return fmt.Errorf("spill file: %w", err)
		}
		s.spill = f
	}
	for _, v := range pt.ivs {
		if _, err := s.spill.WriteAt(pt.buf[v.lo:v.hi], idx*BlockSize+v.lo); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
	}
	s.fsys.putBuf(pt.buf)
	pt.buf = nil
	return nil
}

// partReader reads a complete part's block.
func (s *stage) partReader(idx int64, pt *part) (io.Reader, error) {
	if pt.buf != nil {
		return bytes.NewReader(pt.buf[:BlockSize]), nil
	}
	return io.NewSectionReader(s.spill, idx*BlockSize, BlockSize), nil
}

// overlay copies a part's dirty bytes onto block content buf.
func (s *stage) overlay(idx int64, pt *part, buf []byte) error {
	for _, v := range pt.ivs {
		hi := v.hi
		if hi > int64(len(buf)) {
			hi = int64(len(buf))
		}
		if v.lo >= hi {
			continue
		}
		if pt.buf != nil {
			copy(buf[v.lo:hi], pt.buf[v.lo:hi])
			continue
		}
		if _, err := s.spill.ReadAt(buf[v.lo:hi], idx*BlockSize+v.lo); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
	}
	return nil
}

func (s *stage) dropPart(idx int64) { s.fsys.putBuf(s.takePart(idx)) }

// takePart forgets part idx and returns its buffer (nil when it has none),
// which is the caller's from then on.
func (s *stage) takePart(idx int64) []byte {
	pt := s.parts[idx]
	if pt == nil {
		return nil
	}
	if pt.buf != nil {
		for i, v := range s.inMem {
			if v == idx {
				s.inMem = append(s.inMem[:i], s.inMem[i+1:]...)
				break
			}
		}
	}
	delete(s.parts, idx)
	return pt.buf
}

// clearRange stages zeros over [off, off+n): whole blocks become zero-block
// references, the edges are written as zeros.
func (s *stage) clearRange(ctx context.Context, off, n int64) error {
	end := off + n
	s.cleared = append(s.cleared, iv{off, end})
	var zeros []byte
	for off < end {
		idx, boff := off/BlockSize, off%BlockSize
		m := BlockSize - boff
		if m > end-off {
			m = end - off
		}
		if boff == 0 && m == BlockSize {
			s.dropPart(idx)
			s.full[idx] = zeroBlockID
		} else {
			if zeros == nil {
				zeros = make([]byte, BlockSize)
			}
			if err := s.writeBlock(ctx, idx, boff, zeros[:m]); err != nil {
				return err
			}
		}
		off += m
		if off > s.end {
			s.end = off
		}
	}
	return nil
}

// reset forgets everything staged (after a commit or a discard), the
// failure of a block stored in the background included.
func (s *stage) reset() {
	s.inflight.Wait()
	s.bgErr = nil
	for idx := range s.parts {
		s.dropPart(idx)
	}
	s.full = map[int64]string{}
	s.end = 0
	s.cleared = nil
	if s.spill != nil {
		s.spill.Close()
		s.spill = nil
	}
}

// getBuf / putBuf recycle block buffers.
func (fsys *FileSystem) getBuf() []byte {
	if b, ok := fsys.bufs.Get().(*[]byte); ok {
		clear(*b)
		return *b
	}
	return make([]byte, BlockSize)
}

func (fsys *FileSystem) putBuf(b []byte) {
	if cap(b) == BlockSize {
		b = b[:BlockSize]
		fsys.bufs.Put(&b)
	}
}

// zeroReader reads zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
