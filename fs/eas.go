package fs

import (
	"slices"
	"strings"
)

// EA is one extended attribute of a file or directory: a name of
// printable ASCII (ValidEAName), kept as given, and a value of bytes.
// Flags are stored as given (SMB's FILE_NEED_EA).
type EA struct {
	Name  string `json:"n"`
	Flags uint8  `json:"f,omitempty"`
	Value []byte `json:"v"`
}

// MaxEASize bounds an entry's extended attributes: the sum over them of
// 9 bytes, the name and the value (their size as FILE_FULL_EA_INFORMATION
// entries without padding), NTFS's limit of 64 KiB less 5 bytes.
const MaxEASize = 64<<10 - 5

// ValidEAName reports whether name may name an extended attribute: 1 to
// 255 printable ASCII characters, none of the ones file names may not hold
// (MS-FSCC 2.4.15, as NTFS checks them).
func ValidEAName(name string) bool {
	if len(name) == 0 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c > 0x7e || strings.IndexByte(`"*+,/:;<=>?[\]|`, c) >= 0 {
			return false
		}
	}
	return true
}

// eaSize is the size MaxEASize bounds.
func eaSize(eas []EA) int {
	n := 0
	for _, ea := range eas {
		n += 9 + len(ea.Name) + len(ea.Value)
	}
	return n
}

// mergeEAs applies set to eas as SetattrRequest.EAs says and returns the
// new list (eas is not changed).
func mergeEAs(eas, set []EA) ([]EA, error) {
	out := slices.Clone(eas)
	for _, ea := range set {
		if !ValidEAName(ea.Name) {
			return nil, ErrInvalidEAName
		}
		i := slices.IndexFunc(out, func(x EA) bool { return strings.EqualFold(x.Name, ea.Name) })
		switch {
		case len(ea.Value) == 0 && i >= 0:
			out = slices.Delete(out, i, i+1)
		case len(ea.Value) == 0:
		case i >= 0:
			out[i] = EA{Name: ea.Name, Flags: ea.Flags, Value: slices.Clone(ea.Value)}
		default:
			out = append(out, EA{Name: ea.Name, Flags: ea.Flags, Value: slices.Clone(ea.Value)})
		}
	}
	if eaSize(out) > MaxEASize {
		return nil, ErrEATooLarge
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
