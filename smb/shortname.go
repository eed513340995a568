package smb

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// 8.3 short names (FileAlternateNameInformation, the ShortName of the
// *BothDirectoryInformation classes). blobshare stores none: a name's
// short name is computed from the name alone, as smbd's hash mangling
// does, so every process and protocol sees the same one and nothing is
// kept per directory. Short names are reported, never resolved: a CREATE
// naming one finds nothing.

// dosChars are the punctuation characters an 8.3 name may hold besides
// letters and digits (MS-FSCC 2.1.5.2.1).
const dosChars = "!#$%&'()-@^_`{}~"

// isDOSChar reports whether r may appear in an 8.3 name (ASCII only: the
// OEM code page's upper half is left out so names do not depend on one).
func isDOSChar(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(dosChars, r)
}

// is8dot3 reports whether name is a valid 8.3 name in itself: one to
// eight characters, optionally a dot and one to three more, all of them
// DOS characters (in any case, as smbd compares them).
func is8dot3(name string) bool {
	base, ext, dotted := strings.Cut(name, ".")
	if len(base) < 1 || len(base) > 8 || len(ext) > 3 || (dotted && len(ext) == 0) {
		return false
	}
	for _, r := range base + ext {
		if !isDOSChar(r) {
			return false
		}
	}
	return true
}

// shortName is name's 8.3 short name and whether one is generated: a name
// that is 8.3 already is its own short name (false). Otherwise it is the
// first two DOS characters of the base name, upper-cased, four hex digits
// of a hash of the upper-cased name, "~1", and the first three DOS
// characters of the last extension — the shape Windows gives names once
// the plain "~1".."~4" forms collide, which is the one a stateless scheme
// can keep unique enough (two names of a directory share a short name
// with chance 1/65536).
func shortName(name string) (string, bool) {
	if is8dot3(name) {
		return name, false
	}
	upper := strings.ToUpper(name)
	base, ext := upper, ""
	if i := strings.LastIndexByte(upper, '.'); i > 0 {
		base, ext = upper[:i], upper[i+1:]
	}
	keep := func(s string, n int) string {
		var b strings.Builder
		for _, r := range s {
			if b.Len() == n {
				break
			}
			if isDOSChar(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	h := fnv.New32a()
	h.Write([]byte(upper))
	sum := h.Sum32()
	short := fmt.Sprintf("%s%04X~1", keep(base, 2), (sum>>16)^(sum&0xffff))
	if e := keep(ext, 3); e != "" {
		short += "." + e
	}
	return short, true
}
