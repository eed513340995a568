package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// Snapshot errors.
var (
	// ErrSnapshotsPresent: Delete Blob on a blob with snapshots without
	// x-ms-delete-snapshots (409 SnapshotsPresent).
	ErrSnapshotsPresent = errors.New("blob has snapshots")
	// ErrInvalidDeleteSnapshots: x-ms-delete-snapshots on a snapshot, or
	// a value other than include and only (400).
	ErrInvalidDeleteSnapshots = errors.New("invalid x-ms-delete-snapshots")
	// ErrInvalidSnapshot: a snapshot query parameter that is not a
	// snapshot time (400).
	ErrInvalidSnapshot = errors.New("invalid snapshot time")
)

// DeleteSnapshots is x-ms-delete-snapshots.
type DeleteSnapshots string

const (
	DeleteSnapshotsInclude DeleteSnapshots = "include"
	DeleteSnapshotsOnly    DeleteSnapshots = "only"
)

// snapshotLayout is the x-ms-snapshot form: UTC, 7 fractional digits.
const snapshotLayout = "2006-01-02T15:04:05.0000000Z"

// ValidSnapshot checks a snapshot query parameter.
func ValidSnapshot(v string) error {
	if _, err := time.Parse(snapshotLayout, v); err != nil {
		return fmt.Errorf("snapshot %q: %w", v, ErrInvalidSnapshot)
	}
	return nil
}

func (s *Service) getSnapshot(ctx context.Context, container, name, snapshot string, cond Conditions) (Blob, error) {
	if err := ValidSnapshot(snapshot); err != nil {
		return Blob{}, err
	}
	if _, err := s.meta.Container(ctx, container); err != nil {
		return Blob{}, err
	}
	b, err := s.meta.Snapshot(ctx, container, name, snapshot)
	if err != nil {
		return Blob{}, err
	}
	if err := cond.checkRead(true, b.ETag, b.LastModified); err != nil {
		return b, fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, err)
	}
	if err := cond.checkTags(true, b.Tags); err != nil {
		return b, fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, err)
	}
	if err := cond.checkEncryption(true, b.EncryptionKeySHA256); err != nil {
		return b, fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, err)
	}
	return b, nil
}

// SnapshotBlob makes a read-only snapshot of the blob's committed version:
// its content (copied, streamed, in the content store), properties and
// metadata (md instead, when not nil). The snapshot keeps the blob's ETag
// and Last-Modified; the blob itself does not change. Conditions are
// evaluated as for a read (ErrNotModified possible); a lease id, if
// sent, must be the active lease's. The snapshot's time is unique for the blob even on a clock
// that stands still.
func (s *Service) SnapshotBlob(ctx context.Context, container, name string, md map[string]string, leaseID string, cond Conditions) (Blob, error) {
	return s.snapshotBlob(ctx, container, name, md, leaseID, cond, nil)
}

// snapshotBlob is SnapshotBlob; inc, when set, is the incremental copy
// taking the snapshot of its destination (no one else may snapshot an
// incremental copy blob).
func (s *Service) snapshotBlob(ctx context.Context, container, name string, md map[string]string, leaseID string, cond Conditions, inc *CopyInfo) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	// Read the version and open its content under the blob's lock, then
	// copy without it; read again if a writer of another process
	// committed content in between (as OpenBlob).
	var b Blob
	var rc io.ReadCloser
	for try := 1; ; try++ {
		var stale bool
		var err error
		b, rc, stale, err = s.openForSnapshot(ctx, container, name, leaseID, cond, inc, try == maxOpenTries)
		if err != nil {
			return b, err
		}
		if !stale {
			break
		}
		if err := pause(ctx, time.Duration(try)*time.Millisecond); err != nil {
			return Blob{}, err
		}
	}
	defer rc.Close()
	key := b.ContentKey + "-s" + blobstore.NewBlockID()
	if _, err := blobstore.Put(ctx, s.content, key, rc, stageChunk, blobstore.Conditions{}); err != nil {
		return Blob{}, fmt.Errorf("blob %s/%s: snapshot: copy: %w", container, name, err)
	}
	sn := b
	// A snapshot of a blob being rehydrated stays archived ("Snapshots
	// ... cannot be rehydrated back", tier.go).
	sn.ContentKey, sn.Lease, sn.Copy, sn.Rehydrate = key, Lease{}, b.Copy, nil
	if md != nil {
		sn.Metadata = md
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	t := s.Now()
	for {
		sn.Snapshot = t.Format(snapshotLayout)
		if _, err := s.meta.Snapshot(ctx, container, name, sn.Snapshot); errors.Is(err, ErrBlobNotFound) {
			break
		} else if err != nil {
			return Blob{}, err
		}
		t = t.Add(100 * time.Nanosecond)
	}
	if err := s.meta.PutBlob(ctx, sn, false); err != nil {
		return Blob{}, err
	}
	return sn, nil
}

// openForSnapshot reads the blob's row and opens its content under the
// blob's stripe: one try of snapshotBlob's (stale as in openBlob).
func (s *Service) openForSnapshot(ctx context.Context, container, name, leaseID string, cond Conditions, inc *CopyInfo, last bool) (Blob, io.ReadCloser, bool, error) {
	mu := s.stripe(container, name)
	mu.RLock()
	defer mu.RUnlock()
	// The conditions are a read's (Azurite evaluates them so: 304 for an
	// unchanged If-Modified-Since, 400 for If-None-Match: *).
	b, err := s.GetBlob(ctx, container, name, "", leaseID, cond)
	if err != nil {
		return b, nil, false, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkIncremental(b, inc); err != nil {
		return Blob{}, nil, false, err
	}
	rc, info, err := s.content.ReadRange(ctx, b.ContentKey, 0, -1)
	if err != nil {
		return Blob{}, nil, false, fmt.Errorf("blob %s/%s: snapshot: read: %w", container, name, err)
	}
	if !last && b.ContentETag != "" && info.ETag != b.ContentETag {
		rc.Close()
		return b, nil, true, nil
	}
	return b, rc, false, nil
}
