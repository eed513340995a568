package blobsvc

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/internal/azname"
	"github.com/blobshare/blobshare/lease"
)

func uuidString() string { return uuid.NewString() }

// Limits of the Blob service (Azure's documented bounds).
const (
	MaxBlobNameLen        = 1024
	MaxCommittedBlocks    = 50000
	MaxUncommittedBlocks  = 100000
	MaxBlockIDBytes       = 64
	DefaultListMaxResults = 5000
	// stageChunk is the size of the content-store blocks a Put Blob body
	// is cut into while it streams in.
	stageChunk = 4 << 20
	// lockStripes is the number of mutexes writers of different blobs
	// hash onto.
	lockStripes = 256
)

// Service is the Blob service's semantics: containers, block blobs and
// their block lists, ETags, conditional requests and leases. Metadata
// lives in a Store, content in a blobstore.Store. It knows nothing of
// HTTP. Safe for concurrent use.
//
// Writers of one blob hold its claim (lockBlob: a striped in-process lock,
// then the store's per-blob claim, which works across processes) from the
// condition and lease checks to the metadata update, so a check and the
// write it guards are one step; the upload itself (staging content)
// happens before, outside the claim. Readers hold the stripe shared only
// while they read the metadata row and open the content version it
// names, then stream without it: a Put Blob replacing the blob meanwhile
// does not disturb a download under way (the content store keeps the
// version it opened). Several Services, in several processes, may share
// one metadata database (doc.go).
type Service struct {
	meta    Store
	content blobstore.Store
	now     func() time.Time
	stripes [lockStripes]sync.RWMutex

	// deleting records when containers were deleted, for
	// ContainerDeleteWindow (see DeleteContainer).
	deletingMu sync.Mutex
	deleting   map[string]time.Time

	// containerDays is the container soft-delete retention in days (0:
	// off; SetContainerRetention).
	containerDays atomic.Int32

	// rehydrate is how long a rehydration from Archive takes, in
	// nanoseconds (0: DefaultRehydrateTime; SetRehydrateTime, tier.go).
	rehydrate atomic.Int64

	// commitHook sees each stage of a content commit (claims.go).
	commitHook CommitHook
}

// ContainerDeleteWindow is how long a deleted container stays "being
// deleted": Azure's Delete Container says "the container ... is later
// deleted during garbage collection" and that a container of the same
// name cannot be created "for at least 30 seconds"; meanwhile a second
// Delete Container is accepted (202), as the azblob recording of
// TestContainerDeleteContainerWithoutLeaseId shows. Create Container is
// not refused meanwhile (Azure answers 409 ContainerBeingDeleted): the
// name is free at once here, as on Azurite, and a new container ends the
// window.
const ContainerDeleteWindow = 30 * time.Second

// New returns a Service over meta and content; now is the clock of ETags'
// Last-Modified times and leases (nil: time.Now).
func New(meta Store, content blobstore.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{meta: meta, content: content, now: now, deleting: map[string]time.Time{}}
}

// Now is the service's clock in UTC.
func (s *Service) Now() time.Time { return s.now().UTC() }

func (s *Service) stripe(container, name string) *sync.RWMutex {
	h := fnv.New32a()
	h.Write([]byte(container))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return &s.stripes[h.Sum32()%lockStripes]
}

// newETag returns a fresh quoted ETag in Azure's "0x…" form. Random, not
// time-based: two writes within one clock tick (an injected clock) still
// get different ETags.
func newETag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("\"0x%X\"", b)
}

// contentKey is the content store's key of a blob: a digest, because
// blob names allow what content-store keys do not ("..", "a//b").
func contentKey(container, name string) string {
	h := sha256.Sum256([]byte(container + "\x00" + name))
	return "blob/" + hex.EncodeToString(h[:20])
}

// ValidContainerName checks a container name: 3 to 63 lowercase letters,
// digits and single inner hyphens, starting with a letter or digit; or
// one of $root, $logs, $web.
func ValidContainerName(name string) error {
	switch name {
	case "$root", "$logs", "$web":
		return nil
	}
	if err := azname.DNSLabel("container", name); err != nil {
		return fmt.Errorf("%v: %w", err, ErrInvalidContainerName)
	}
	return nil
}

// ValidBlobName checks a blob name: 1 to 1024 characters of UTF-8
// without control characters (U+FFFE and U+FFFF are names' characters on
// Azure: listings send such names encoded). Names are opaque otherwise ("..", "a//b"
// and trailing slashes are names like any other: they never become file
// system paths).
func ValidBlobName(name string) error {
	if name == "" || utf8.RuneCountInString(name) > MaxBlobNameLen || !utf8.ValidString(name) {
		return fmt.Errorf("blob %q: %w", name, ErrInvalidBlobName)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("blob %q: %w", name, ErrInvalidBlobName)
		}
	}
	return nil
}

// ValidBlockID checks a client block id: base64 of 1 to 64 bytes.
func ValidBlockID(id string) error {
	raw, err := decodeBase64(id)
	if err != nil || len(raw) == 0 || len(raw) > MaxBlockIDBytes {
		return fmt.Errorf("block id %q: %w", id, ErrInvalidBlockID)
	}
	return nil
}

// ---- containers ----

// CreateContainer creates a container (ErrContainerExists).
func (s *Service) CreateContainer(ctx context.Context, name string, md map[string]string, access PublicAccess) (Container, error) {
	if err := ValidContainerName(name); err != nil {
		return Container{}, err
	}
	c := Container{Name: name, Metadata: md, ETag: newETag(), LastModified: s.Now(), PublicAccess: access, Lease: Lease{State: LeaseAvailable}}
	if err := s.meta.CreateContainer(ctx, c); err != nil {
		return Container{}, err
	}
	s.deletingMu.Lock()
	delete(s.deleting, name) // a new container of that name is no longer being deleted
	s.deletingMu.Unlock()
	return c, nil
}

// GetContainer returns the container; a lease id sent must be its active
// lease's.
func (s *Service) GetContainer(ctx context.Context, name, leaseID string) (Container, error) {
	if err := ValidContainerName(name); err != nil {
		return Container{}, err
	}
	c, err := s.meta.Container(ctx, name)
	if err != nil {
		return Container{}, err
	}
	if err := checkReadLease(c.Lease, leaseID, s.Now()); err != nil {
		return Container{}, fmt.Errorf("container %s: %w", name, err)
	}
	return c, nil
}

// SetContainerMetadata replaces the metadata (new ETag).
func (s *Service) SetContainerMetadata(ctx context.Context, name string, md map[string]string, leaseID string, cond Conditions) (Container, error) {
	return s.updateContainer(ctx, name, cond, func(c *Container, now time.Time) error {
		if err := checkReadLease(c.Lease, leaseID, now); err != nil {
			return err
		}
		c.Metadata, c.ETag, c.LastModified = md, newETag(), now
		return nil
	})
}

// ErrInvalidACL: more than MaxSignedIdentifiers policies, an id longer
// than 64 characters, or a permission letter a container policy cannot
// grant (acl.Validate with acl.ContainerRules; the *acl.Error is wrapped
// too).
var ErrInvalidACL = errors.New("invalid container ACL")

// SetContainerACL replaces the public access level and the stored access
// policies (new ETag). A lease id, if sent, must be the active lease's.
func (s *Service) SetContainerACL(ctx context.Context, name string, access PublicAccess, ids []SignedIdentifier, leaseID string, cond Conditions) (Container, error) {
	ids, err := acl.Validate(ids, acl.ContainerRules)
	if err != nil {
		return Container{}, fmt.Errorf("container %s: %w: %w", name, ErrInvalidACL, err)
	}
	return s.updateContainer(ctx, name, cond, func(c *Container, now time.Time) error {
		if err := checkReadLease(c.Lease, leaseID, now); err != nil {
			return err
		}
		c.PublicAccess, c.ACL, c.ETag, c.LastModified = access, ids, newETag(), now
		return nil
	})
}

// LeaseContainer runs a lease operation on the container. The container
// lease guards Delete Container only; it does not change the ETag.
func (s *Service) LeaseContainer(ctx context.Context, name string, req LeaseRequest, cond Conditions) (Container, LeaseResult, error) {
	var res LeaseResult
	c, err := s.updateContainer(ctx, name, cond, func(c *Container, now time.Time) error {
		l, r, err := lease.Decide(c.Lease, req, now, lease.Options{NewID: uuid.NewString})
		if err != nil {
			return err
		}
		c.Lease, res = l, r
		return nil
	})
	return c, res, err
}

func (s *Service) updateContainer(ctx context.Context, name string, cond Conditions, f func(*Container, time.Time) error) (Container, error) {
	if err := ValidContainerName(name); err != nil {
		return Container{}, err
	}
	if c, done, err := s.modifyContainer(ctx, name, cond, f); done {
		return c, err
	}
	unlock, err := s.lockBlob(ctx, name, "")
	if err != nil {
		return Container{}, err
	}
	defer unlock()
	c, err := s.meta.Container(ctx, name)
	if err != nil {
		return Container{}, err
	}
	if err := cond.checkWrite(true, c.ETag, c.LastModified, false); err != nil {
		return Container{}, fmt.Errorf("container %s: %w", name, err)
	}
	if err := f(&c, s.Now()); err != nil {
		return Container{}, fmt.Errorf("container %s: %w", name, err)
	}
	if err := s.meta.UpdateContainer(ctx, c); err != nil {
		return Container{}, err
	}
	return c, nil
}

// DeleteContainer deletes the container and its blobs. A leased
// container needs its lease id. A container deleted less than
// ContainerDeleteWindow ago is still being deleted: deleting it again
// succeeds.
func (s *Service) DeleteContainer(ctx context.Context, name, leaseID string, cond Conditions) error {
	if err := ValidContainerName(name); err != nil {
		return err
	}
	if IsSystemContainer(name) {
		return fmt.Errorf("delete container %s: %w", name, ErrSystemContainer)
	}
	unlock, err := s.lockBlob(ctx, name, "")
	if err != nil {
		return err
	}
	c, err := s.meta.Container(ctx, name)
	if err != nil {
		unlock()
		if errors.Is(err, ErrContainerNotFound) && s.beingDeleted(name) {
			return nil
		}
		return err
	}
	if err := cond.checkWrite(true, c.ETag, c.LastModified, false); err != nil {
		unlock()
		return fmt.Errorf("container %s: %w", name, err)
	}
	if err := checkWriteLease(c.Lease, leaseID, s.Now()); err != nil {
		unlock()
		return fmt.Errorf("container %s: %w", name, err)
	}
	if days := int(s.containerDays.Load()); days > 0 {
		err := s.softDeleteContainer(ctx, c, days)
		if err == nil {
			s.markDeleted(name)
		}
		unlock()
		return err
	}
	keys, err := s.meta.DeleteContainer(ctx, name)
	if err == nil {
		s.markDeleted(name)
	}
	unlock()
	if err != nil {
		return err
	}
	// Content goes after the rows: a blob is gone the moment its row is.
	var errs []error
	for _, k := range keys {
		if err := s.content.Delete(ctx, k, blobstore.Conditions{}); err != nil && !errors.Is(err, blobstore.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// markDeleted records that name was deleted now, and forgets the
// deletions older than ContainerDeleteWindow (so the record stays small).
func (s *Service) markDeleted(name string) {
	now := s.Now()
	s.deletingMu.Lock()
	defer s.deletingMu.Unlock()
	for n, t := range s.deleting {
		if now.Sub(t) >= ContainerDeleteWindow {
			delete(s.deleting, n)
		}
	}
	s.deleting[name] = now
}

// beingDeleted reports whether name was deleted less than
// ContainerDeleteWindow ago (and not created again since).
func (s *Service) beingDeleted(name string) bool {
	s.deletingMu.Lock()
	defer s.deletingMu.Unlock()
	t, ok := s.deleting[name]
	return ok && s.Now().Sub(t) < ContainerDeleteWindow
}

// ListContainers lists up to max containers starting with prefix, from
// marker (the name to resume at, as returned in next).
func (s *Service) ListContainers(ctx context.Context, prefix, marker string, limit int) ([]Container, string, error) {
	from := max(marker, prefix)
	cs, err := s.meta.ListContainers(ctx, prefix, from, limit+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(cs) > limit {
		next = cs[limit].Name
		cs = cs[:limit]
	}
	return cs, next, nil
}

// ---- blobs ----

// WriteOptions are the common inputs of a write that sets a blob's
// content: its HTTP properties and metadata, the lease id sent and the
// conditions.
type WriteOptions struct {
	Properties Properties
	Metadata   map[string]string
	LeaseID    string
	Cond       Conditions
	// ContentMD5 is the request's transactional Content-MD5 (Put Blob,
	// Put Block): the body must match it.
	ContentMD5 []byte
	// Type is the blob type Put Blob creates ("" means BlockBlob).
	Type BlobType
	// Tags are the new version's index tags (x-ms-tags).
	Tags map[string]string
	// CopySourceTags makes CopyBlob give the destination the source's
	// tags instead of Tags (x-ms-copy-source-tag-option: COPY).
	CopySourceTags bool
	// Seal is a copy's x-ms-seal-blob (nil: the destination is sealed
	// when the source is).
	Seal *bool
	// Tier is the access tier x-ms-access-tier asks the write to store
	// ("" keeps the inferred default).
	Tier string
	// Wrap, if set, wraps the bytes CopyBlob reads from its source (the
	// front end's transactional checks and sums of Copy Blob From URL).
	Wrap func(io.Reader) io.Reader

	// blocks and page: the layout PutBlob hands commit for an append or
	// page blob (copies).
	blocks []Block
	page   *PageState
	sealed bool
	// incremental is the pending incremental copy this write completes
	// (incremental.go): the only write an incremental copy blob takes,
	// and only while that copy is still its current one.
	incremental *CopyInfo
}

// checkNames validates the container and blob names (existence is the
// callers' to check, with the rows they read).
func (s *Service) checkNames(ctx context.Context, container, name string) error {
	if err := ValidContainerName(container); err != nil {
		return err
	}
	return ValidBlobName(name)
}

// blobOrMissing returns the blob's row and whether a committed version
// exists. The row may be that of an uncommitted blob (Put Block on a new
// name creates one, as Azure does: it can be leased and deleted, and
// lists with include=uncommittedblobs) — then ok is false. A missing
// container is ErrContainerNotFound.
func (s *Service) blobOrMissing(ctx context.Context, container, name string) (Blob, bool, error) {
	b, err := s.meta.Blob(ctx, container, name)
	if err == nil {
		s.settle(&b)
		return b, b.Committed, nil
	}
	if !errors.Is(err, ErrBlobNotFound) {
		return Blob{}, false, err
	}
	if _, cerr := s.meta.Container(ctx, container); cerr != nil {
		return Blob{}, false, cerr
	}
	return Blob{}, false, nil
}

// hasRow reports whether b is a stored row (committed or not).
func hasRow(b Blob) bool { return b.Name != "" }

// conditionedBlob returns the row an operation on an existing blob needs
// (committed only, or any row with anyRow: Delete Blob and Lease Blob
// also act on an uncommitted blob). On a missing blob the conditions are
// evaluated first (an If-Match fails with 412 before the 404), as Azurite
// does.
func (s *Service) conditionedBlob(ctx context.Context, container, name string, cond Conditions, anyRow bool) (Blob, error) {
	b, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if !ok && !(anyRow && hasRow(b)) {
		if err := cond.checkWrite(false, "", time.Time{}, false); err != nil {
			return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, err)
		}
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	return b, nil
}

// CopySource names the source of a Copy Blob within the account.
type CopySource struct {
	Container, Name string
	Snapshot        string // "" for the base blob
	URL             string // x-ms-copy-source as sent, recorded on the copy
	Cond            Conditions
}

// CopyBlob copies the source blob's content, properties and (when md is
// nil) metadata to the destination, synchronously: the source version is
// streamed from the content store into a new destination version. The
// destination's conditions and lease are o's, as for Put Blob; the source
// conditions are read conditions (x-ms-source-if-*).
func (s *Service) CopyBlob(ctx context.Context, src CopySource, container, name string, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	// The source first (a missing source is 404 before any destination
	// condition, as Azurite orders them); PutBlob checks the
	// destination before it reads a byte of the source.
	sb, rc, _, _, err := s.OpenBlob(ctx, src.Container, src.Name, src.Snapshot, nil, "", src.Cond)
	if err != nil {
		return Blob{}, SourceCondition(err)
	}
	defer rc.Close()
	o.Properties = sb.Properties
	if o.Metadata == nil {
		o.Metadata = sb.Metadata
	}
	o.Type = sb.Type // the copy is a blob of the source's type
	if o.Seal != nil && sb.Type != AppendBlob {
		return Blob{}, fmt.Errorf("blob %s/%s: x-ms-seal-blob on a copy of a %s: %w", container, name, sb.Type, ErrInvalidBlobType)
	}
	sealed := sb.Sealed
	if o.Seal != nil {
		sealed = *o.Seal
	}
	o.sealed = sealed
	if sb.Page != nil {
		o.page = &PageState{Ranges: sb.Page.Ranges}
	}
	o.ContentMD5 = nil
	// The destination's tags are the request's x-ms-tags (none without
	// it), not the source's, unless the request asks for the source's:
	// Copy Blob From URL's x-ms-copy-source-tag-option "The default value
	// is REPLACE" (Azurite's startCopyFromURL likewise sets only the
	// request's tags).
	if o.CopySourceTags {
		o.Tags = sb.Tags
	}
	var r io.Reader = rc
	if o.Wrap != nil {
		r = o.Wrap(r)
	}
	// An unmet destination condition is ErrConditionNotMet (412
	// ConditionNotMet), as Azure answers it now (blob/doc.go,
	// "Copies").
	b, err := s.PutBlob(ctx, container, name, r, o)
	if err != nil {
		return Blob{}, err
	}
	info := &CopyInfo{ID: uuidString(), Source: src.URL, Size: b.Size, Completed: s.Now()}
	if o.incremental != nil {
		info = o.incremental // still pending: finishIncremental records the end
	}
	return s.setCopyInfo(ctx, b, info)
}

// SourceCondition turns a copy source's unmet x-ms-source-if-*
// condition (ErrConditionNotMet, or ErrNotModified for If-None-Match and
// If-Modified-Since) into ErrSourceConditionNotMet (412
// SourceConditionNotMet); other errors pass.
func SourceCondition(err error) error {
	if errors.Is(err, ErrConditionNotMet) || errors.Is(err, ErrNotModified) {
		return fmt.Errorf("copy source: %w", ErrSourceConditionNotMet)
	}
	return err
}

// setCopyInfo records info on the version b just committed, unless
// another write replaced it meanwhile (then that write's answer stands
// and this copy's record is moot).
func (s *Service) setCopyInfo(ctx context.Context, b Blob, info *CopyInfo) (Blob, error) {
	unlock, err := s.lockBlob(ctx, b.Container, b.Name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	cur, ok, err := s.blobOrMissing(ctx, b.Container, b.Name)
	if err != nil || !ok || cur.ETag != b.ETag {
		b.Copy = info
		return b, err
	}
	cur.Copy = info
	if err := s.meta.PutBlob(ctx, cur, false); err != nil {
		return Blob{}, err
	}
	return cur, nil
}

// PutBlob replaces the blob with the content of r (a block blob), staged
// in the content store as it streams in and committed atomically.
func (s *Service) PutBlob(ctx context.Context, container, name string, r io.Reader, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if err := checkTier(container, name, o.Type, o.Tier); err != nil {
		return Blob{}, err
	}
	// Fail fast (before reading the body) when the write cannot succeed;
	// checked again under the lock.
	if old, _, err := s.blobOrMissing(ctx, container, name); err != nil {
		return Blob{}, err
	} else if err := s.checkWrite(old, old.Committed, o, writePutBlob); err != nil {
		return Blob{}, err
	}
	key := contentKey(container, name)
	sum := md5.New()
	var ids []string
	var staged []Block // the pieces, for an append or page blob copy
	var size int64
	src := io.TeeReader(r, sum)
	for {
		id := blobstore.NewBlockID()
		n, err := s.content.StageBlock(ctx, key, id, io.LimitReader(src, stageChunk))
		if err != nil {
			return Blob{}, fmt.Errorf("blob %s/%s: stage: %w", container, name, err)
		}
		size += n
		if n > 0 {
			ids = append(ids, id)
			staged = append(staged, Block{StoreID: id, Size: n})
		}
		if n < stageChunk {
			break
		}
	}
	got := sum.Sum(nil)
	if o.ContentMD5 != nil && !equalBytes(o.ContentMD5, got) {
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrMD5Mismatch)
	}
	// The blob's Content-MD5 is the content's, except for an empty
	// append blob (Create Append Blob, or a copy of one), which has none
	// unless x-ms-blob-content-md5 gives one: azblob's
	// TestBlobCreateAppendHTTPHeaders, recorded against Azure, reads
	// back no Content-MD5 after a create without it.
	if o.Properties.ContentMD5 == nil && !(o.Type == AppendBlob && size == 0) {
		o.Properties.ContentMD5 = got
	}
	switch o.Type {
	case AppendBlob:
		o.blocks = staged
	case PageBlob: // a copy of a page blob: every chunk stored
		ps := PageState{Lineage: newLineage()}
		if o.page != nil {
			ps.Ranges = o.page.Ranges
		}
		for i, blk := range staged {
			ps.Chunks = append(ps.Chunks, PageChunk{Index: int64(i), StoreID: blk.StoreID, Size: blk.Size})
		}
		o.page = &ps
	}
	return s.commit(ctx, container, name, ids, nil, size, o)
}

// commit makes storeIDs the blob's content under the blob's lock, after
// the conditions and the lease pass, and records blocks as its committed
// block list (nil for Put Blob, whose blocks are not client blocks).
func (s *Service) commit(ctx context.Context, container, name string, storeIDs []string, blocks []Block, size int64, o WriteOptions) (Blob, error) {
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	old, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	kind := writeCommitList
	if blocks == nil {
		kind = writePutBlob
	}
	if kind == writeCommitList {
		err = s.checkCommitList(old, o)
	} else {
		err = s.checkWrite(old, old.Committed, o, kind)
	}
	if err != nil {
		return Blob{}, err
	}
	if o.Type == "" {
		o.Type = BlockBlob
	}
	key := contentKey(container, name)
	now := s.Now()
	b := Blob{
		Container: container, Name: name, Type: o.Type, ContentKey: key,
		Committed: true, Size: size, ETag: newETag(), Created: now, LastModified: now,
		Properties: o.Properties, Metadata: o.Metadata, Blocks: blocks, Lease: Lease{State: LeaseAvailable}, Tags: o.Tags,
		EncryptionKeySHA256: o.Cond.newKeyHash(),
	}
	if kind == writePutBlob {
		b.Blocks, b.Page = o.blocks, o.page
	}
	if o.Tier != "" {
		b.Tier, b.TierChanged = o.Tier, now
	}
	if kind == writePutBlob && o.Type == AppendBlob {
		b.Sealed = o.sealed
	}
	if ok {
		b.Created = old.Created
	}
	if hasRow(old) {
		// A write keeps an active lease (it passed the check) and makes
		// an expired or broken one available (Lease.AfterWrite).
		b.Lease = old.Lease.AfterWrite(now)
	}
	over, err := s.keepOverwritten(ctx, old)
	if err != nil {
		return Blob{}, err
	}
	// Put Block List discards the uncommitted blocks it does not commit,
	// and Put Blob all of them: "All uncommitted blocks are also
	// discarded when a new blob of the same name is created using a
	// single step (rather than the two-step block upload-then-commit
	// process)" (Azure's "Understanding block blobs, append blobs, and
	// page blobs"). Azurite keeps them on Put Blob (blob/doc.go).
	if err := s.commitContent(ctx, &b, storeIDs, true); err != nil {
		err = errors.Join(err, s.recordOverwritten(ctx, over, false))
		if errors.Is(err, blobstore.ErrNotFound) {
			return Blob{}, fmt.Errorf("blob %s/%s: a block is gone from the content store: %w", container, name, ErrInvalidBlockList)
		}
		return Blob{}, err
	}
	if err := s.recordOverwritten(ctx, over, true); err != nil {
		return Blob{}, err
	}
	return b, nil
}

// commitContent makes storeIDs the content of b's key and records b (with
// the content store's new ETag) as the blob's row. An intent row written
// first makes the pair crash-safe: if the process dies after the content
// commit but before the row, Recover finds the intent and finishes the
// row; if it dies before the commit, Recover drops the intent.
func (s *Service) commitContent(ctx context.Context, b *Blob, storeIDs []string, dropUncommitted bool) error {
	if err := s.meta.PutIntent(ctx, *b, dropUncommitted); err != nil {
		return err
	}
	s.hook(ctx, StageIntent, *b)
	info, err := s.content.CommitBlocks(ctx, b.ContentKey, storeIDs, blobstore.Conditions{})
	if err == nil {
		s.hook(ctx, StageContent, *b)
	}
	if err != nil {
		if derr := s.meta.DeleteIntent(ctx, b.Container, b.Name); derr != nil {
			err = errors.Join(err, derr)
		}
		return fmt.Errorf("blob %s/%s: commit: %w", b.Container, b.Name, err)
	}
	b.ContentETag = info.ETag
	if err := s.meta.PutBlob(ctx, *b, dropUncommitted); err != nil { // removes the intent in its transaction
		return err
	}
	return s.syncMeta(ctx)
}

// UncommittedLifetime is how long an uncommitted block waits for the Put
// Block List that commits it: Azure discards uncommitted blocks after a
// week.
const UncommittedLifetime = 7 * 24 * time.Hour

// KeptStagedBlocks discards the uncommitted blocks staged more than
// UncommittedLifetime ago (and the uncommitted blobs left with none) and
// returns the content-store ids of the others. A Put Block List may commit
// those however long after Put Block, across restarts of the service, so
// the content store's garbage collection must keep them
// (blobstore.GCOptions.KeepStaged); it removes the discarded ones.
func (s *Service) KeptStagedBlocks(ctx context.Context) (map[string]bool, error) {
	now := s.Now()
	expired, err := s.meta.ExpireStaged(ctx, now.Add(-UncommittedLifetime), now)
	if err != nil {
		return nil, err
	}
	// Soft-deleted blobs past their retention go in the same sweep (a
	// Service without a content store, the sweep's with the Blob
	// endpoint off, leaves them to the next run that has one).
	if s.content != nil {
		if err := s.PurgeDeleted(ctx); err != nil {
			return nil, err
		}
	}
	for _, b := range expired {
		if err := s.dropIfNothingStaged(ctx, b); err != nil {
			return nil, err
		}
	}
	ids := map[string]bool{}
	err = s.meta.StagedStoreIDs(ctx, func(id string) error {
		ids[id] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// dropIfNothingStaged deletes the row of an uncommitted blob whose
// staged blocks have all expired, as Azure forgets it with them.
func (s *Service) dropIfNothingStaged(ctx context.Context, b BlobName) error {
	unlock, err := s.lockBlob(ctx, b.Container, b.Name)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := s.blobOrMissing(ctx, b.Container, b.Name)
	if err != nil || !hasRow(cur) || cur.Committed {
		return err
	}
	left, err := s.meta.UncommittedBlocks(ctx, b.Container, b.Name, 1)
	if err != nil || len(left) > 0 {
		return err
	}
	if err := s.meta.DeleteBlob(ctx, b.Container, b.Name); err != nil && !errors.Is(err, ErrBlobNotFound) {
		return err
	}
	return nil
}

// checkCommitList checks a Put Block List in Azurite's order: the
// conditions, the blob type (409 InvalidBlobType on an append or page
// blob), then the lease. The conditions see a blob that has only
// uncommitted blocks as existing, with the ETag and Last-Modified its
// first Put Block gave it: azblob's TestBlobPutBlockListIfModifiedSinceFalse,
// recorded against Azure, stages a block and commits it with an
// If-Modified-Since ten seconds ahead, and expects 412 ConditionNotMet
// (Azurite likewise checks the uncommitted blob). If-None-Match: * is
// the exception: only a committed blob fails it (409 BlobAlreadyExists).
func (s *Service) checkCommitList(old Blob, o WriteOptions) error {
	if err := checkIncremental(old, nil); err != nil {
		return err
	}
	exists := old.Committed || hasRow(old) && strings.TrimSpace(o.Cond.IfNoneMatch) != "*"
	if err := o.Cond.checkWrite(exists, old.ETag, old.LastModified, true); err != nil {
		return fmt.Errorf("blob %s/%s: %w", old.Container, old.Name, err)
	}
	if err := o.Cond.checkTags(old.Committed, old.Tags); err != nil {
		return fmt.Errorf("blob %s/%s: %w", old.Container, old.Name, err)
	}
	if old.Committed && old.Type != BlockBlob {
		return fmt.Errorf("blob %s/%s is a %s: %w", old.Container, old.Name, old.Type, ErrInvalidBlobType)
	}
	if !hasRow(old) {
		if o.LeaseID != "" { // as checkWrite: nothing to hold a lease
			return fmt.Errorf("blob %s/%s: lease id on a missing blob: %w", old.Container, old.Name, ErrLeaseNotPresent)
		}
		return nil
	}
	if err := checkWriteLease(old.Lease, o.LeaseID, s.Now()); err != nil {
		return fmt.Errorf("blob %s/%s: %w", old.Container, old.Name, err)
	}
	return nil
}

// writeKind tells checkWrite which write it checks.
type writeKind int

const (
	writeUpdate     writeKind = iota // an existing blob's properties, metadata
	writeCommitList                  // Put Block List
	writePutBlob                     // Put Blob
	writeDelete                      // Delete Blob (an incremental copy blob takes it)
)

// checkWrite checks conditions then the lease of a write on a blob that
// exists (is committed) or not. An uncommitted blob does not exist for
// the conditions, except that a creating write (Put Blob, Put Block List)
// with If-None-Match: * finds it (409 BlobAlreadyExists) on Put Blob,
// not on Put Block List, as Azurite does. Its lease, though, is checked like any other.
// A write that would create the blob with a lease id is 412
// LeaseNotPresentWithBlobOperation and creates nothing (Lease Blob's
// table: "Write using (A)" on Available "Fails (412)").
func (s *Service) checkWrite(b Blob, exists bool, o WriteOptions, kind writeKind) error {
	if kind == writePutBlob && hasRow(b) && strings.TrimSpace(o.Cond.IfNoneMatch) == "*" {
		return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, ErrBlobExists)
	}
	if kind != writeDelete {
		if err := checkIncremental(b, o.incremental); err != nil {
			return err
		}
	}
	if err := o.Cond.checkWrite(exists, b.ETag, b.LastModified, kind == writeCommitList || kind == writePutBlob); err != nil {
		return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	if err := o.Cond.checkTags(exists, b.Tags); err != nil {
		return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	if kind == writeUpdate {
		if err := o.Cond.checkEncryption(exists, b.EncryptionKeySHA256); err != nil {
			return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
		}
	}
	if !hasRow(b) {
		if o.LeaseID != "" {
			// Lease Blob's table: "Write using (A)" on an Available blob
			// "Fails (412)"; nothing is created.
			return fmt.Errorf("blob %s/%s: lease id on a missing blob: %w", b.Container, b.Name, ErrLeaseNotPresent)
		}
		return nil
	}
	if err := checkWriteLease(b.Lease, o.LeaseID, s.Now()); err != nil {
		return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	return nil
}

// StageBlock stores one uncommitted block of the blob (Put Block).
func (s *Service) StageBlock(ctx context.Context, container, name, blockID string, r io.Reader, contentMD5 []byte, leaseID string) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	if err := ValidBlockID(blockID); err != nil {
		return err
	}
	old, _, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return err
	}
	if hasRow(old) {
		if old.Type != BlockBlob {
			return fmt.Errorf("blob %s/%s is a %s: %w", container, name, old.Type, ErrInvalidBlobType)
		}
		if err := checkWriteLease(old.Lease, leaseID, s.Now()); err != nil {
			return fmt.Errorf("blob %s/%s: %w", container, name, err)
		}
	}
	// All the blob's uncommitted block ids decode to the same length.
	// One staged block is enough to compare with (the check keeps them
	// all of one length), so a long upload stays linear. The committed
	// blocks do not count: azblob's TestBlobPutBlockListModifyBlob,
	// recorded against Azure, commits a block whose id decodes to 4 bytes,
	// then stages and commits blocks of 3-byte ids ("0001"; Azurite
	// compares with the committed ids too and refuses them).
	other, err := s.meta.UncommittedBlocks(ctx, container, name, 1)
	if err != nil {
		return err
	}
	if len(other) > 0 {
		a, _ := decodeBase64(other[0].ID)
		b, _ := decodeBase64(blockID)
		if len(a) != len(b) {
			return fmt.Errorf("blob %s/%s: block id %q: %w", container, name, blockID, ErrBlockIDLength)
		}
	}
	storeID := blobstore.NewBlockID()
	var sum hash.Hash
	if contentMD5 != nil {
		sum = md5.New()
		r = io.TeeReader(r, sum)
	}
	// Durable before the answer: an acknowledged block survives a power
	// cut. No lock is held, so concurrent Put Blocks sync at once.
	n, err := blobstore.StageBlockDurable(ctx, s.content, contentKey(container, name), storeID, r)
	if err != nil {
		return fmt.Errorf("blob %s/%s: stage block: %w", container, name, err)
	}
	if sum != nil && !equalBytes(sum.Sum(nil), contentMD5) {
		return fmt.Errorf("blob %s/%s: %w", container, name, ErrMD5Mismatch)
	}
	if err := s.recordStaged(ctx, container, name, leaseID, Block{ID: blockID, StoreID: storeID, Size: n}); err != nil {
		return err
	}
	// Outside the blob's lock: concurrent Put Blocks share the log's sync.
	return s.syncMeta(ctx)
}

// recordStaged records a staged block under the blob's lock, creating the
// uncommitted blob with its first block.
func (s *Service) recordStaged(ctx context.Context, container, name, leaseID string, b Block) error {
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return err
	}
	if hasRow(cur) {
		now := s.Now()
		if err := checkWriteLease(cur.Lease, leaseID, now); err != nil {
			return fmt.Errorf("blob %s/%s: %w", container, name, err)
		}
		// Put Block is one of the writes of Lease Blob's list ("the lease
		// ID must be included in the request for any of the following
		// operations"): it too makes a broken or expired lease
		// available, as Azurite does.
		if l := cur.Lease.AfterWrite(now); l != cur.Lease {
			cur.Lease = l
			if err := s.meta.PutBlob(ctx, cur, false); err != nil {
				return err
			}
		}
	} else {
		// The first block of a new name creates the uncommitted blob.
		now := s.Now()
		row := Blob{Container: container, Name: name, Type: BlockBlob, ContentKey: contentKey(container, name),
			ETag: newETag(), Created: now, LastModified: now, Lease: Lease{State: LeaseAvailable}}
		if err := s.meta.PutBlob(ctx, row, false); err != nil {
			return err
		}
	}
	return s.meta.StageBlock(ctx, container, name, b, s.Now())
}

// DurableStore is an optional Store capability: Sync returns once every
// change the store committed before the call survives a power cut, not
// only a crash of the process (sqlstore commits with synchronous=NORMAL
// and syncs its log here, one fsync for all concurrent callers). The
// service calls it before acknowledging a staged block or a commit of
// content.
type DurableStore interface {
	Sync(ctx context.Context) error
}

// syncMeta makes the metadata committed so far durable, when the store
// can (DurableStore).
func (s *Service) syncMeta(ctx context.Context) error {
	if d, ok := s.meta.(DurableStore); ok {
		if err := d.Sync(ctx); err != nil {
			return fmt.Errorf("blob metadata: %w", err)
		}
	}
	return nil
}

// BlockListType says where a Put Block List entry is looked up.
type BlockListType string

const (
	BlockLatest      BlockListType = "Latest"
	BlockCommitted   BlockListType = "Committed"
	BlockUncommitted BlockListType = "Uncommitted"
)

// BlockRef is one entry of a Put Block List body.
type BlockRef struct {
	ID    string
	Where BlockListType
}

// CommitBlockList makes the listed blocks the blob's content (Put Block
// List): Latest looks among the uncommitted blocks first, then the
// committed ones; Committed and Uncommitted only there. Uncommitted
// blocks not listed are discarded.
func (s *Service) CommitBlockList(ctx context.Context, container, name string, refs []BlockRef, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if len(refs) > MaxCommittedBlocks {
		return Blob{}, fmt.Errorf("blob %s/%s: %d blocks: %w", container, name, len(refs), ErrInvalidBlockList)
	}
	if err := checkTier(container, name, BlockBlob, o.Tier); err != nil {
		return Blob{}, err
	}
	old, _, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if err := s.checkCommitList(old, o); err != nil {
		return Blob{}, err
	}
	staged, err := s.meta.UncommittedBlocks(ctx, container, name, 0)
	if err != nil {
		return Blob{}, err
	}
	uncommitted := make(map[string]Block, len(staged))
	for _, b := range staged {
		uncommitted[b.ID] = b
	}
	committed := make(map[string]Block, len(old.Blocks))
	for _, b := range old.Blocks {
		committed[b.ID] = b
	}
	blocks := make([]Block, 0, len(refs))
	ids := make([]string, 0, len(refs))
	var size int64
	for _, ref := range refs {
		var b Block
		var found bool
		switch ref.Where {
		case BlockUncommitted:
			b, found = uncommitted[ref.ID]
		case BlockCommitted:
			b, found = committed[ref.ID]
		default:
			if b, found = uncommitted[ref.ID]; !found {
				b, found = committed[ref.ID]
			}
		}
		if !found {
			return Blob{}, s.missingBlock(ctx, container, name, ref, o)
		}
		blocks = append(blocks, b)
		ids = append(ids, b.StoreID)
		size += b.Size
	}
	return s.commit(ctx, container, name, ids, blocks, size, o)
}

// missingBlock is Put Block List's answer for a block it did not find:
// ErrInvalidBlockList, unless the conditions fail on the blob as it is now,
// read under its lock: another writer (in any process) may have
// committed the blob, discarding the staged blocks, since they were read,
// and then it is that commit the conditions see (If-None-Match: * answers
// 409 BlobAlreadyExists, as to a commit that came after it).
func (s *Service) missingBlock(ctx context.Context, container, name string, ref BlockRef, o WriteOptions) error {
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return err
	}
	if err := s.checkCommitList(cur, o); err != nil {
		return err
	}
	return fmt.Errorf("blob %s/%s: block %q (%s): %w", container, name, ref.ID, ref.Where, ErrInvalidBlockList)
}

// BlockLists is Get Block List's answer.
type BlockLists struct {
	Committed, Uncommitted []Block
	Blob                   *Blob // nil when no version is committed yet
}

// GetBlockList returns the committed and uncommitted block lists. A blob
// with only uncommitted blocks has no committed version but a list.
func (s *Service) GetBlockList(ctx context.Context, container, name, leaseID string) (BlockLists, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return BlockLists{}, err
	}
	b, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return BlockLists{}, err
	}
	staged, err := s.meta.UncommittedBlocks(ctx, container, name, 0)
	if err != nil {
		return BlockLists{}, err
	}
	if !hasRow(b) {
		return BlockLists{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	if err := checkReadLease(b.Lease, leaseID, s.Now()); err != nil {
		return BlockLists{}, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if ok && b.Type != BlockBlob {
		return BlockLists{}, fmt.Errorf("blob %s/%s is a %s: %w", container, name, b.Type, ErrInvalidBlobType)
	}
	out := BlockLists{Uncommitted: staged}
	if ok {
		out.Committed, out.Blob = b.Blocks, &b
		if out.Committed == nil && b.Size > 0 {
			// Put Blob's content has no client block list; Azure lists
			// none either.
			out.Committed = []Block{}
		}
	}
	return out, nil
}

// GetBlob returns the blob's properties (Get Blob Properties) after the
// read conditions (ErrNotModified, ErrConditionNotMet) and lease check.
// With snapshot set it reads that snapshot (a lease id is then ignored:
// snapshots have no lease).
func (s *Service) GetBlob(ctx context.Context, container, name, snapshot, leaseID string, cond Conditions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if snapshot != "" {
		return s.getSnapshot(ctx, container, name, snapshot, cond)
	}
	b, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	if err := cond.checkRead(ok, b.ETag, b.LastModified); err != nil {
		return b, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if err := cond.checkTags(ok, b.Tags); err != nil {
		return b, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if err := cond.checkEncryption(ok, b.EncryptionKeySHA256); err != nil {
		return b, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if !ok {
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	if err := checkReadLease(b.Lease, leaseID, s.Now()); err != nil {
		return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	return b, nil
}

// Range is a byte range; End < 0 means to the end of the blob.
type Range struct {
	Start, End int64
}

// OpenBlob opens the blob's content for reading: the whole blob (rng nil)
// or the range, clipped to the end. A range starting at or past the end
// is ErrInvalidRange. The reader streams the version current when
// OpenBlob was called; the caller closes it. Returns the blob and the
// offset and length actually served.
func (s *Service) OpenBlob(ctx context.Context, container, name, snapshot string, rng *Range, leaseID string, cond Conditions) (Blob, io.ReadCloser, int64, int64, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, nil, 0, 0, err
	}
	for try := 1; ; try++ {
		b, rc, off, n, stale, err := s.openBlob(ctx, container, name, snapshot, rng, leaseID, cond, try == maxOpenTries)
		if !stale {
			return b, rc, off, n, err
		}
		if err := s.repair(ctx, container, name); err != nil {
			return Blob{}, nil, 0, 0, err
		}
		if err := pause(ctx, time.Duration(try)*time.Millisecond); err != nil {
			return Blob{}, nil, 0, 0, err
		}
	}
}

// maxOpenTries bounds how often OpenBlob reads a blob's row again because
// the content version it opened is not the one the row names.
const maxOpenTries = 5

// pause waits d or until ctx ends (its error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// openBlob is one try of OpenBlob. Readers take no claim, so a writer in
// another process may commit the blob's content between this read of the
// row and the opening of the content: then the version opened is not the
// row's (its content-store ETag differs) and stale is set (the row is
// read again), unless last, when it is served as before claims existed.
func (s *Service) openBlob(ctx context.Context, container, name, snapshot string, rng *Range, leaseID string, cond Conditions, last bool) (_ Blob, _ io.ReadCloser, _, _ int64, stale bool, _ error) {
	mu := s.stripe(container, name)
	mu.RLock()
	defer mu.RUnlock()
	b, err := s.GetBlob(ctx, container, name, snapshot, leaseID, cond)
	if err != nil {
		return b, nil, 0, 0, false, err
	}
	off, n := int64(0), b.Size
	if rng != nil {
		if rng.Start >= b.Size {
			return b, nil, 0, 0, false, fmt.Errorf("blob %s/%s: range start %d, size %d: %w", container, name, rng.Start, b.Size, ErrInvalidRange)
		}
		off = rng.Start
		end := b.Size - 1
		if rng.End >= 0 && rng.End < end {
			end = rng.End
		}
		n = end - off + 1
	}
	if b.Tier == "Archive" {
		return b, nil, 0, 0, false, fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobArchived)
	}
	if snapshot == "" {
		if err := checkIncremental(b, nil); err != nil {
			return b, nil, 0, 0, false, err
		}
	}
	var rc io.ReadCloser
	if b.Type == PageBlob {
		rc, err = s.openPages(ctx, b, off, n)
	} else {
		var info blobstore.Info
		rc, info, err = s.content.ReadRange(ctx, b.ContentKey, off, n)
		if err == nil && !last && snapshot == "" && b.ContentETag != "" && info.ETag != b.ContentETag {
			rc.Close()
			return b, nil, 0, 0, true, nil
		}
		if err == nil && info.Size != b.Size {
			// Only a crash between a content commit and its metadata row
			// leaves them apart; serving either would be a lie.
			rc.Close()
			err = fmt.Errorf("content is %d bytes, metadata says %d: %w", info.Size, b.Size, ErrContentMismatch)
		}
	}
	if err != nil {
		return b, nil, 0, 0, false, fmt.Errorf("blob %s/%s: read: %w", container, name, err)
	}
	return b, rc, off, n, false, nil
}

// SetBlobProperties replaces the blob's HTTP properties (new ETag).
func (s *Service) SetBlobProperties(ctx context.Context, container, name string, p Properties, leaseID string, cond Conditions) (Blob, error) {
	return s.updateBlobRow(ctx, container, name, WriteOptions{LeaseID: leaseID, Cond: cond}, func(b *Blob) error {
		b.Properties = p
		return nil
	})
}

// SetBlobMetadata replaces the blob's metadata (new ETag).
func (s *Service) SetBlobMetadata(ctx context.Context, container, name string, md map[string]string, leaseID string, cond Conditions) (Blob, error) {
	return s.updateBlobRow(ctx, container, name, WriteOptions{LeaseID: leaseID, Cond: cond}, func(b *Blob) error {
		b.Metadata = md
		return nil
	})
}

func (s *Service) updateBlob(ctx context.Context, container, name string, o WriteOptions, f func(*Blob) error) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	b, err := s.conditionedBlob(ctx, container, name, o.Cond, false)
	if err != nil {
		return Blob{}, err
	}
	if err := s.changeBlob(&b, o, f); err != nil {
		return Blob{}, err
	}
	if err := s.meta.PutBlob(ctx, b, false); err != nil {
		return Blob{}, err
	}
	return b, nil
}

// DeleteBlob deletes the blob (its staged blocks too).
//
// A blob with snapshots needs snaps: DeleteSnapshotsInclude deletes the
// blob and its snapshots, DeleteSnapshotsOnly only the snapshots; without
// either it is ErrSnapshotsPresent. With snapshot set only that snapshot
// is deleted (snaps must then be ""). Under an enabled DeleteRetentionPolicy
// (soft true) what it deletes is soft-deleted (softdelete.go).
func (s *Service) DeleteBlob(ctx context.Context, container, name, snapshot string, snaps DeleteSnapshots, leaseID string, cond Conditions) (soft bool, err error) {
	policy, err := s.DeletePolicy(ctx)
	if err != nil {
		return false, err
	}
	return policy.Enabled, s.deleteBlob(ctx, container, name, snapshot, snaps, leaseID, cond, policy)
}

// deleteBlob is DeleteBlob under the delete retention policy p.
func (s *Service) deleteBlob(ctx context.Context, container, name, snapshot string, snaps DeleteSnapshots, leaseID string, cond Conditions, policy DeletePolicy) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	if snapshot != "" && snaps != "" {
		return fmt.Errorf("blob %s/%s: x-ms-delete-snapshots on a snapshot: %w", container, name, ErrInvalidDeleteSnapshots)
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	if snapshot != "" {
		sn, err := s.getSnapshot(ctx, container, name, snapshot, Conditions{})
		if err != nil {
			return err
		}
		if err := cond.checkWrite(true, sn.ETag, sn.LastModified, false); err != nil {
			return fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, err)
		}
		if err := cond.checkTierTime(sn); err != nil {
			return fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, err)
		}
		if policy.Enabled {
			return s.meta.SoftDelete(ctx, []Blob{sn}, []Blob{deletedCopy(sn, s.Now(), policy)})
		}
		if err := s.meta.DeleteSnapshot(ctx, container, name, snapshot); err != nil {
			return err
		}
		return s.deleteContent(ctx, sn)
	}
	b, err := s.conditionedBlob(ctx, container, name, cond, true)
	if err != nil {
		return err
	}
	if err := s.checkWrite(b, b.Committed, WriteOptions{LeaseID: leaseID, Cond: cond}, writeDelete); err != nil {
		return err
	}
	if err := cond.checkTierTime(b); err != nil {
		return fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	snapRows, err := s.meta.Snapshots(ctx, container, name)
	if err != nil {
		return err
	}
	if len(snapRows) > 0 && snaps == "" {
		return fmt.Errorf("blob %s/%s: %d snapshots: %w", container, name, len(snapRows), ErrSnapshotsPresent)
	}
	if policy.Enabled {
		return s.softDeleteBlob(ctx, b, snapRows, snaps == DeleteSnapshotsOnly, policy)
	}
	for _, sn := range snapRows {
		if err := s.meta.DeleteSnapshot(ctx, container, name, sn.Snapshot); err != nil {
			return err
		}
		if err := s.deleteContent(ctx, sn); err != nil {
			return err
		}
	}
	if snaps == DeleteSnapshotsOnly {
		return nil
	}
	if err := s.meta.DeleteBlob(ctx, container, name); err != nil {
		return err
	}
	return s.deleteContent(ctx, b)
}

// deleteContent removes a deleted blob's or snapshot's content (missing
// content is no error: an uncommitted blob has none).
func (s *Service) deleteContent(ctx context.Context, b Blob) error {
	if err := s.content.Delete(ctx, b.ContentKey, blobstore.Conditions{}); err != nil && !errors.Is(err, blobstore.ErrNotFound) {
		return fmt.Errorf("blob %s/%s: delete content: %w", b.Container, b.Name, err)
	}
	return nil
}

// LeaseBlob runs a lease operation on the blob. It does not change the
// ETag or Last-Modified.
func (s *Service) LeaseBlob(ctx context.Context, container, name string, req LeaseRequest, cond Conditions) (Blob, LeaseResult, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, LeaseResult{}, err
	}
	var res LeaseResult
	if b, done, err := s.modifyBlob(ctx, container, name, true, func(b *Blob) (err error) {
		res, err = s.decideLease(b, req, cond)
		return err
	}); done {
		return b, res, err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, LeaseResult{}, err
	}
	defer unlock()
	b, err := s.conditionedBlob(ctx, container, name, cond, true)
	if err != nil {
		return Blob{}, LeaseResult{}, err
	}
	res, err = s.decideLease(&b, req, cond)
	if err != nil {
		return Blob{}, LeaseResult{}, err
	}
	if err := s.meta.PutBlob(ctx, b, false); err != nil {
		return Blob{}, LeaseResult{}, err
	}
	return b, res, nil
}

// decideLease checks a Lease Blob on the row b (any row: an uncommitted
// blob can be leased) and sets its new lease.
func (s *Service) decideLease(b *Blob, req LeaseRequest, cond Conditions) (LeaseResult, error) {
	if err := checkIncremental(*b, nil); err != nil {
		return LeaseResult{}, err
	}
	if err := cond.checkWrite(b.Committed, b.ETag, b.LastModified, false); err != nil {
		return LeaseResult{}, fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	if err := cond.checkTags(b.Committed, b.Tags); err != nil {
		return LeaseResult{}, fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	now := s.Now()
	// An expired lease can be renewed only if nobody wrote the blob since
	// it ended.
	cur := b.Lease.Effective(now)
	modified := cur.State == LeaseExpired && b.LastModified.After(cur.Expires)
	l, res, err := lease.Decide(b.Lease, req, now, lease.Options{NewID: uuid.NewString, ModifiedSinceExpiry: modified})
	if err != nil {
		return LeaseResult{}, fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, err)
	}
	b.Lease = l
	return res, nil
}

func equalBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ServiceProperties returns the stored service properties document (nil
// if never set).
func (s *Service) ServiceProperties(ctx context.Context) ([]byte, error) {
	return s.meta.ServiceProperties(ctx)
}

// SetServiceProperties stores the service properties document as sent.
func (s *Service) SetServiceProperties(ctx context.Context, doc []byte) error {
	return s.meta.SetServiceProperties(ctx, doc)
}
