package msgqueue

import (
	"errors"
	"fmt"
)

// Sentinels of the Queue service's outcomes. Stores return the first
// three (wrapped with the queue or message they concern); the Service
// adds the rest.
var (
	// ErrQueueNotFound: the queue does not exist.
	ErrQueueNotFound = errors.New("queue not found")
	// ErrMessageNotFound: no unexpired message has this id and pop
	// receipt (deleted, expired, dequeued again or updated since the
	// receipt was issued, or never existed).
	ErrMessageNotFound = errors.New("message not found")
	// ErrQueueExists: Create Queue on an existing queue with other
	// metadata.
	ErrQueueExists = errors.New("queue already exists with other metadata")
	// ErrInvalidName: a queue name with characters other than lowercase
	// letters, digits and single inner hyphens.
	ErrInvalidName = errors.New("invalid queue name")
	// ErrNameLength: a queue name shorter than 3 or longer than 63.
	ErrNameLength = errors.New("queue name length out of range")
	// ErrMessageTooLarge: message text over MaxMessageBytes UTF-8 bytes.
	ErrMessageTooLarge = errors.New("message text too large")
	// ErrInvalidACL: more than MaxSignedIdentifiers stored access
	// policies, an identifier over MaxSignedIdentifierLen characters, or
	// a permission letter other than r, a, u, p.
	ErrInvalidACL = errors.New("invalid queue ACL")
)

// RangeError is a numeric parameter outside its bounds. Param is the
// parameter's protocol name (numofmessages, visibilitytimeout, …).
type RangeError struct {
	Param    string
	Value    int64
	Min, Max int64
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s %d out of range [%d, %d]", e.Param, e.Value, e.Min, e.Max)
}

// ParamError is a parameter that is in range but not allowed with the
// others (a visibility timeout not before the expiry, a TTL of 0).
type ParamError struct {
	Param  string
	Value  int64
	Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("%s %d: %s", e.Param, e.Value, e.Reason) }
