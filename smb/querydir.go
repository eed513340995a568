package smb

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
	"github.com/blobshare/blobshare/ntstatus"
)

// Directory information classes (MS-FSCC 2.4).
const (
	classFileDirectoryInformation       = 0x01
	classFileFullDirectoryInformation   = 0x02
	classFileBothDirectoryInformation   = 0x03
	classFileNamesInformation           = 0x0c
	classFileIDBothDirectoryInformation = 0x25
	classFileIDFullDirectoryInformation = 0x26
)

// QUERY_DIRECTORY flags.
const (
	qdRestartScans       = 0x01
	qdReturnSingleEntry  = 0x02
	qdIndexSpecified     = 0x04
	qdReopen             = 0x10
	maxQueryDirectoryOut = 1 << 20
)

// queryDirectory serves QUERY_DIRECTORY: the listing is taken when an
// enumeration starts (first query, restart, reopen or a new pattern) and
// handed out in order, "." and ".." first.
func (c *conn) queryDirectory(ctx context.Context, req *request) (ntstatus.Status, []byte, error) {
	b, err := body(req.msg, 33)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	class := b[2]
	flags := b[3]
	o, st := c.lookupOpen(req, b[8:])
	if o == nil {
		return st, nil, nil
	}
	rawPattern, err := buffer(req.msg, uint32(le.Uint16(b[24:])), uint32(le.Uint16(b[26:])))
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	pattern, err := fromUTF16(rawPattern)
	if err != nil {
		return ntstatus.InvalidParameter, nil, nil
	}
	outMax := le.Uint32(b[28:])
	switch {
	case !o.isDir:
		return ntstatus.InvalidParameter, nil, nil
	case o.access&locks.MaskReadData == 0:
		return ntstatus.AccessDenied, nil, nil
	case outMax > maxQueryDirectoryOut:
		outMax = maxQueryDirectoryOut
	}
	switch class {
	case classFileDirectoryInformation, classFileFullDirectoryInformation, classFileBothDirectoryInformation,
		classFileNamesInformation, classFileIDBothDirectoryInformation, classFileIDFullDirectoryInformation:
	default:
		return ntstatus.InvalidInfoClass, nil, nil
	}
	if pattern == "" {
		pattern = "*"
	}
	restart := flags&(qdRestartScans|qdReopen) != 0 || o.listing == nil && !o.listDone ||
		(len(rawPattern) > 0 && !strings.EqualFold(pattern, o.pattern))
	if restart {
		dir, err := o.h.Attr(ctx)
		if err != nil {
			return ntstatus.FromError(err), nil, nil
		}
		entries, err := c.srv.cfg.FS.ListEntries(ctx, o.h.File())
		if err != nil {
			return ntstatus.FromError(err), nil, nil
		}
		dot := dir
		dot.Name = "."
		dotdot := dir
		dotdot.Name = ".."
		all := append([]fs.Attr{dot, dotdot}, entries...)
		o.listing = o.listing[:0]
		for _, e := range all {
			if matchPattern(pattern, e.Name) {
				o.listing = append(o.listing, e)
			}
		}
		o.listPos, o.pattern, o.listDone = 0, pattern, false
		if len(o.listing) == 0 {
			o.listDone = true
			return ntstatus.NoSuchFile, nil, nil
		}
	}
	var out []byte
	last := -1
	for o.listPos < len(o.listing) {
		a := o.listing[o.listPos]
		if !restart && a.Name != "." && a.Name != ".." {
			// A continuing enumeration leaves out the names removed
			// since it started (smbtorture dir.fixed: Windows and smbd
			// do), looking up only what it is about to return, so that
			// enumerating entry by entry stays linear.
			cur, err := c.srv.cfg.FS.Lookup(ctx, o.h.File(), a.Name)
			switch {
			case errors.Is(err, fs.ErrNotFound) || err == nil && cur.DeletePending:
				o.listPos++
				continue
			case err != nil:
				return ntstatus.FromError(err), nil, nil
			}
			cur.Name = a.Name
			o.listing[o.listPos] = cur
			a = cur
		}
		e := encodeDirEntry(class, a)
		start := align8(len(out))
		if start+len(e) > int(outMax) {
			break
		}
		for len(out) < start {
			out = append(out, 0)
		}
		if last >= 0 {
			le.PutUint32(out[last:], uint32(start-last))
		}
		last = start
		out = append(out, e...)
		o.listPos++
		if flags&qdReturnSingleEntry != 0 {
			break
		}
	}
	if len(out) == 0 {
		if o.listPos < len(o.listing) {
			return ntstatus.BufferTooSmall, nil, nil
		}
		o.listDone = true
		return ntstatus.NoMoreFiles, nil, nil
	}
	resp := make([]byte, 8, 8+len(out))
	le.PutUint16(resp, 9)
	le.PutUint16(resp[2:], headerSize+8)
	le.PutUint32(resp[4:], uint32(len(out)))
	return ntstatus.Success, append(resp, out...), nil
}

// encodeDirEntry encodes one entry of class (NextEntryOffset left 0).
func encodeDirEntry(class byte, a fs.Attr) []byte {
	name := utf16le(a.Name)
	if class == classFileNamesInformation {
		b := make([]byte, 12, 12+len(name))
		le.PutUint32(b[8:], uint32(len(name)))
		return append(b, name...)
	}
	var fixed int
	switch class {
	case classFileDirectoryInformation:
		fixed = 64
	case classFileFullDirectoryInformation:
		fixed = 68
	case classFileBothDirectoryInformation:
		fixed = 94
	case classFileIDBothDirectoryInformation:
		fixed = 104
	case classFileIDFullDirectoryInformation:
		fixed = 80
	}
	b := make([]byte, fixed, fixed+len(name))
	putTimes(b[8:], a)
	le.PutUint64(b[40:], uint64(a.Size))
	le.PutUint64(b[48:], allocation(a))
	le.PutUint32(b[56:], wireAttrs(a))
	le.PutUint32(b[60:], uint32(len(name)))
	if class != classFileDirectoryInformation {
		le.PutUint32(b[64:], eaListSize(a.EAs))
	}
	if class == classFileBothDirectoryInformation || class == classFileIDBothDirectoryInformation {
		// ShortName is left empty for a name that is 8.3 already (and
		// for "." and ".."), as Windows and smbd leave it.
		if short, ok := shortName(a.Name); ok && a.Name != "." && a.Name != ".." {
			n := copy(b[70:94], utf16le(short))
			b[68] = byte(n)
		}
	}
	switch class {
	case classFileIDBothDirectoryInformation:
		le.PutUint64(b[96:], uint64(a.ID))
	case classFileIDFullDirectoryInformation:
		le.PutUint64(b[72:], uint64(a.ID))
	}
	return append(b, name...)
}

// matchPattern matches name against a QUERY_DIRECTORY pattern, without
// case: '*' any run, '?' any one character, and the DOS wildcards '<'
// (any run up to the last dot), '>' (any one character or none at a dot
// or the end) and '"' (a dot, or nothing at the end) — MS-FSA 2.1.4.4.
func matchPattern(pattern, name string) bool {
	if pattern == "*" {
		return true
	}
	m := matcher{p: []rune(strings.ToUpper(pattern)), n: []rune(strings.ToUpper(name))}
	if len(m.p) > maxPatternRunes {
		return false
	}
	m.memo = make([]int8, (len(m.p)+1)*(len(m.n)+1))
	return m.match(0, 0)
}

// maxPatternRunes bounds a pattern (names are at most 255 characters).
const maxPatternRunes = 1024

// matcher matches with memoisation, so hostile patterns ("*a*a*a…") cost
// at most len(p)·len(n) steps.
type matcher struct {
	p, n []rune
	memo []int8 // 0 unknown, 1 match, 2 no match
}

func (m *matcher) match(i, j int) bool {
	k := i*(len(m.n)+1) + j
	if v := m.memo[k]; v != 0 {
		return v == 1
	}
	ok := m.step(i, j)
	m.memo[k] = 2
	if ok {
		m.memo[k] = 1
	}
	return ok
}

func (m *matcher) step(i, j int) bool {
	p, n := m.p, m.n
	if i == len(p) {
		return j == len(n)
	}
	switch p[i] {
	case '*':
		return m.match(i+1, j) || (j < len(n) && m.match(i, j+1))
	case '<':
		// Any run of characters that does not pass the name's last dot.
		if m.match(i+1, j) {
			return true
		}
		if j == len(n) {
			return false
		}
		if n[j] == '.' {
			for _, r := range n[j+1:] {
				if r == '.' {
					return m.match(i, j+1)
				}
			}
			return false
		}
		return m.match(i, j+1)
	case '?':
		return j < len(n) && m.match(i+1, j+1)
	case '>':
		if j == len(n) || n[j] == '.' {
			return m.match(i+1, j)
		}
		return m.match(i+1, j+1)
	case '"':
		if j == len(n) {
			return m.match(i+1, j)
		}
		return n[j] == '.' && m.match(i+1, j+1)
	}
	return j < len(n) && unicode.ToUpper(n[j]) == p[i] && m.match(i+1, j+1)
}
