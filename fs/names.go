package fs

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/blobshare/blobshare/internal/azname"
)

// Name limits of Azure Files (filerest.md §2.1). Lengths count characters
// as Windows and Azure do: UTF-16 code units, so a character outside the
// Basic Multilingual Plane (an emoji) counts twice.
const (
	MaxComponentLen = 255
	MaxPathLen      = 2048
	MaxDepth        = 250

	MinShareNameLen = 3
	MaxShareNameLen = 63
)

// reservedDOS are the device names Azure Files refuses as whole names, in
// any case ("nul" is NUL). With an extension they are ordinary names
// ("CON.txt"): Azure's naming rules list the bare names only.
var reservedDOS = [...]string{
	"CON", "PRN", "AUX", "NUL", "CLOCK$",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
}

// forbiddenChars may not appear in a directory or file name: SMB and
// Windows give them meaning (':' names an alternate data stream, '\'
// separates, the rest are wildcards, quoting or redirection).
const forbiddenChars = `"\/:|<>*?`

// nameLen is the length of s in UTF-16 code units.
func nameLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ValidateName checks one directory or file name component against the
// Azure Files rules: non-empty, not "." or "..", valid UTF-8, at most 255
// characters (UTF-16 code units), none of `" \ / : | < > * ?`, no control
// character (U+0000–U+001F, U+007F), no private-use code point (U+E000–
// U+F8FF: NTFS takes them, Azure does not), and not a reserved DOS device
// name (CON, NUL, COM1, ... in any case). Errors wrap ErrInvalidName
// (ErrNameTooLong, which also matches ErrInvalidName, for length).
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q is not a name", ErrInvalidName, name)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidName, name)
	case nameLen(name) > MaxComponentLen:
		return fmt.Errorf("%w: a name of %d characters (at most %d)", nameTooLong{}, nameLen(name), MaxComponentLen)
	}
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("%w: %q contains the control character %U", ErrInvalidName, name, r)
		case strings.ContainsRune(forbiddenChars, r):
			return fmt.Errorf("%w: %q contains %q", ErrInvalidName, name, r)
		case r >= 0xE000 && r <= 0xF8FF:
			return fmt.Errorf("%w: %q contains the private-use code point %U", ErrInvalidName, name, r)
		}
	}
	for _, d := range reservedDOS {
		if strings.EqualFold(name, d) {
			return fmt.Errorf("%w: %q is a reserved device name", ErrInvalidName, name)
		}
	}
	return nil
}

// ValidateShareName checks a share name: a DNS label (azname.DNSLabel:
// 3–63 characters, lowercase letters, digits and single hyphens, starting
// and ending with a letter or digit), like a Blob container's name.
func ValidateShareName(name string) error {
	if err := azname.DNSLabel("share name", name); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidName, err)
	}
	return nil
}

// ValidatePath checks the components of a path below a share: at most
// MaxDepth of them, at most MaxPathLen characters joined with '/', each a
// valid name (ValidateName).
func ValidatePath(parts []string) error {
	if len(parts) > MaxDepth {
		return fmt.Errorf("%w: %d levels deep (at most %d)", ErrInvalidName, len(parts), MaxDepth)
	}
	total := max(len(parts)-1, 0) // the slashes
	for _, c := range parts {
		if err := ValidateName(c); err != nil {
			return err
		}
		total += nameLen(c)
	}
	if total > MaxPathLen {
		return fmt.Errorf("%w: a path of %d characters (at most %d)", nameTooLong{}, total, MaxPathLen)
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
// below it, validating every part (ValidateShareName, ValidatePath). Empty
// components (doubled or trailing slashes) and a leading slash are refused.
func SplitPath(p string) (share string, parts []string, err error) {
	if p == "" {
		return "", nil, fmt.Errorf("%w: empty path", ErrInvalidName)
	}
	if len(p) > 4*(MaxPathLen+MaxShareNameLen+1) { // no valid path has more bytes: don't split a huge one
		return "", nil, fmt.Errorf("%w: a path of %d bytes", nameTooLong{}, len(p))
	}
	all := strings.Split(p, "/")
	share = all[0]
	if err := ValidateShareName(share); err != nil {
		return "", nil, err
	}
	parts = all[1:]
	if err := ValidatePath(parts); err != nil {
		return "", nil, err
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

// String renders the attributes as keywords separated by '|', "None" for
// the empty set.
func (a Attributes) String() string { return a.Format("|") }

// Format renders the attributes as keywords in their canonical order
// separated by sep (FileREST answers with " | "), "None" for the empty set.
func (a Attributes) Format(sep string) string {
	var parts []string
	for _, n := range attrNames {
		if a&n.a != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "None"
	}
	return strings.Join(parts, sep)
}

// ParseAttributes parses attribute keywords separated by any of the runes
// in seps (FileREST: "|"; blobshare session: ",|"). Keywords are
// case-insensitive with spaces around them trimmed. "None" is the empty
// set and stands alone: Azure refuses it combined with another keyword.
// An empty list, an empty keyword ("ReadOnly||Hidden"), an unknown one or
// "None" in a list wraps ErrInvalidArg.
func ParseAttributes(s, seps string) (Attributes, error) {
	fields := splitAny(s, seps)
	var a Attributes
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if strings.EqualFold(f, "None") {
			if len(fields) > 1 {
				return 0, fmt.Errorf("%w: attributes %q: None stands alone", ErrInvalidArg, s)
			}
			continue
		}
		found := false
		for _, n := range attrNames {
			if f != "" && strings.EqualFold(f, n.name) {
				a |= n.a
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%w: attributes %q: unknown keyword %q", ErrInvalidArg, s, f)
		}
	}
	return a, nil
}

// splitAny splits s at every rune of seps, keeping empty fields.
func splitAny(s, seps string) []string {
	var out []string
	for {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		_, w := utf8.DecodeRuneInString(s[i:])
		s = s[i+w:]
	}
}
