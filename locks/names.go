package locks

import (
	"fmt"
	"math"
	"strings"
)

// Access words as the session command and logs spell them, in bit order.
var accessWords = [...]struct {
	bit  Access
	word string
}{
	{AccessRead, "read"},
	{AccessWrite, "write"},
	{AccessAppend, "append"},
	{AccessExecute, "execute"},
	{AccessDelete, "delete"},
	{AccessReadAttributes, "read_attributes"},
}

// Share words, in bit order; "none" is the empty set.
var shareWords = [...]struct {
	bit  ShareMode
	word string
}{
	{ShareRead, "read"},
	{ShareWrite, "write"},
	{ShareDelete, "delete"},
}

const (
	// dataAccess are the bits that take part in sharing (locking.md §1.1).
	dataAccess = AccessRead | AccessWrite | AccessAppend | AccessExecute | AccessDelete
	// validAccess are all bits Access defines.
	validAccess = dataAccess | AccessReadAttributes
)

// ParseAccess parses a comma-separated list of access words (read, write,
// append, execute, delete, read_attributes), as `blobshare session` takes
// them. Words are case-insensitive; an empty list, an empty word or an
// unknown word is ErrInvalidParameter.
func ParseAccess(s string) (Access, error) {
	var a Access
	if strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("access %q: empty list: %w", s, ErrInvalidParameter)
	}
	for _, w := range strings.Split(s, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		found := false
		for _, aw := range accessWords {
			if aw.word == w {
				a |= aw.bit
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("access %q: unknown word %q: %w", s, w, ErrInvalidParameter)
		}
	}
	return a, nil
}

// String lists the access words of a, comma-separated ("" for no bits).
// Unknown bits show as a hex number so a bad mask is visible in logs.
func (a Access) String() string {
	var words []string
	for _, aw := range accessWords {
		if a&aw.bit != 0 {
			words = append(words, aw.word)
		}
	}
	if rest := a &^ validAccess; rest != 0 {
		words = append(words, fmt.Sprintf("0x%x", uint8(rest)))
	}
	return strings.Join(words, ",")
}

// HasData reports whether a has a data bit (read, execute, write, append,
// delete). An open without one is attribute-only and blocks nothing except
// REST Delete File (locking.md A12).
func (a Access) HasData() bool { return a&dataAccess != 0 }

// Valid reports whether a uses only defined bits.
func (a Access) Valid() bool { return a&^validAccess == 0 }

// ParseShareMode parses a comma-separated list of share words (read, write,
// delete) or the single word none. Words are case-insensitive; an empty
// list, an unknown word or none combined with another word is
// ErrInvalidParameter.
func ParseShareMode(s string) (ShareMode, error) {
	if strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("share mode %q: empty list: %w", s, ErrInvalidParameter)
	}
	var m ShareMode
	none := false
	words := strings.Split(s, ",")
	for _, w := range words {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "none" {
			none = true
			continue
		}
		found := false
		for _, sw := range shareWords {
			if sw.word == w {
				m |= sw.bit
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("share mode %q: unknown word %q: %w", s, w, ErrInvalidParameter)
		}
	}
	if none && len(words) > 1 {
		return 0, fmt.Errorf("share mode %q: none combined with other words: %w", s, ErrInvalidParameter)
	}
	return m, nil
}

// String lists the share words of m, comma-separated, or "none".
func (m ShareMode) String() string {
	if m == ShareNone {
		return "none"
	}
	var words []string
	for _, sw := range shareWords {
		if m&sw.bit != 0 {
			words = append(words, sw.word)
		}
	}
	if rest := m &^ ShareAll; rest != 0 {
		words = append(words, fmt.Sprintf("0x%x", uint8(rest)))
	}
	return strings.Join(words, ",")
}

// Valid reports whether m uses only defined bits.
func (m ShareMode) Valid() bool { return m&^ShareAll == 0 }

// String names the operation as FileREST does.
func (o Op) String() string {
	switch o {
	case OpGetProperties:
		return "GetFileProperties"
	case OpList:
		return "ListDirectoriesAndFiles"
	case OpGetFile:
		return "GetFile"
	case OpListRanges:
		return "ListRanges"
	case OpPutRange:
		return "PutRange"
	case OpSetProperties:
		return "SetFileProperties"
	case OpSetMetadata:
		return "SetFileMetadata"
	case OpCreateOverwrite:
		return "CreateFile"
	case OpDelete:
		return "DeleteFile"
	case OpCopySource:
		return "CopySource"
	case OpRenameSource:
		return "RenameSource"
	case OpRenameReplace:
		return "RenameReplace"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// String is the x-ms-lease-action word.
func (a LeaseAction) String() string {
	switch a {
	case LeaseAcquire:
		return "acquire"
	case LeaseChange:
		return "change"
	case LeaseRelease:
		return "release"
	case LeaseBreak:
		return "break"
	}
	return fmt.Sprintf("LeaseAction(%d)", int(a))
}

// String is the x-ms-lease-state word.
func (s LeaseState) String() string {
	switch s {
	case LeaseAvailable:
		return "available"
	case LeaseLeased:
		return "leased"
	case LeaseBroken:
		return "broken"
	}
	return fmt.Sprintf("LeaseState(%d)", int(s))
}

// String is "shared" or "exclusive", as the session command spells them.
func (k LockKind) String() string {
	switch k {
	case LockShared:
		return "shared"
	case LockExclusive:
		return "exclusive"
	case 0:
		return "unlock"
	}
	return fmt.Sprintf("LockKind(%d)", int(k))
}

// NewRange builds a Range from signed numbers as protocols parse them:
// a negative offset or length is ErrInvalidParameter; a range whose last
// byte would pass 2^64-1 is ErrInvalidLockRange (it cannot, from int64s,
// but the check documents the rule).
func NewRange(offset, length int64) (Range, error) {
	if offset < 0 || length < 0 {
		return Range{}, fmt.Errorf("range offset %d length %d: negative: %w", offset, length, ErrInvalidParameter)
	}
	r := Range{Offset: uint64(offset), Length: uint64(length)}
	if !r.Valid() {
		return Range{}, fmt.Errorf("range %v: %w", r, ErrInvalidLockRange)
	}
	return r, nil
}

// Valid reports whether r's last byte is at most 2^64-1 (a zero Length is
// always valid).
func (r Range) Valid() bool {
	return r.Length == 0 || r.Offset <= math.MaxUint64-(r.Length-1)
}

// Last is the last byte r covers. It is meaningless for a zero Length.
func (r Range) Last() uint64 { return r.Offset + r.Length - 1 }

// Overlaps reports whether r and o share a byte: each starts at or before
// the other's last byte. A zero-length range overlaps nothing.
func (r Range) Overlaps(o Range) bool {
	if r.Length == 0 || o.Length == 0 {
		return false
	}
	return r.Offset <= o.Last() && o.Offset <= r.Last()
}

// String is "[offset,+length]".
func (r Range) String() string { return fmt.Sprintf("[%d,+%d]", r.Offset, r.Length) }
