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
}

// ListItem is a blob or, in a hierarchical listing, a prefix standing
// for every blob under it.
type ListItem struct {
	Blob   *Blob
	Prefix string
}

// listBatch is how many rows one store query fetches while listing.
const listBatch = 512

// ListBlobs lists the container's committed blobs in name order. With a
// delimiter, blobs whose name continues past the prefix with the
// delimiter are folded into one BlobPrefix item per distinct prefix up to
// and including the delimiter. The marker is the name of the next item
// (a blob name or a prefix) to return.
func (s *Service) ListBlobs(ctx context.Context, container string, o ListOptions) ([]ListItem, string, error) {
	if err := ValidContainerName(container); err != nil {
		return nil, "", err
	}
	if _, err := s.meta.Container(ctx, container); err != nil {
		return nil, "", err
	}
	from := max(o.Marker, o.Prefix)
	var items []ListItem
	lastPrefix := ""
	for {
		rows, err := s.meta.ListBlobs(ctx, container, o.Prefix, from, listBatch)
		if err != nil {
			return nil, "", err
		}
		for i := range rows {
			b := &rows[i]
			if !b.Committed && !o.IncludeUncommitted {
				continue
			}
			if o.Delimiter != "" {
				rest := b.Name[len(o.Prefix):]
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
				return items, b.Name, nil
			}
			if o.IncludeSnapshots {
				snaps, err := s.meta.Snapshots(ctx, container, b.Name)
				if err != nil {
					return nil, "", err
				}
				if len(items) > 0 && len(items)+len(snaps)+1 > o.Max {
					return items, b.Name, nil
				}
				for i := range snaps {
					items = append(items, ListItem{Blob: &snaps[i]})
				}
			}
			items = append(items, ListItem{Blob: b})
		}
		if len(rows) < listBatch {
			return items, "", nil
		}
		from = rows[len(rows)-1].Name + "\x00"
	}
}

// decodeBase64 accepts standard base64 with padding (block ids as the
// SDKs send them).
func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}
