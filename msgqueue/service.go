package msgqueue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/blobshare/blobshare/acl"
	"github.com/blobshare/blobshare/internal/azname"
)

// Limits of the Queue service (Azure's documented bounds).
const (
	MaxMessageBytes      = 64 << 10 // message text, UTF-8 bytes
	MaxMessagesPerGet    = 32
	MaxVisibilityTimeout = 7 * 24 * time.Hour
	DefaultMessageTTL    = 7 * 24 * time.Hour
	DefaultGetVisibility = 30 * time.Second
	MaxSignedIdentifiers = acl.MaxIdentifiers
	// MaxSignedIdentifierLen: "The signed identifier ... can be up to 64
	// characters in length" (Set Queue ACL).
	MaxSignedIdentifierLen = acl.MaxIDLength
	DefaultListMaxResults  = 5000
	minNameLen, maxNameLen = 3, 63
	// sweepEvery is how often Put removes expired messages for good
	// (they are invisible to every operation as soon as they expire).
	sweepEvery = time.Minute
)

// NeverExpires is the expiration time of a message put with a TTL of -1,
// as Azure reports it (Fri, 31 Dec 9999 23:59:59 GMT).
var NeverExpires = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// Service is the Queue service's semantics over a Store: names, bounds,
// times from the injected clock, message ids and pop receipts. It knows
// nothing of HTTP. Safe for concurrent use.
type Service struct {
	store Store
	now   func() time.Time

	sweepMu   sync.Mutex
	lastSweep time.Time
}

// New returns a Service over store; now is the clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// Now is the service's clock, truncated to the store's millisecond.
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// ValidName checks a queue name: 3 to 63 characters (else ErrNameLength),
// lowercase letters, digits and hyphens, no leading, trailing or doubled
// hyphen (else ErrInvalidName).
func ValidName(name string) error {
	err := azname.DNSLabel("queue", name)
	switch {
	case err == nil:
		return nil
	case name != "" && errors.Is(err, azname.ErrLength):
		return fmt.Errorf("%v: %w", err, ErrNameLength)
	default:
		return fmt.Errorf("%v: %w", err, ErrInvalidName)
	}
}

// CreateQueue creates the queue. An existing queue with the same metadata
// (names compared case-insensitively, values exactly) is not an error
// (created false); with other metadata it is ErrQueueExists.
func (s *Service) CreateQueue(ctx context.Context, name string, md map[string]string) (created bool, err error) {
	if err := ValidName(name); err != nil {
		return false, err
	}
	created, existing, err := s.store.CreateQueue(ctx, name, md, s.Now())
	if err != nil || created {
		return created, err
	}
	if !sameMetadata(md, existing) {
		return false, fmt.Errorf("queue %s: %w", name, ErrQueueExists)
	}
	return false, nil
}

func sameMetadata(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	lower := make(map[string]string, len(b))
	for k, v := range b {
		lower[strings.ToLower(k)] = v
	}
	for k, v := range a {
		if w, ok := lower[strings.ToLower(k)]; !ok || w != v {
			return false
		}
	}
	return true
}

// DeleteQueue removes the queue and its messages; pollers of the queue
// then get ErrQueueNotFound.
func (s *Service) DeleteQueue(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	return s.store.DeleteQueue(ctx, name)
}

// Queue returns the queue's metadata and approximate message count.
func (s *Service) Queue(ctx context.Context, name string) (QueueInfo, error) {
	if err := ValidName(name); err != nil {
		return QueueInfo{}, err
	}
	return s.store.Queue(ctx, name, s.Now())
}

// SetMetadata replaces the queue's metadata.
func (s *Service) SetMetadata(ctx context.Context, name string, md map[string]string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	return s.store.SetMetadata(ctx, name, md)
}

// ACL returns the queue's stored access policies.
func (s *Service) ACL(ctx context.Context, name string) ([]SignedIdentifier, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	return s.store.ACL(ctx, name)
}

// SetACL replaces the queue's stored access policies: at most
// MaxSignedIdentifiers, ids of at most MaxSignedIdentifierLen characters,
// permissions from "raup" (else ErrInvalidACL).
func (s *Service) SetACL(ctx context.Context, name string, ids []SignedIdentifier) error {
	if err := ValidName(name); err != nil {
		return err
	}
	ids, err := acl.Validate(ids, acl.QueueRules)
	if err != nil {
		return fmt.Errorf("queue %s: %w: %w", name, ErrInvalidACL, err)
	}
	return s.store.SetACL(ctx, name, ids)
}

// ListOptions select a page of List Queues.
type ListOptions struct {
	Prefix string
	Marker string // the first name of the page ("" from the start)
	Max    int    // 1…5000; 0 means 5000; more is capped at 5000
}

// ListQueues returns a page of queues in name order and the marker of the
// next page ("" at the end).
func (s *Service) ListQueues(ctx context.Context, o ListOptions) ([]QueueInfo, string, error) {
	limit := o.Max
	if limit <= 0 || limit > DefaultListMaxResults {
		limit = DefaultListMaxResults
	}
	qs, err := s.store.ListQueues(ctx, o.Prefix, o.Marker, limit+1)
	if err != nil {
		return nil, "", err
	}
	if len(qs) > limit {
		return qs[:limit], qs[limit].Name, nil
	}
	return qs, "", nil
}

// PutOptions are Put Message's optional parameters.
type PutOptions struct {
	// VisibilityTimeout hides the new message for this long (0…7 days).
	VisibilityTimeout time.Duration
	// TTL is the message's time to live: -1 s (messagettl=-1) means it
	// never expires; otherwise at least a second, and more than
	// VisibilityTimeout. Any other value (0, -2 s) is a ParamError.
	TTL time.Duration
	// TTLSet says TTL was given; without it the TTL is
	// DefaultMessageTTL.
	TTLSet bool
}

// Put adds a message. Its text must be at most MaxMessageBytes.
func (s *Service) Put(ctx context.Context, queue, text string, o PutOptions) (Message, error) {
	if err := ValidName(queue); err != nil {
		return Message{}, err
	}
	if len(text) > MaxMessageBytes {
		return Message{}, fmt.Errorf("queue %s: %d bytes: %w", queue, len(text), ErrMessageTooLarge)
	}
	if err := inRange("visibilitytimeout", o.VisibilityTimeout, 0, MaxVisibilityTimeout); err != nil {
		return Message{}, err
	}
	now := s.Now()
	m := Message{ID: uuid.NewString(), Text: text, Inserted: now, NextVisible: now.Add(o.VisibilityTimeout), PopReceipt: newReceipt()}
	switch {
	case !o.TTLSet:
		m.Expires = now.Add(DefaultMessageTTL)
	case o.TTL == -time.Second:
		m.Expires = NeverExpires
	case o.TTL < time.Second:
		return Message{}, &ParamError{Param: "messagettl", Value: int64(o.TTL / time.Second),
			Reason: "Value must be greater than or equal to 1, or -1 to indicate an infinite TTL."}
	case o.VisibilityTimeout >= o.TTL:
		return Message{}, &ParamError{Param: "visibilitytimeout", Value: int64(o.VisibilityTimeout / time.Second),
			Reason: "messagettl must be greater than visibilitytimeout."}
	default:
		m.Expires = now.Add(o.TTL)
		if m.Expires.After(NeverExpires) || m.Expires.Before(now) { // overflow
			m.Expires = NeverExpires
		}
	}
	if err := s.store.Insert(ctx, queue, m); err != nil {
		return Message{}, err
	}
	s.maybeSweep(ctx, now)
	return m, nil
}

// maybeSweep removes expired messages for good at most once per
// sweepEvery; a failure is left for the next sweep (expired messages are
// invisible either way).
func (s *Service) maybeSweep(ctx context.Context, now time.Time) {
	s.sweepMu.Lock()
	due := now.Sub(s.lastSweep) >= sweepEvery
	if due {
		s.lastSweep = now
	}
	s.sweepMu.Unlock()
	if due {
		_, _ = s.store.Sweep(ctx, now)
	}
}

// Get dequeues up to n (1…32) visible messages and hides them for
// visibility (1 s…7 days): each gets a new pop receipt and its dequeue
// count incremented. An empty queue gives an empty slice.
func (s *Service) Get(ctx context.Context, queue string, n int, visibility time.Duration) ([]Message, error) {
	if err := ValidName(queue); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxMessagesPerGet {
		return nil, &RangeError{Param: "numofmessages", Value: int64(n), Min: 1, Max: MaxMessagesPerGet}
	}
	if err := inRange("visibilitytimeout", visibility, time.Second, MaxVisibilityTimeout); err != nil {
		return nil, err
	}
	return s.store.Claim(ctx, queue, s.Now, n, visibility, newReceipt())
}

// Peek returns up to n (1…32) visible messages without changing them.
func (s *Service) Peek(ctx context.Context, queue string, n int) ([]Message, error) {
	if err := ValidName(queue); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxMessagesPerGet {
		return nil, &RangeError{Param: "numofmessages", Value: int64(n), Min: 1, Max: MaxMessagesPerGet}
	}
	return s.store.Peek(ctx, queue, s.Now(), n)
}

// Delete removes the message if receipt is its current pop receipt;
// otherwise ErrMessageNotFound (see doc.go for why never
// PopReceiptMismatch).
func (s *Service) Delete(ctx context.Context, queue, id, receipt string) error {
	if err := ValidName(queue); err != nil {
		return err
	}
	return s.store.Delete(ctx, queue, id, receipt, s.Now)
}

// Update makes the message visible again after visibility (0…7 days) and,
// if text is not nil, replaces its text, if receipt is its current pop
// receipt (else ErrMessageNotFound). It returns the message with its new
// pop receipt and next-visible time; the dequeue count is unchanged.
func (s *Service) Update(ctx context.Context, queue, id, receipt string, visibility time.Duration, text *string) (Message, error) {
	if err := ValidName(queue); err != nil {
		return Message{}, err
	}
	if text != nil && len(*text) > MaxMessageBytes {
		return Message{}, fmt.Errorf("queue %s: message %s: %d bytes: %w", queue, id, len(*text), ErrMessageTooLarge)
	}
	if err := inRange("visibilitytimeout", visibility, 0, MaxVisibilityTimeout); err != nil {
		return Message{}, err
	}
	return s.store.Update(ctx, queue, id, receipt, s.Now, newReceipt(), visibility, text)
}

// Clear removes every message of the queue.
func (s *Service) Clear(ctx context.Context, queue string) error {
	if err := ValidName(queue); err != nil {
		return err
	}
	return s.store.Clear(ctx, queue)
}

// ServiceProperties returns the stored properties document (nil: never
// set).
func (s *Service) ServiceProperties(ctx context.Context) ([]byte, error) {
	return s.store.ServiceProperties(ctx)
}

// SetServiceProperties stores the properties document.
func (s *Service) SetServiceProperties(ctx context.Context, doc []byte) error {
	return s.store.SetServiceProperties(ctx, doc)
}

// inRange checks min ≤ d ≤ max, all in whole seconds for the error.
func inRange(param string, d, min, max time.Duration) error {
	if d < min || d > max {
		return &RangeError{Param: param, Value: int64(d / time.Second), Min: int64(min / time.Second), Max: int64(max / time.Second)}
	}
	return nil
}

// newReceipt is a fresh random pop receipt (or Claim's receipt prefix):
// 12 random bytes, URL-safe base64.
func newReceipt() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
