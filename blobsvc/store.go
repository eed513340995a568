package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/meta"
)

// Store keeps the Blob service's metadata: containers, blobs (their
// properties, metadata, committed block lists and leases) and staged
// (uncommitted) blocks. Content is not here: it lives in a blobstore.Store
// under each blob's ContentKey.
//
// Every call is atomic (one statement or one transaction). The Service
// holds a blob's claim (ClaimBlob) from its condition and lease checks to
// the write they guard, in whichever process or node it runs; the Store
// keeps the claims and judges owners' liveness. The contract names no
// engine (doc.go, "Store contract"). Times are kept
// with nanosecond precision. Missing resources are ErrContainerNotFound
// or ErrBlobNotFound, wrapped with their names.
type Store interface {
	// CreateContainer adds c (ErrContainerExists if present).
	CreateContainer(ctx context.Context, c Container) error
	Container(ctx context.Context, name string) (Container, error)
	// UpdateContainer replaces the stored container c.Name.
	UpdateContainer(ctx context.Context, c Container) error
	// DeleteContainer removes the container and all its blob and block
	// rows in one transaction and returns the content keys of the blobs
	// it held (for the caller to delete from the content store).
	DeleteContainer(ctx context.Context, name string) ([]string, error)
	// ListContainers returns up to limit containers whose names start
	// with prefix and are ≥ from, in name order.
	ListContainers(ctx context.Context, prefix, from string, limit int) ([]Container, error)

	// Blob returns the committed blob (ErrBlobNotFound).
	Blob(ctx context.Context, container, name string) (Blob, error)
	// PutBlob stores b (insert or replace), atomically with the check
	// that its container exists (ErrContainerNotFound). With
	// dropUncommitted it also removes the blob's staged blocks (a commit
	// discards them).
	PutBlob(ctx context.Context, b Blob, dropUncommitted bool) error
	// DeleteBlob removes the blob and its staged blocks.
	DeleteBlob(ctx context.Context, container, name string) error
	// ListBlobs returns up to limit blobs of the container whose names
	// start with prefix and are ≥ from, in name order (bytewise).
	ListBlobs(ctx context.Context, container, prefix, from string, limit int) ([]Blob, error)

	// Snapshot returns one snapshot of a blob (ErrBlobNotFound);
	// Snapshots all of them, oldest first; DeleteSnapshot removes one.
	// PutBlob with b.Snapshot set stores a snapshot; Blob, DeleteBlob and
	// ListBlobs concern base blobs only.
	Snapshot(ctx context.Context, container, name, snapshot string) (Blob, error)
	Snapshots(ctx context.Context, container, name string) ([]Blob, error)
	DeleteSnapshot(ctx context.Context, container, name, snapshot string) error

	// PutIntent records the row a content commit is about to make
	// current (with whether it drops the staged blocks), owned by this
	// store's owner session; PutBlob and DeleteBlob of the blob remove
	// it, DeleteIntent drops it. Intents lists those whose owner is dead
	// (a crash left them; a live owner's is a commit in progress), for
	// Recover; Intent returns the blob's one intent whoever owns it (the
	// caller holds the blob's claim, so it is no commit in progress:
	// doc.go, "Several processes on one metadata database").
	PutIntent(ctx context.Context, b Blob, dropUncommitted bool) error
	DeleteIntent(ctx context.Context, container, name string) error
	Intents(ctx context.Context) ([]Intent, error)
	Intent(ctx context.Context, container, name string) (Intent, bool, error)

	// ClaimBlob takes the claim on one blob (name "" for the container
	// itself) for this store's owner session: free, or held by a dead
	// owner (taken over: Claim.From names it), it is the caller's; held
	// by a live owner (this one included), it is a *ClaimHeldError
	// (ErrClaimHeld) at once: the caller waits and tries again. Taking
	// it is atomic across processes (and nodes): two claimers never both
	// succeed. While a claim is held, the store's writes of that blob
	// (PutBlob, DeleteBlob, SoftDelete, DeleteSnapshot, PutIntent,
	// DeleteIntent, UpdateContainer for a container's) check in their
	// own transaction that it is still this claim: one taken over since
	// (this owner was judged dead) writes nothing (ErrClaimLost).
	// ReleaseClaim gives it up (no error if it was taken over).
	ClaimBlob(ctx context.Context, container, name string) (Claim, error)
	ReleaseClaim(ctx context.Context, c Claim) error
	// ModifyBlob replaces the base blob's row with what fn makes of it,
	// in one transaction in which no other writer of the blob acts, as
	// if it held the blob's claim (on SQLite the database's write lock;
	// a server engine takes the claim's key in the transaction). fn
	// decides from the row as it is (a check and its write are one
	// step) and does no I/O. fn is not called, and nothing written,
	// when the blob has no row (ErrBlobNotFound) or when its claim is
	// held or it has a commit intent (ErrClaimHeld: the caller then
	// takes the claim, which waits or resolves, and works under it). An
	// error of fn writes nothing and is returned as is. ModifyContainer
	// is the same for a container's row and claim (ErrContainerNotFound).
	ModifyBlob(ctx context.Context, container, name string, fn func(*Blob) error) (Blob, error)
	ModifyContainer(ctx context.Context, name string, fn func(*Container) error) (Container, error)

	// StageBlock records (or replaces) an uncommitted block staged at
	// time at, atomically with the check that the container exists.
	StageBlock(ctx context.Context, container, name string, b Block, at time.Time) error
	// UncommittedBlocks returns the staged blocks of a blob in the order
	// they were first staged, at most limit of them (0: all).
	UncommittedBlocks(ctx context.Context, container, name string, limit int) ([]Block, error)
	// StagedStoreIDs calls fn with the content-store id of every staged
	// block of every blob, stopping at fn's first error.
	StagedStoreIDs(ctx context.Context, fn func(storeID string) error) error
	// ExpireStaged removes the staged blocks staged before before and
	// returns the blobs that lost some (each once). Blocks of unknown age
	// (recorded before ages were) count as staged at now.
	ExpireStaged(ctx context.Context, before, now time.Time) ([]BlobName, error)

	// SoftDelete removes the live rows (base blobs with their staged
	// blocks, or snapshots; ErrBlobNotFound if one is missing) and
	// records deleted (each with Deleted set) as soft-deleted, in one
	// transaction.
	SoftDelete(ctx context.Context, live []Blob, deleted []Blob) error
	// DeletedBlobs returns the soft-deleted rows of one blob name (its
	// base versions and snapshots), snapshots in time order, the base
	// ones ("" snapshot) first; ListDeleted those of a container whose
	// names start with prefix and are ≥ from, in name order, up to
	// limit; ExpiredDeleted up to limit of those whose retention ended
	// by now.
	// Each has Deleted.Seq set. RemoveDeleted forgets one
	// (ErrBlobNotFound).
	DeletedBlobs(ctx context.Context, container, name string) ([]Blob, error)
	ListDeleted(ctx context.Context, container, prefix, from string, limit int) ([]Blob, error)
	ExpiredDeleted(ctx context.Context, now time.Time, limit int) ([]Blob, error)
	RemoveDeleted(ctx context.Context, seq int64) error

	// SoftDeleteContainer removes the live container d.Container.Name
	// (ErrContainerNotFound) and records d; its blob and soft-deleted
	// rows move under HiddenContainer(name, d.Version), its staged blocks
	// and intents go; one transaction. DeletedContainers lists the
	// records whose names start with prefix and are ≥ from, in name
	// order, up to limit; ExpiredContainers up to limit of those whose
	// retention ended by now. RestoreContainer makes the record (name,
	// version) the live container c (ErrContainerNotFound without it,
	// ErrContainerExists if c.Name is live), its rows c.Name's again;
	// PurgeDeletedContainer forgets the record and its rows and returns
	// their content keys.
	SoftDeleteContainer(ctx context.Context, d DeletedContainer) error
	DeletedContainers(ctx context.Context, prefix, from string, limit int) ([]DeletedContainer, error)
	ExpiredContainers(ctx context.Context, now time.Time, limit int) ([]DeletedContainer, error)
	RestoreContainer(ctx context.Context, name, version string, c Container) error
	PurgeDeletedContainer(ctx context.Context, name, version string) ([]string, error)

	// ServiceProperties returns the stored service properties document
	// (nil if never set); SetServiceProperties replaces it.
	ServiceProperties(ctx context.Context) ([]byte, error)
	SetServiceProperties(ctx context.Context, doc []byte) error
}

// PublicAccess is a container's x-ms-blob-public-access level.
type PublicAccess string

const (
	AccessPrivate   PublicAccess = ""
	AccessBlob      PublicAccess = "blob"
	AccessContainer PublicAccess = "container"
)

// Container is one container's stored state.
type Container struct {
	Name         string
	Metadata     map[string]string
	ETag         string
	LastModified time.Time
	PublicAccess PublicAccess
	Lease        Lease
	// ACL holds the stored access policies (Set Container ACL), at most
	// MaxSignedIdentifiers.
	ACL []SignedIdentifier
}

// SignedIdentifier is one stored access policy, kept as sent (times in
// the ISO 8601 form the client used): acl's one type, whose fields (ID,
// Start, Expiry, Permission) are the ones the JSON documents hold.
type SignedIdentifier = acl.SignedIdentifier

// MaxSignedIdentifiers bounds a container's stored access policies.
const MaxSignedIdentifiers = acl.MaxIdentifiers

// Properties are a blob's settable HTTP properties.
type Properties struct {
	ContentType        string
	ContentEncoding    string
	ContentLanguage    string
	ContentDisposition string
	CacheControl       string
	ContentMD5         []byte
}

// Block is one block of a block list. StoreID is the id of its data in
// the content store: fresh per Put Block, so that re-staging an Azure id
// never disturbs a committed block of the same id.
type Block struct {
	ID      string // the client's base64 block id
	StoreID string
	Size    int64
}

// BlobName names a blob of a container.
type BlobName struct{ Container, Name string }

// BlobType is x-ms-blob-type.
type BlobType string

const (
	BlockBlob  BlobType = "BlockBlob"
	AppendBlob BlobType = "AppendBlob"
	PageBlob   BlobType = "PageBlob"
)

// Blob is one blob's stored state.
type Blob struct {
	Container   string
	Name        string
	Snapshot    string // "" for the base blob; the x-ms-snapshot time of a snapshot
	Type        BlobType
	ContentKey  string // key in the content store
	ContentETag string // the content store's ETag of the committed version
	// Committed is false for a blob that so far has only uncommitted
	// blocks (Put Block on a new name): Get Blob and friends answer
	// BlobNotFound for it, Lease Blob and Delete Blob act on it.
	Committed    bool
	Size         int64
	ETag         string
	Created      time.Time
	LastModified time.Time
	Properties   Properties
	Metadata     map[string]string
	Blocks       []Block // committed block list
	Lease        Lease
	Copy         *CopyInfo         // set by Copy Blob, cleared by other content writes
	Tags         map[string]string // blob index tags
	Page         *PageState        // page blobs only
	// Tier is the access tier Set Blob Tier stored ("" for the default,
	// Hot, inferred); TierChanged is when.
	Tier        string
	TierChanged time.Time
	// Rehydrate is set while an archived blob is being rehydrated
	// (tier.go).
	Rehydrate *Rehydration `json:",omitempty"`
	// Sealed: an append blob that takes no more appends (Seal Append
	// Blob, x-ms-blob-sealed).
	Sealed bool `json:",omitempty"`
	// Deleted is set on a soft-deleted blob or snapshot (blob soft
	// delete): it is not live, only listed with include=deleted and
	// brought back by Undelete Blob.
	Deleted *DeletedInfo `json:",omitempty"`
	// EncryptionKeySHA256 is the SHA-256 (base64) of the customer-provided
	// key the content was written with, "" for none (cpk.go).
	EncryptionKeySHA256 string `json:",omitempty"`
}

// DeletedInfo records a soft deletion: when, until when it can be
// undeleted, and the store's identity of the row.
type DeletedInfo struct {
	Time    time.Time
	Expires time.Time
	Seq     int64 `json:"-"`
}

// PageState is a page blob's layout: its content is cut into chunks of
// PageChunkSize bytes; only written chunks are stored (in index order, as
// the blocks of the content-store blob), the others read as zeros.
type PageState struct {
	Chunks         []PageChunk
	Ranges         []PageRange // written (not cleared) pages, sorted, merged
	SequenceNumber int64
	// The write history Get Page Ranges with prevsnapshot reads: Lineage
	// names the blob's creation (a snapshot of an earlier creation is
	// BlobOverwritten), Gen counts its page writes, clears and shrinks,
	// Touched the pages each last changed at (sorted, disjoint). A blob
	// stored before the history has no Lineage.
	Lineage string         `json:",omitempty"`
	Gen     int64          `json:",omitempty"`
	Touched []TouchedRange `json:",omitempty"`
}

// TouchedRange is a range of pages last written or cleared at Gen.
type TouchedRange struct {
	PageRange
	Gen int64
}

// PageChunk is one stored chunk: its index and its block in the content
// store (Size bytes stored; a chunk shortened by a resize keeps fewer).
type PageChunk struct {
	Index   int64
	StoreID string
	Size    int64
}

// PageRange is a range of 512-byte pages, End inclusive.
type PageRange struct {
	Start, End int64
}

// CopyInfo records the Copy Blob that made a blob (complete: copies
// within the account are synchronous) or the last Incremental Copy Blob
// into it (incremental.go), which may be pending or have failed.
type CopyInfo struct {
	ID        string
	Source    string // the x-ms-copy-source URL as sent
	Size      int64
	Completed time.Time
	// Status is "" for success, CopyPending or CopyFailed (incremental
	// copies only); StatusDescription says why one failed.
	Status            string `json:",omitempty"`
	StatusDescription string `json:",omitempty"`
	// Incremental marks an incremental copy blob or a snapshot of one:
	// From is its source blob; Copying the source snapshot of the copy
	// under way (or last tried), Copied the last one copied, and
	// DestinationSnapshot the destination's snapshot that holds it.
	Incremental         bool     `json:",omitempty"`
	From                BlobName `json:",omitzero"`
	Copying             string   `json:",omitempty"`
	Copied              string   `json:",omitempty"`
	DestinationSnapshot string   `json:",omitempty"`
}

// Copy statuses (x-ms-copy-status) besides success.
const (
	CopyPending = "pending"
	CopyFailed  = "failed"
)

// StatusName is x-ms-copy-status: success, pending or failed.
func (c *CopyInfo) StatusName() string {
	if c.Status == "" {
		return "success"
	}
	return c.Status
}

// Intent is a commit in progress (Store.PutIntent).
type Intent struct {
	Blob            Blob
	DropUncommitted bool
}

// Claim is a held per-blob claim (Store.ClaimBlob).
type Claim struct {
	Container, Name string // Name "" for a container
	Token           string // this claim's identity in the store
	// From is the dead owner whose claim this one took over ("" when it
	// was free).
	From string
}

// ErrClaimHeld: a live owner holds the claim (ClaimHeldError).
var ErrClaimHeld = errors.New("blob claim held by a live owner")

// ErrClaimLost: a write under a claim that another process has since
// taken over (this process's owner session was judged dead): nothing was
// written. It is the server's condition, not the request's: errors.Is
// reports it as meta.ErrUnavailable too, so the front end answers 503
// ServerBusy (which clients retry), as for a database outage.
var ErrClaimLost error = claimLostError{}

type claimLostError struct{}

func (claimLostError) Error() string {
	return "blob claim taken over: this process no longer writes the blob"
}

func (claimLostError) Is(target error) bool { return target == meta.ErrUnavailable }

// ClaimHeldError is ClaimBlob's answer while a live owner holds the claim.
type ClaimHeldError struct {
	Container, Name string
	Owner           string // the holder's owner session
}

func (e *ClaimHeldError) Error() string {
	return fmt.Sprintf("blob %s/%s: owner %s holds its claim", e.Container, e.Name, e.Owner)
}

func (e *ClaimHeldError) Unwrap() error { return ErrClaimHeld }
