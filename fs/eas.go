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

// Size is the EA's size as a FILE_FULL_EA_INFORMATION entry without the
// padding that aligns the next: 9 bytes, the name and the value. It is
// what MaxEASize counts.
func (ea EA) Size() int { return 9 + len(ea.Name) + len(ea.Value) }

// EAKey is the form of an EA name that names compare by: names are
// printable ASCII and compare without case, so upper-casing is
// strings.EqualFold's equivalence.
func EAKey(name string) string { return strings.ToUpper(name) }

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
		n += ea.Size()
	}
	return n
}

// mergeEAs applies set to eas as SetattrRequest.EAs says and returns the
// new list (eas is not changed). It runs inside a write transaction, so
// its work is bounded up front and linear in the entries: a set of more
// entries than could ever fit MaxEASize (each costs at least 9 bytes) is
// ErrEATooLarge before anything is looked at.
func mergeEAs(eas, set []EA) ([]EA, error) {
	if len(set) > MaxEASize/9 {
		return nil, ErrEATooLarge
	}
	out := slices.Clone(eas)
	// at finds an entry of out by its EAKey; -1 marks one deleted.
	at := make(map[string]int, len(out)+len(set))
	for i, x := range out {
		at[EAKey(x.Name)] = i
	}
	deleted := false
	for _, ea := range set {
		if !ValidEAName(ea.Name) {
			return nil, ErrInvalidEAName
		}
		key := EAKey(ea.Name)
		i, ok := at[key]
		ok = ok && i >= 0
		switch {
		case len(ea.Value) == 0 && ok:
			out[i].Name, at[key], deleted = "", -1, true
		case len(ea.Value) == 0:
		case ok:
			out[i] = EA{Name: ea.Name, Flags: ea.Flags, Value: slices.Clone(ea.Value)}
		default:
			at[key] = len(out)
			out = append(out, EA{Name: ea.Name, Flags: ea.Flags, Value: slices.Clone(ea.Value)})
		}
	}
	if deleted {
		out = slices.DeleteFunc(out, func(x EA) bool { return x.Name == "" })
	}
	if eaSize(out) > MaxEASize {
		return nil, ErrEATooLarge
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
