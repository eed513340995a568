package fs

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name limits of Azure Files (filerest.md §2.1).
const (
	MaxComponentLen = 255
	MaxPathLen      = 2048
	MaxDepth        = 250
)

// reservedDOS are the device names Azure Files refuses as names (with or
// without an extension).
var reservedDOS = [...]string{
	"CON", "PRN", "AUX", "NUL", "CLOCK$",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
}

// ValidateName checks one directory or file name component against the
// Azure Files rules: non-empty, not "." or "..", valid UTF-8, at most 255
// characters, none of `" \ / : | < > * ?` nor control characters, not a
// reserved DOS device name. Errors wrap ErrInvalidName (ErrNameTooLong for
// length).
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidName)
	case utf8.RuneCountInString(name) > MaxComponentLen:
		return fmt.Errorf("%w: %d characters", nameTooLong{}, utf8.RuneCountInString(name))
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`"\/:|<>*?`, r) {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidName, name, r)
		}
	}
	base := strings.ToUpper(name)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	for _, d := range reservedDOS {
		if base == d {
			return fmt.Errorf("%w: %q is a reserved name", ErrInvalidName, name)
		}
	}
	return nil
}

// ValidateShareName checks a share name: 3–63 characters, lowercase letters,
// digits and single hyphens, starting and ending with a letter or digit.
func ValidateShareName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("%w: share name %q must have 3-63 characters", ErrInvalidName, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return fmt.Errorf("%w: share name %q: misplaced hyphen", ErrInvalidName, name)
			}
		default:
			return fmt.Errorf("%w: share name %q: character %q", ErrInvalidName, name, c)
		}
	}
	return nil
}

// FoldName is the case-insensitive key of a name: two names are the same
// name in a directory exactly when their keys are equal. It upper-cases
// rune by rune (simple case mapping, like NTFS's upcase table).
func FoldName(name string) string {
	return strings.Map(unicode.ToUpper, name)
}

// SplitPath splits "share/dir/file" into the share and the components
// below it, validating every part. Empty components (doubled or trailing
// slashes) and a leading slash are refused.
func SplitPath(p string) (share string, parts []string, err error) {
	if p == "" {
		return "", nil, fmt.Errorf("%w: empty path", ErrInvalidName)
	}
	if utf8.RuneCountInString(p) > MaxPathLen+64 {
		return "", nil, fmt.Errorf("%w: path of %d characters", nameTooLong{}, utf8.RuneCountInString(p))
	}
	all := strings.Split(p, "/")
	share = all[0]
	if err := ValidateShareName(share); err != nil {
		return "", nil, err
	}
	parts = all[1:]
	if len(parts) > MaxDepth {
		return "", nil, fmt.Errorf("%w: %d levels deep", ErrInvalidName, len(parts))
	}
	if rest := strings.Join(parts, "/"); utf8.RuneCountInString(rest) > MaxPathLen {
		return "", nil, fmt.Errorf("%w: path of %d characters", nameTooLong{}, utf8.RuneCountInString(rest))
	}
	for _, c := range parts {
		if err := ValidateName(c); err != nil {
			return "", nil, err
		}
	}
	return share, parts, nil
}

// attrNames lists the attribute keywords in their wire spelling and order.
var attrNames = [...]struct {
	a    Attributes
	name string
}{
	{AttrReadOnly, "ReadOnly"},
	{AttrHidden, "Hidden"},
	{AttrSystem, "System"},
	{AttrDirectory, "Directory"},
	{AttrArchive, "Archive"},
	{AttrTemporary, "Temporary"},
	{AttrOffline, "Offline"},
	{AttrNotContentIndexed, "NotContentIndexed"},
	{AttrNoScrubData, "NoScrubData"},
}

// String renders the attributes as Azure does: pipe-separated keywords,
// "None" for the empty set.
func (a Attributes) String() string {
	var parts []string
	for _, n := range attrNames {
		if a&n.a != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "None"
	}
	return strings.Join(parts, "|")
}

// ParseAttributes parses keywords separated by '|' or ',' (case-insensitive,
// spaces trimmed); "None" alone is the empty set. Unknown keywords wrap
// ErrInvalidArg.
func ParseAttributes(s string) (Attributes, error) {
	var a Attributes
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' })
	if len(fields) == 0 {
		return 0, fmt.Errorf("%w: empty attribute list", ErrInvalidArg)
	}
next:
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if strings.EqualFold(f, "None") {
			continue
		}
		for _, n := range attrNames {
			if strings.EqualFold(f, n.name) {
				a |= n.a
				continue next
			}
		}
		return 0, fmt.Errorf("%w: unknown attribute %q", ErrInvalidArg, f)
	}
	return a, nil
}
