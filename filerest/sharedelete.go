package filerest

import (
	"sync"
	"time"
)

// shareBeingDeleted is how long a deleted share stays "being deleted":
// Azure's Delete Share says a share of the same name cannot be created
// for "at least 30 seconds" after a delete. A Delete Share in that time
// answers 202 again, as Azure's does (the azfile SDK's live test
// TestShareDeleteShareWithoutLeaseId deletes a share and its deferred
// cleanup deletes it again, requiring success).
const shareBeingDeleted = 30 * time.Second

// deletedShares remembers when this server deleted each share, for
// shareBeingDeleted. In memory: another process serving the same data
// answers a repeated delete 404 ShareNotFound.
type deletedShares struct {
	mu sync.Mutex
	at map[string]time.Time
}

// mark records that share was deleted at t and forgets deletions older
// than shareBeingDeleted, so the map holds only the last 30 s.
func (d *deletedShares) mark(share string, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at == nil {
		d.at = make(map[string]time.Time)
	}
	for n, at := range d.at {
		if t.Sub(at) >= shareBeingDeleted {
			delete(d.at, n)
		}
	}
	d.at[share] = t
}

// beingDeleted reports whether share was deleted less than
// shareBeingDeleted before now.
func (d *deletedShares) beingDeleted(share string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[share]
	return ok && now.Sub(at) < shareBeingDeleted && !now.Before(at)
}
