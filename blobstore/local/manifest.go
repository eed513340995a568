package local

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The manifest's text form, one item per line, fields separated by one
// space (none of them can contain a space or newline: ids are
// [A-Za-z0-9_-], files b-<hex>, the ETag "0x<hex>"):
//
//	blobshare-manifest 1
//	key <key, escaped as for directory names>
//	etag "0x1234ABCD..."
//	modified <Unix nanoseconds>
//	block <id> <size> <file>      one line per block, in order
//	end <number of blocks>
//
// The end line catches truncation (a rename is atomic, but a damaged disk
// is not).

const manifestMagic = "blobshare-manifest 1"

var errCorrupt = errors.New("corrupt manifest")

func (m *manifest) marshal() []byte {
	var b bytes.Buffer
	b.Grow(64 + len(m.Blocks)*96)
	b.WriteString(manifestMagic)
	b.WriteString("\nkey ")
	b.WriteString(escapeKey(m.Key))
	b.WriteString("\netag ")
	b.WriteString(m.ETag)
	b.WriteString("\nmodified ")
	b.WriteString(strconv.FormatInt(m.Modified.UnixNano(), 10))
	b.WriteByte('\n')
	for _, blk := range m.Blocks {
		b.WriteString("block ")
		b.WriteString(blk.ID)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(blk.Size, 10))
		b.WriteByte(' ')
		b.WriteString(blk.File)
		b.WriteByte('\n')
	}
	b.WriteString("end ")
	b.WriteString(strconv.Itoa(len(m.Blocks)))
	b.WriteByte('\n')
	return b.Bytes()
}

func parseManifest(data []byte) (*manifest, error) {
	s := string(data)
	line := func() (string, bool) {
		l, rest, ok := strings.Cut(s, "\n")
		s = rest
		return l, ok
	}
	bad := func(what string) (*manifest, error) {
		return nil, fmt.Errorf("%w: %s", errCorrupt, what)
	}
	if l, ok := line(); !ok || l != manifestMagic {
		return bad("no header")
	}
	m := &manifest{}
	l, ok := line()
	esc, found := strings.CutPrefix(l, "key ")
	key, kok := unescapeKey(esc)
	if !ok || !found || !kok || key == "" {
		return bad("no key")
	}
	m.Key = key
	l, ok = line()
	etag, found := strings.CutPrefix(l, "etag ")
	if !ok || !found || etag == "" {
		return bad("no etag")
	}
	m.ETag = etag
	l, ok = line()
	mod, found := strings.CutPrefix(l, "modified ")
	ns, err := strconv.ParseInt(mod, 10, 64)
	if !ok || !found || err != nil {
		return bad("no modification time")
	}
	m.Modified = time.Unix(0, ns).UTC()
	m.Blocks = make([]manifestBlk, 0, strings.Count(s, "\n"))
	for {
		l, ok := line()
		if !ok {
			return bad("no end line")
		}
		if n, isEnd := strings.CutPrefix(l, "end "); isEnd {
			if cnt, err := strconv.Atoi(n); err != nil || cnt != len(m.Blocks) || s != "" {
				return bad("end line does not match")
			}
			return m, nil
		}
		rest, isBlock := strings.CutPrefix(l, "block ")
		id, rest, ok1 := strings.Cut(rest, " ")
		sz, file, ok2 := strings.Cut(rest, " ")
		size, err := strconv.ParseInt(sz, 10, 64)
		if !isBlock || !ok1 || !ok2 || err != nil || size < 0 || id == "" || !strings.HasPrefix(file, blockPrefix) || strings.ContainsAny(file, "/\x00") {
			return bad(fmt.Sprintf("bad block line %q", l))
		}
		m.Blocks = append(m.Blocks, manifestBlk{ID: id, Size: size, File: file})
	}
}
