// Package azname holds the name rule that Azure Storage gives share,
// container and queue names alike — a DNS label — so that it is written
// once. Each service wraps the answer in its own error (fs's
// ErrInvalidName, blobsvc's ErrInvalidContainerName, msgqueue's
// ErrNameLength or ErrInvalidName), since the services answer a bad name
// with different codes.
package azname

import (
	"errors"
	"fmt"
)

// Bounds of a DNS-label name.
const (
	MinLabel = 3
	MaxLabel = 63
)

// Why a name is not a DNS label: ErrLength (it has fewer than MinLabel or
// more than MaxLabel characters) or ErrCharacter (anything else).
var (
	ErrLength    = errors.New("length out of range")
	ErrCharacter = errors.New("invalid character")
)

// LabelError is DNSLabel's answer for a name that is not a DNS label.
// Error reads "KIND "NAME" REASON", KIND being what the caller named.
type LabelError struct {
	Kind, Name string
	Err        error  // ErrLength or ErrCharacter
	Reason     string // "must have 3-63 characters", ": misplaced hyphen", ": character '_'"
}

func (e *LabelError) Error() string { return fmt.Sprintf("%s %q%s", e.Kind, e.Name, e.Reason) }

func (e *LabelError) Unwrap() error { return e.Err }

// DNSLabel checks that name is 3 to 63 characters of lowercase letters,
// digits and hyphens, starting and ending with a letter or digit, with no
// two hyphens in a row ("Naming and referencing shares, directories,
// files, and metadata"; "Naming and referencing containers, blobs, and
// metadata"; "Naming queues and metadata"). kind names the name in the
// error ("share name", "container", "queue").
func DNSLabel(kind, name string) error {
	if len(name) < MinLabel || len(name) > MaxLabel {
		return &LabelError{Kind: kind, Name: name, Err: ErrLength,
			Reason: fmt.Sprintf(" must have %d-%d characters", MinLabel, MaxLabel)}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return &LabelError{Kind: kind, Name: name, Err: ErrCharacter, Reason: ": misplaced hyphen"}
			}
		default:
			return &LabelError{Kind: kind, Name: name, Err: ErrCharacter, Reason: fmt.Sprintf(": character %q", c)}
		}
	}
	return nil
}
