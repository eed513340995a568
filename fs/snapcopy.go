package fs

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/blobshare/blobshare/locks"
)

// copySource is what Copy File reads of its source: the entry, its
// content, its data ranges and the blob key holding its data.
type copySource struct {
	e      entry
	c      content
	ranges rangeSet
	key    string
}

// copySource reads the source of a Copy File: the live file at path,
// checked as locks.OpCopySource, or with snapshot the file at path in that
// share snapshot (restoring from a snapshot: no locks, a snapshot has no
// handles or leases of its own).
func (q *q) copySource(tx *locks.Tx, path, snapshot string) (copySource, error) {
	if snapshot == "" {
		r, err := q.checkedFile(tx, path, locks.OpCopySource, "", locks.Range{})
		if err != nil {
			return copySource{}, fmt.Errorf("source %s: %w", path, err)
		}
		s := copySource{e: r.e, key: blobKey(r.e.id)}
		if s.c, err = q.content(s.e.id); err != nil {
			return s, err
		}
		s.ranges, err = q.ranges(s.e.id)
		return s, err
	}
	share, _, _ := strings.Cut(path, "/")
	v, root, err := q.snapshot(share, snapshot)
	if err != nil {
		return copySource{}, fmt.Errorf("source %s in snapshot %s: %w", path, snapshot, err)
	}
	e, _, err := v.resolve(root, path)
	if err == nil && e.kind.IsDir() {
		err = ErrIsDir
	}
	if err != nil {
		return copySource{}, fmt.Errorf("source %s in snapshot %s: %w", path, snapshot, err)
	}
	side, err := v.side(e)
	if err != nil {
		return copySource{}, err
	}
	return copySource{e: e, c: content{size: e.size, version: e.version, blob: e.blob, inline: side.inline},
		ranges: side.data, key: side.key}, nil
}

// reader streams [0, n) of the source's content; zeros past its data.
func (s copySource) reader(ctx context.Context, fsys *FileSystem, n int64) io.ReadCloser {
	if !s.c.blob {
		return &inlineReader{data: s.c.inline, left: n}
	}
	return &blobReader{fsys: fsys, ctx: ctx, key: s.key, left: n}
}
