package msgqueue

import (
	"context"
	"time"

	"github.com/blobshare/blobshare/acl"
)

// Store keeps queues and messages. Every method that changes a message is
// one conditional statement (or one transaction) keyed by what the caller
// last saw — a pop receipt, a still-visible next-visible time — so that
// concurrent callers on any number of processes or gateways decide by
// rows, never by a lock held around read-then-write. Times are kept with
// millisecond precision.
//
// Claim, Delete and Update take the clock, not a time: they read it when
// their statement is about to run, in the store's commit order. A time
// read before waiting for the store would be older than a put committed
// meanwhile, and a get that began before that put but ran after it would
// not see the message although nothing else could take it.
//
// A store shared by gateways on several hosts may decide on its own clock
// instead, one all gateways share (msgqueue/pgstore: the database's, read
// inside each statement): then Claim, Delete and Update read that clock
// rather than the one passed, Peek, Queue and Sweep ignore the time
// passed, and Insert keeps the message's visibility timeout and TTL
// (NextVisible and Expires relative to Inserted) but starts them at the
// store's now.
//
// Missing queues are ErrQueueNotFound and missing or stale messages
// ErrMessageNotFound, wrapped with the queue or message id.
type Store interface {
	// CreateQueue creates the queue with md; if it exists already it
	// returns created false and the stored metadata (the Service decides
	// whether that is idempotent).
	CreateQueue(ctx context.Context, name string, md map[string]string, now time.Time) (created bool, existing map[string]string, err error)
	// DeleteQueue removes the queue and its messages in one transaction.
	DeleteQueue(ctx context.Context, name string) error
	// Queue returns the queue's metadata and the number of its messages
	// not expired at now.
	Queue(ctx context.Context, name string, now time.Time) (QueueInfo, error)
	SetMetadata(ctx context.Context, name string, md map[string]string) error
	ACL(ctx context.Context, name string) ([]SignedIdentifier, error)
	SetACL(ctx context.Context, name string, ids []SignedIdentifier) error
	// ListQueues returns up to limit queues whose names start with prefix
	// and are ≥ from, in name order, with their metadata.
	ListQueues(ctx context.Context, prefix, from string, limit int) ([]QueueInfo, error)

	// Insert adds m to the queue, atomically with the check that the
	// queue exists.
	Insert(ctx context.Context, queue string, m Message) error
	// Claim hides up to n messages visible and unexpired at now() until
	// now() + visibility, increments their dequeue counts and gives each
	// the pop receipt receiptPrefix + its store-unique suffix; a message
	// another caller claimed first is skipped. Oldest next-visible first.
	Claim(ctx context.Context, queue string, now func() time.Time, n int, visibility time.Duration, receiptPrefix string) ([]Message, error)
	// Peek returns up to n messages visible and unexpired at now,
	// unchanged, oldest next-visible first.
	Peek(ctx context.Context, queue string, now time.Time, n int) ([]Message, error)
	// Delete removes the message if receipt is its current pop receipt
	// and it has not expired at now().
	Delete(ctx context.Context, queue, id, receipt string, now func() time.Time) error
	// Update gives the message newReceipt and the next-visible time now()
	// + visibility (and text, if not nil) if receipt is its current pop
	// receipt and it has not expired at now(); it returns the message as
	// updated.
	Update(ctx context.Context, queue, id, receipt string, now func() time.Time, newReceipt string, visibility time.Duration, text *string) (Message, error)
	// Clear removes every message of the queue.
	Clear(ctx context.Context, queue string) error
	// Sweep removes messages expired at now, from every queue.
	Sweep(ctx context.Context, now time.Time) (int64, error)

	// ServiceProperties returns the stored service properties document
	// (nil if never set); SetServiceProperties replaces it.
	ServiceProperties(ctx context.Context) ([]byte, error)
	SetServiceProperties(ctx context.Context, doc []byte) error
}

// QueueInfo is a queue as listed or read.
type QueueInfo struct {
	Name     string
	Metadata map[string]string
	// ApproximateMessages counts unexpired messages, visible or not (only
	// from Store.Queue; 0 in listings).
	ApproximateMessages int64
}

// Message is one message and its visibility state.
type Message struct {
	ID           string
	Text         string
	Inserted     time.Time
	Expires      time.Time // NeverExpires for a TTL of -1
	NextVisible  time.Time
	DequeueCount int64
	PopReceipt   string
}

// SignedIdentifier is one stored access policy of a queue's ACL, kept as
// sent (times in the ISO 8601 form the client used): acl's one type, with
// the fields (ID, Start, Expiry, Permission) the stores always held.
type SignedIdentifier = acl.SignedIdentifier
