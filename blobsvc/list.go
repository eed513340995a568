package blobsvc

import (
	"context"
	"encoding/base64"
	"strings"
)

// ListOptions are List Blobs' parameters.
type ListOptions struct {
	Prefix    string
	Delimiter string // "" lists flat
	Marker    string // where to resume (a NextMarker from an earlier page)
	Max       int    // 1..5000
	// IncludeUncommitted lists blobs that have only uncommitted blocks
	// too (include=uncommittedblobs).
	IncludeUncommitted bool
	// IncludeSnapshots lists each blob's snapshots, oldest first, before
	// the blob (include=snapshots). A page ends before a blob whose
	// snapshots would not all fit, unless the blob starts the page.
	IncludeSnapshots bool
	// IncludeDeleted lists soft-deleted blobs too (include=deleted).
	IncludeDeleted bool
	// StartFrom and EndBefore bound the names listed (startFrom,
	// endBefore): from StartFrom on, before EndBefore ("" unbounded).
	StartFrom, EndBefore string
}

// ListItem is a blob or, in a hierarchical listing, a prefix standing
// for every blob under it.
type ListItem struct {
	Blob   *Blob
	Prefix string
}

// listBatch is how many rows one store query fetches while listing.
const listBatch = 512

// nameSource yields the blob names of one table in order, a batch at a
// time, with the rows of each name.
type nameSource struct {
	fetch func(from string) ([]Blob, error)
	rows  []Blob
	i     int
	done  bool
	from  string
}

// head is the next name (ok false at the end).
func (n *nameSource) head() (string, bool, error) {
	for n.i >= len(n.rows) {
		if n.done {
			return "", false, nil
		}
		rows, err := n.fetch(n.from)
		if err != nil {
			return "", false, err
		}
		n.rows, n.i = rows, 0
		if len(rows) < listBatch {
			n.done = true
		}
		if len(rows) == 0 {
			return "", false, nil
		}
		n.from = rows[len(rows)-1].Name + "\x00"
	}
	return n.rows[n.i].Name, true, nil
}

// take returns the rows of name at the head (none if it is not there).
func (n *nameSource) take(name string) ([]Blob, error) {
	var out []Blob
	for {
		h, ok, err := n.head()
		if err != nil || !ok || h != name {
			return out, err
		}
		out = append(out, n.rows[n.i])
		n.i++
	}
}

// ListBlobs lists the container's committed blobs in name order. With a
// delimiter, blobs whose name continues past the prefix with the
// delimiter are folded into one BlobPrefix item per distinct prefix up to
// and including the delimiter. The marker is the name of the next item
// (a blob name or a prefix) to return. With IncludeDeleted the
// soft-deleted blobs (and, with IncludeSnapshots, snapshots) of each name
// come too, Deleted set, after its snapshots and before its blob.
func (s *Service) ListBlobs(ctx context.Context, container string, o ListOptions) ([]ListItem, string, error) {
	if err := ValidContainerName(container); err != nil {
		return nil, "", err
	}
	if _, err := s.meta.Container(ctx, container); err != nil {
		return nil, "", err
	}
	from := max(o.Marker, o.Prefix)
	if o.StartFrom != "" {
		from = max(from, o.StartFrom)
	}
	live := &nameSource{from: from, fetch: func(from string) ([]Blob, error) {
		return s.meta.ListBlobs(ctx, container, o.Prefix, from, listBatch)
	}}
	deleted := &nameSource{from: from, done: !o.IncludeDeleted, fetch: func(from string) ([]Blob, error) {
		return s.meta.ListDeleted(ctx, container, o.Prefix, from, listBatch)
	}}
	now := s.Now()
	var items []ListItem
	lastPrefix := ""
	for {
		ln, lok, err := live.head()
		if err != nil {
			return nil, "", err
		}
		dn, dok, err := deleted.head()
		if err != nil {
			return nil, "", err
		}
		if !lok && !dok {
			return items, "", nil
		}
		name := ln
		if !lok || (dok && dn < ln) {
			name = dn
		}
		if o.EndBefore != "" && name >= o.EndBefore {
			return items, "", nil
		}
		lrows, err := live.take(name)
		if err != nil {
			return nil, "", err
		}
		drows, err := deleted.take(name)
		if err != nil {
			return nil, "", err
		}
		var b *Blob
		if len(lrows) > 0 && (lrows[0].Committed || o.IncludeUncommitted) {
			b = &lrows[0]
			s.settle(b)
		}
		var gone []Blob // soft-deleted rows to list: snapshots first
		for _, d := range drows {
			if now.Before(d.Deleted.Expires) && (d.Snapshot == "" || o.IncludeSnapshots) {
				gone = append(gone, d)
			}
		}
		if b == nil && len(gone) == 0 {
			continue
		}
		if o.Delimiter != "" {
			rest := name[len(o.Prefix):]
			if j := strings.Index(rest, o.Delimiter); j >= 0 {
				p := o.Prefix + rest[:j+len(o.Delimiter)]
				if p == lastPrefix {
					continue
				}
				if len(items) == o.Max {
					return items, p, nil
				}
				items = append(items, ListItem{Prefix: p})
				lastPrefix = p
				continue
			}
		}
		if len(items) == o.Max {
			return items, name, nil
		}
		var group []ListItem
		if o.IncludeSnapshots && b != nil {
			snaps, err := s.meta.Snapshots(ctx, container, name)
			if err != nil {
				return nil, "", err
			}
			for i := range snaps {
				group = append(group, ListItem{Blob: &snaps[i]})
			}
		}
		for i := range gone {
			if gone[i].Snapshot != "" {
				group = append(group, ListItem{Blob: &gone[i]})
			}
		}
		for i := range gone {
			if gone[i].Snapshot == "" {
				group = append(group, ListItem{Blob: &gone[i]})
			}
		}
		if b != nil {
			group = append(group, ListItem{Blob: b})
		}
		if len(items) > 0 && len(items)+len(group) > o.Max {
			return items, name, nil
		}
		items = append(items, group...)
	}
}

// decodeBase64 accepts standard base64 with padding (block ids as the
// SDKs send them).
func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}
