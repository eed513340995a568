package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/blobshare/blobshare/blobstore"
)

// Page blob bounds.
const (
	PageSize       = 512
	PageChunkSize  = 4 << 20 // content-store block per chunk of the blob
	MaxPageBlobLen = 8 << 40 // 8 TiB
	MaxPutPage     = 4 << 20
)

// Page blob errors.
var (
	// ErrInvalidPageRange: a range not aligned to 512-byte pages or past
	// the blob's length (416 InvalidPageRange).
	ErrInvalidPageRange = errors.New("invalid page range")
	// ErrInvalidPageBlobLength: a length that is not a multiple of 512
	// or over 8 TiB (400 InvalidHeaderValue).
	ErrInvalidPageBlobLength = errors.New("invalid page blob length")
	// ErrSequenceNumberCondition: x-ms-if-sequence-number-le/lt/eq
	// failed (412 SequenceNumberConditionNotMet).
	ErrSequenceNumberCondition = errors.New("sequence number condition not met")
)

// SequenceConditions are Put Page's x-ms-if-sequence-number-* headers.
type SequenceConditions struct {
	LE, LT, EQ *int64
}

func (c SequenceConditions) check(n int64) error {
	if c.LE != nil && n > *c.LE || c.LT != nil && n >= *c.LT || c.EQ != nil && n != *c.EQ {
		return ErrSequenceNumberCondition
	}
	return nil
}

// CreatePageBlob creates (or replaces) an all-zero page blob of length
// bytes (Put Blob with x-ms-blob-type PageBlob).
func (s *Service) CreatePageBlob(ctx context.Context, container, name string, length, sequence int64, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if length < 0 || length%PageSize != 0 || length > MaxPageBlobLen {
		return Blob{}, fmt.Errorf("blob %s/%s: length %d: %w", container, name, length, ErrInvalidPageBlobLength)
	}
	if err := checkTier(container, name, PageBlob, o.Tier); err != nil {
		return Blob{}, err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	old, _, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if err := s.checkWrite(old, old.Committed, o, writePutBlob); err != nil {
		return Blob{}, err
	}
	key := contentKey(container, name)
	now := s.Now()
	b := Blob{Container: container, Name: name, Type: PageBlob, ContentKey: key, Committed: true,
		Size: length, ETag: newETag(), Created: now, LastModified: now, Properties: o.Properties, Metadata: o.Metadata,
		Lease: Lease{State: LeaseAvailable}, Tags: o.Tags, Page: &PageState{SequenceNumber: sequence, Lineage: newLineage()},
		EncryptionKeySHA256: o.Cond.newKeyHash()}
	if old.Committed {
		b.Created = old.Created
	}
	if o.Tier != "" {
		b.Tier, b.TierChanged = o.Tier, now
	}
	if hasRow(old) {
		b.Lease = old.Lease.AfterWrite(now)
	}
	over, err := s.keepOverwritten(ctx, old)
	if err != nil {
		return Blob{}, err
	}
	// A blob created in one step discards the staged blocks (see
	// commit).
	if err := s.commitContent(ctx, &b, nil, true); err != nil {
		return Blob{}, errors.Join(err, s.recordOverwritten(ctx, over, false))
	}
	if err := s.recordOverwritten(ctx, over, true); err != nil {
		return Blob{}, err
	}
	return b, nil
}

// PutPages writes r's bytes to the pages [start, end] (clear: zeros, r
// unused) of a page blob. Each 4 MiB chunk the range touches is rewritten
// whole in the content store (old bytes around the range, new ones in
// it), under the blob's lock, so concurrent writers of one chunk never
// lose each other's pages.
func (s *Service) PutPages(ctx context.Context, container, name string, start, end int64, r io.Reader, clear bool, seq SequenceConditions, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if start < 0 || start%PageSize != 0 || (end+1)%PageSize != 0 || end < start || (!clear && end-start+1 > MaxPutPage) {
		return Blob{}, fmt.Errorf("blob %s/%s: pages %d-%d: %w", container, name, start, end, ErrInvalidPageRange)
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	// A missing blob is 404 BlobNotFound before any condition (Azure
	// answers Put Page with If-Match on a missing blob so; Azurite 412).
	b, err := s.committedBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if b.Type != PageBlob {
		return Blob{}, fmt.Errorf("blob %s/%s is a %s: %w", container, name, b.Type, ErrInvalidBlobType)
	}
	if err := s.checkWrite(b, true, o, writeUpdate); err != nil {
		return Blob{}, err
	}
	ps := b.Page
	if ps == nil {
		ps = &PageState{}
	}
	if err := seq.check(ps.SequenceNumber); err != nil {
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if end >= b.Size {
		return Blob{}, fmt.Errorf("blob %s/%s: pages %d-%d past length %d: %w", container, name, start, end, b.Size, ErrInvalidPageRange)
	}
	if clear {
		r = nil
	}
	chunks := append([]PageChunk(nil), ps.Chunks...)
	for i := start / PageChunkSize; i <= end/PageChunkSize; i++ {
		cs := i * PageChunkSize
		ce := min(cs+PageChunkSize, b.Size)
		a, z := max(start, cs), min(end+1, ce)
		// old bytes before and after the range, then the new ones
		oldBefore, err := s.chunkReader(ctx, b, chunks, i, cs, a)
		if err != nil {
			return Blob{}, err
		}
		oldAfter, err := s.chunkReader(ctx, b, chunks, i, z, ce)
		if err != nil {
			oldBefore.Close()
			return Blob{}, err
		}
		var middle io.Reader = io.LimitReader(zeros{}, z-a)
		if r != nil {
			middle = io.LimitReader(r, z-a)
		}
		id := blobstore.NewBlockID()
		n, err := s.content.StageBlock(ctx, b.ContentKey, id, io.MultiReader(oldBefore, middle, oldAfter))
		oldBefore.Close()
		oldAfter.Close()
		if err != nil {
			return Blob{}, fmt.Errorf("blob %s/%s: put page: %w", container, name, err)
		}
		if n != ce-cs {
			return Blob{}, fmt.Errorf("blob %s/%s: put page: body shorter than the range: %w", container, name, io.ErrUnexpectedEOF)
		}
		chunks = setChunk(chunks, PageChunk{Index: i, StoreID: id, Size: n})
	}
	ids := make([]string, len(chunks))
	for j, c := range chunks {
		ids[j] = c.StoreID
	}
	nps := *ps
	nps.Chunks = chunks
	if clear {
		nps.Ranges = subtractRange(ps.Ranges, PageRange{start, end})
	} else {
		nps.Ranges = addRange(ps.Ranges, PageRange{start, end})
	}
	nps.touch(PageRange{start, end})
	b.Page = &nps
	b.ETag, b.LastModified = newETag(), s.Now()
	b.Lease = b.Lease.AfterWrite(b.LastModified)
	if err := s.commitContent(ctx, &b, ids, false); err != nil {
		return Blob{}, err
	}
	return b, nil
}

// chunkReader streams the current bytes [a, z) of chunk i (zeros where
// nothing is stored).
func (s *Service) chunkReader(ctx context.Context, b Blob, chunks []PageChunk, i, a, z int64) (io.ReadCloser, error) {
	if z <= a {
		return io.NopCloser(eof{}), nil
	}
	var off int64
	for _, c := range chunks {
		if c.Index == i {
			cs := i * PageChunkSize
			stored := min(z, cs+c.Size)
			if stored <= a {
				break
			}
			rc, _, err := s.content.ReadRange(ctx, b.ContentKey, off+(a-cs), stored-a)
			if err != nil {
				return nil, fmt.Errorf("blob %s/%s: read chunk %d: %w", b.Container, b.Name, i, err)
			}
			return struct {
				io.Reader
				io.Closer
			}{io.MultiReader(rc, io.LimitReader(zeros{}, z-stored)), rc}, nil
		}
		if c.Index > i {
			break
		}
		off += c.Size
	}
	return io.NopCloser(io.LimitReader(zeros{}, z-a)), nil
}

func setChunk(chunks []PageChunk, c PageChunk) []PageChunk {
	j := sort.Search(len(chunks), func(k int) bool { return chunks[k].Index >= c.Index })
	if j < len(chunks) && chunks[j].Index == c.Index {
		chunks[j] = c
		return chunks
	}
	chunks = append(chunks, PageChunk{})
	copy(chunks[j+1:], chunks[j:])
	chunks[j] = c
	return chunks
}

// openPages streams bytes [off, off+n) of a page blob: one read of the
// stored chunks the range touches (one content version), zeros between.
func (s *Service) openPages(ctx context.Context, b Blob, off, n int64) (io.ReadCloser, error) {
	type piece struct {
		stored int64 // offset in the stored blob; -1 for zeros
		n      int64
	}
	var pieces []piece
	var chunks []PageChunk
	if b.Page != nil {
		chunks = b.Page.Chunks
	}
	end := off + n
	var storedOff int64
	ci := 0
	for i := off / PageChunkSize; n > 0 && i <= (end-1)/PageChunkSize; i++ {
		cs := i * PageChunkSize
		a, z := max(off, cs), min(end, cs+PageChunkSize)
		for ci < len(chunks) && chunks[ci].Index < i {
			storedOff += chunks[ci].Size
			ci++
		}
		if ci < len(chunks) && chunks[ci].Index == i {
			dataTo := min(z, cs+chunks[ci].Size)
			if dataTo > a {
				pieces = append(pieces, piece{stored: storedOff + (a - cs), n: dataTo - a})
				a = dataTo
			}
		}
		if z > a {
			pieces = append(pieces, piece{stored: -1, n: z - a})
		}
	}
	first, last := int64(-1), int64(-1)
	for _, p := range pieces {
		if p.stored >= 0 {
			if first < 0 {
				first = p.stored
			}
			last = p.stored + p.n
		}
	}
	var src io.ReadCloser = io.NopCloser(eof{})
	if first >= 0 {
		rc, _, err := s.content.ReadRange(ctx, b.ContentKey, first, last-first)
		if err != nil {
			return nil, fmt.Errorf("blob %s/%s: read pages: %w", b.Container, b.Name, err)
		}
		src = rc
	}
	readers := make([]io.Reader, 0, 2*len(pieces))
	pos := first
	for _, p := range pieces {
		if p.stored < 0 {
			readers = append(readers, io.LimitReader(zeros{}, p.n))
			continue
		}
		if skip := p.stored - pos; skip > 0 {
			readers = append(readers, discard{src, skip})
		}
		readers = append(readers, io.LimitReader(src, p.n))
		pos = p.stored + p.n
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(readers...), src}, nil
}

// PageRanges returns the written page ranges within [from, to] (to < 0:
// to the end).
func (s *Service) PageRanges(ctx context.Context, container, name, snapshot, leaseID string, cond Conditions, from, to int64) (Blob, []PageRange, error) {
	b, err := s.GetBlob(ctx, container, name, snapshot, leaseID, cond)
	if err != nil {
		return b, nil, err
	}
	if b.Type != PageBlob {
		return b, nil, fmt.Errorf("blob %s/%s is a %s: %w", container, name, b.Type, ErrInvalidBlobType)
	}
	var out []PageRange
	if b.Page == nil {
		return b, out, nil
	}
	for _, r := range b.Page.Ranges {
		if to >= 0 && r.Start > to || r.End < from {
			continue
		}
		if r.Start < from {
			r.Start = from
		}
		if to >= 0 && r.End > to {
			r.End = to
		}
		out = append(out, r)
	}
	return b, out, nil
}

// SequenceAction is x-ms-sequence-number-action.
type SequenceAction string

const (
	SequenceMax       SequenceAction = "max"
	SequenceUpdate    SequenceAction = "update"
	SequenceIncrement SequenceAction = "increment"
)

// PageBlobChanges are Set Blob Properties' page-blob parts: a new length
// and a sequence-number action.
type PageBlobChanges struct {
	Length   *int64
	Action   SequenceAction
	Sequence int64
}

// applyPageChanges resizes (dropping or cutting the stored chunks past a
// shorter length, so that a later extension reads zeros) and updates the
// sequence number, on b under its lock.
func (s *Service) applyPageChanges(ctx context.Context, b *Blob, ch PageBlobChanges) error {
	if b.Type != PageBlob {
		return fmt.Errorf("blob %s/%s is a %s: %w", b.Container, b.Name, b.Type, ErrInvalidBlobType)
	}
	ps := PageState{}
	if b.Page != nil {
		ps = *b.Page
	}
	switch ch.Action {
	case "":
	case SequenceMax:
		ps.SequenceNumber = max(ps.SequenceNumber, ch.Sequence)
	case SequenceUpdate:
		ps.SequenceNumber = ch.Sequence
	case SequenceIncrement:
		ps.SequenceNumber++
	}
	if ch.Length != nil {
		n := *ch.Length
		if n < 0 || n%PageSize != 0 || n > MaxPageBlobLen {
			return fmt.Errorf("blob %s/%s: length %d: %w", b.Container, b.Name, n, ErrInvalidPageBlobLength)
		}
		if n < b.Size {
			var kept []PageChunk
			for _, c := range ps.Chunks {
				cs := c.Index * PageChunkSize
				switch {
				case cs >= n:
					continue
				case cs+c.Size > n:
					rc, err := s.chunkReader(ctx, *b, ps.Chunks, c.Index, cs, n)
					if err != nil {
						return err
					}
					id := blobstore.NewBlockID()
					size, err := s.content.StageBlock(ctx, b.ContentKey, id, rc)
					rc.Close()
					if err != nil {
						return fmt.Errorf("blob %s/%s: resize: %w", b.Container, b.Name, err)
					}
					c = PageChunk{Index: c.Index, StoreID: id, Size: size}
				}
				kept = append(kept, c)
			}
			ids := make([]string, len(kept))
			for j, c := range kept {
				ids[j] = c.StoreID
			}
			ps.Chunks = kept
			if n == 0 {
				ps.Ranges = nil
			} else {
				ps.Ranges = subtractRange(ps.Ranges, PageRange{n, MaxPageBlobLen})
			}
			ps.touch(PageRange{n, b.Size - 1})
			// The row as it will be, as the commit's intent (the caller
			// writes it, with the intent's removal, after we return).
			b.Size, b.Page = n, &ps
			if err := s.meta.PutIntent(ctx, *b, false); err != nil {
				return err
			}
			info, err := s.content.CommitBlocks(ctx, b.ContentKey, ids, blobstore.Conditions{})
			if err != nil {
				return errors.Join(fmt.Errorf("blob %s/%s: resize commit: %w", b.Container, b.Name, err),
					s.meta.DeleteIntent(ctx, b.Container, b.Name))
			}
			b.ContentETag = info.ETag
		}
		b.Size = n
	}
	b.Page = &ps
	return nil
}

// SetPageBlobProperties is Set Blob Properties on a page blob with a new
// length or a sequence-number action (and the HTTP properties p).
func (s *Service) SetPageBlobProperties(ctx context.Context, container, name string, p Properties, ch PageBlobChanges, leaseID string, cond Conditions) (Blob, error) {
	return s.updateBlob(ctx, container, name, WriteOptions{LeaseID: leaseID, Cond: cond}, func(b *Blob) error {
		b.Properties = p
		return s.applyPageChanges(ctx, b, ch)
	})
}

func addRange(rs []PageRange, n PageRange) []PageRange {
	out := make([]PageRange, 0, len(rs)+1)
	placed := false
	for _, r := range rs {
		switch {
		case r.End+1 < n.Start:
			out = append(out, r)
		case n.End+1 < r.Start:
			if !placed {
				out = append(out, n)
				placed = true
			}
			out = append(out, r)
		default: // overlapping or adjacent: merge into n
			n.Start, n.End = min(n.Start, r.Start), max(n.End, r.End)
		}
	}
	if !placed {
		out = append(out, n)
	}
	return out
}

func subtractRange(rs []PageRange, c PageRange) []PageRange {
	var out []PageRange
	for _, r := range rs {
		if r.End < c.Start || r.Start > c.End {
			out = append(out, r)
			continue
		}
		if r.Start < c.Start {
			out = append(out, PageRange{r.Start, c.Start - 1})
		}
		if r.End > c.End {
			out = append(out, PageRange{c.End + 1, r.End})
		}
	}
	return out
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }

// discard skips n bytes of r when first read, then yields nothing.
type discard struct {
	r io.Reader
	n int64
}

func (d discard) Read([]byte) (int, error) {
	if _, err := io.CopyN(io.Discard, d.r, d.n); err != nil {
		return 0, err
	}
	return 0, io.EOF
}

// ErrPreviousSnapshotNotFound: Get Page Ranges with a prevsnapshot that
// does not exist (409 PreviousSnapshotNotFound); ErrBlobOverwritten: one
// of an earlier creation of the blob (409 BlobOverwritten, "The blob has
// been recreated since the previous snapshot was taken.").
var (
	ErrPreviousSnapshotNotFound = errors.New("previous snapshot not found")
	ErrBlobOverwritten          = errors.New("blob recreated since the previous snapshot")
)

// newLineage names a page blob's creation.
func newLineage() string { return blobstore.NewBlockID() }

// touch records that the pages of r changed at a new generation.
func (ps *PageState) touch(r PageRange) {
	if r.End < r.Start {
		return
	}
	ps.Gen++
	var out []TouchedRange
	placed := false
	for _, t := range ps.Touched {
		for _, rest := range subtractRange([]PageRange{t.PageRange}, r) {
			if !placed && rest.Start > r.End {
				out = append(out, TouchedRange{r, ps.Gen})
				placed = true
			}
			out = append(out, TouchedRange{rest, t.Gen})
		}
	}
	if !placed {
		out = append(out, TouchedRange{r, ps.Gen})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	ps.Touched = out
}

// PageRangesDiff compares a page blob (or its snapshot) with an earlier
// snapshot within [from, to] (to < 0: to the end) and returns the pages
// written since the snapshot (changed: written in the newer version) and
// cleared since (cleared), as Azure reports them: every page a write
// touched, whether or not its bytes changed ("a list of pages that were
// changed between target blob and previous snapshot"), read from the
// blob's write history. A blob stored before the history is compared by
// content. A missing snapshot is ErrPreviousSnapshotNotFound, one of an
// earlier creation ErrBlobOverwritten.
func (s *Service) PageRangesDiff(ctx context.Context, container, name, snapshot, prevSnapshot, leaseID string, cond Conditions, from, to int64) (Blob, []PageRange, []PageRange, error) {
	mu := s.stripe(container, name)
	mu.RLock()
	defer mu.RUnlock()
	cur, err := s.GetBlob(ctx, container, name, snapshot, leaseID, cond)
	if err != nil {
		return cur, nil, nil, err
	}
	if cur.Type != PageBlob {
		return cur, nil, nil, fmt.Errorf("blob %s/%s is a %s: %w", container, name, cur.Type, ErrInvalidBlobType)
	}
	prev, err := s.getSnapshot(ctx, container, name, prevSnapshot, Conditions{})
	if errors.Is(err, ErrBlobNotFound) {
		return cur, nil, nil, fmt.Errorf("blob %s/%s previous snapshot %s: %w", container, name, prevSnapshot, ErrPreviousSnapshotNotFound)
	}
	if err != nil {
		return cur, nil, nil, fmt.Errorf("previous snapshot: %w", err)
	}
	end := cur.Size - 1
	if to >= 0 && to < end {
		end = to
	}
	if cur.Page == nil || prev.Page == nil || cur.Page.Lineage == "" || prev.Page.Lineage == "" {
		changed, cleared, err := s.diffByContent(ctx, cur, prev, from, end)
		return cur, changed, cleared, err
	}
	if prev.Type != PageBlob || cur.Page.Lineage != prev.Page.Lineage {
		return cur, nil, nil, fmt.Errorf("blob %s/%s previous snapshot %s: %w", container, name, prevSnapshot, ErrBlobOverwritten)
	}
	var changed, cleared []PageRange
	for _, t := range cur.Page.Touched {
		if t.Gen <= prev.Page.Gen {
			continue
		}
		a, z := max(t.Start, from), min(t.End, end)
		if z < a {
			continue
		}
		r := PageRange{a, z}
		written := intersectRanges(cur.Page.Ranges, r)
		for _, w := range written {
			changed = addRange(changed, w)
		}
		for _, c := range subtractRanges([]PageRange{r}, written) {
			cleared = addRange(cleared, c)
		}
	}
	return cur, changed, cleared, nil
}

// intersectRanges is the part of rs inside r.
func intersectRanges(rs []PageRange, r PageRange) []PageRange {
	var out []PageRange
	for _, x := range rs {
		a, z := max(x.Start, r.Start), min(x.End, r.End)
		if a <= z {
			out = append(out, PageRange{a, z})
		}
	}
	return out
}

// subtractRanges is rs without any of cs.
func subtractRanges(rs, cs []PageRange) []PageRange {
	for _, c := range cs {
		rs = subtractRange(rs, c)
	}
	return rs
}

// diffByContent compares cur with prev page by page within [from, end]
// (blobs stored before the write history): the pages whose bytes differ,
// so a page rewritten with the bytes it had is not reported.
func (s *Service) diffByContent(ctx context.Context, cur, prev Blob, from, end int64) ([]PageRange, []PageRange, error) {
	var cand []PageRange
	for _, st := range []*PageState{cur.Page, prev.Page} {
		if st == nil {
			continue
		}
		for _, r := range st.Ranges {
			cand = addRange(cand, r)
		}
	}
	var changed, cleared []PageRange
	buf := make([]byte, 2*PageSize)
	for _, r := range cand {
		// Whole pages are compared (the candidates are page-aligned);
		// what is reported is clipped to [from, end] below, so a range
		// that cuts pages (bytes=0-1999) neither reads past a page nor
		// reports outside what was asked.
		a, z := max(r.Start, from), min(r.End, end)
		if z < a {
			continue
		}
		a -= a % PageSize
		z = min(r.End, z-z%PageSize+PageSize-1)
		n := z - a + 1
		rc, err := s.openPages(ctx, cur, a, n)
		if err != nil {
			return nil, nil, err
		}
		var pr io.ReadCloser = io.NopCloser(io.LimitReader(zeros{}, n))
		if a < prev.Size {
			pn := min(n, prev.Size-a)
			p, err := s.openPages(ctx, prev, a, pn)
			if err != nil {
				rc.Close()
				return nil, nil, err
			}
			pr = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(p, io.LimitReader(zeros{}, n-pn)), p}
		}
		for off := a; off <= z; off += PageSize {
			if _, err := io.ReadFull(rc, buf[:PageSize]); err != nil {
				rc.Close()
				pr.Close()
				return nil, nil, err
			}
			if _, err := io.ReadFull(pr, buf[PageSize:]); err != nil {
				rc.Close()
				pr.Close()
				return nil, nil, err
			}
			if string(buf[:PageSize]) == string(buf[PageSize:]) {
				continue
			}
			page := PageRange{max(off, from), min(off+PageSize-1, end)}
			if inRanges(cur.Page, off) {
				changed = addRange(changed, page)
			} else {
				cleared = addRange(cleared, page)
			}
		}
		rc.Close()
		pr.Close()
	}
	return changed, cleared, nil
}

func inRanges(ps *PageState, off int64) bool {
	if ps == nil {
		return false
	}
	for _, r := range ps.Ranges {
		if off >= r.Start && off <= r.End {
			return true
		}
	}
	return false
}
