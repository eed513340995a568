package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Incremental Copy Blob: "copies a snapshot of the source page blob to a
// destination page blob ... The copied snapshots are complete copies of
// the original snapshot, and you can read or copy from them as usual."
//
// It runs in two steps, as on Azure, where it "is performed
// asynchronously on the service and must be polled for completion":
// StartIncrementalCopy checks the request and records the copy pending
// on the destination (created if missing: an incremental copy blob);
// FinishIncrementalCopy, which the caller runs after answering, copies
// the snapshot's pages into the destination, snapshots it (the snapshot
// x-ms-copy-destination-snapshot names) and records success, or failure
// with its reason. The whole snapshot is copied each time: what is
// stored is the same as Azure's differential transfer gives.
//
// An incremental copy blob takes only Get Blob Properties, Incremental
// Copy Blob (from the same source) and Delete Blob: "Incremental copy
// blobs may not be downloaded directly. The only supported operations
// are Get Blob Properties, Incremental Copy Blob, and Delete Blob. The
// copied snapshots may be read and deleted as usual." (409
// OperationNotAllowedOnIncrementalCopyBlob otherwise).

var (
	// ErrIncrementalCopySource: the source is not a snapshot (409
	// IncrementalCopySourceMustBeSnapshot).
	ErrIncrementalCopySource = errors.New("incremental copy source must be a snapshot")
	// ErrIncrementalCopyBlobMismatch: the destination exists and is not
	// an incremental copy of the same source blob (409
	// IncrementalCopyBlobMismatch).
	ErrIncrementalCopyBlobMismatch = errors.New("destination is not an incremental copy of this source")
	// ErrIncrementalCopyOfEarlierSnapshot: the source snapshot is earlier
	// than the one last copied (409
	// IncrementalCopyOfEarlierSnapshotNotAllowed).
	ErrIncrementalCopyOfEarlierSnapshot = errors.New("incremental copy of an earlier snapshot")
	// ErrIncrementalCopyBlob: an operation an incremental copy blob does
	// not take (409 OperationNotAllowedOnIncrementalCopyBlob).
	ErrIncrementalCopyBlob = errors.New("operation not allowed on an incremental copy blob")
	// ErrPendingCopy: a copy into the destination is still pending (409
	// PendingCopyOperation).
	ErrPendingCopy = errors.New("a copy is pending")
	// errIncrementalSuperseded: the destination changed (deleted,
	// recreated) while the copy ran; the copy stops.
	errIncrementalSuperseded = errors.New("the destination changed while the copy ran")
)

// checkIncremental refuses an operation on the incremental copy blob b
// unless it is the write of inc, the copy b is waiting for.
func checkIncremental(b Blob, inc *CopyInfo) error {
	if inc != nil {
		if !hasRow(b) || b.Copy == nil || b.Copy.ID != inc.ID {
			return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, errIncrementalSuperseded)
		}
		return nil
	}
	if !hasRow(b) || b.Snapshot != "" || b.Copy == nil || !b.Copy.Incremental {
		return nil
	}
	return fmt.Errorf("blob %s/%s: %w", b.Container, b.Name, ErrIncrementalCopyBlob)
}

// snapshotTime parses a snapshot time (x-ms-snapshot).
func snapshotTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("snapshot %q: %w", s, ErrInvalidSnapshot)
	}
	return t, nil
}

// StartIncrementalCopy checks an Incremental Copy Blob of src (a page
// blob snapshot, its conditions x-ms-source-if-*) into the destination
// (o: its conditions and lease) and records it pending there; it returns
// the destination row, whose Copy the caller hands FinishIncrementalCopy.
func (s *Service) StartIncrementalCopy(ctx context.Context, src CopySource, container, name string, o WriteOptions) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if src.Snapshot == "" {
		return Blob{}, fmt.Errorf("incremental copy from %s/%s: %w", src.Container, src.Name, ErrIncrementalCopySource)
	}
	want, err := snapshotTime(src.Snapshot)
	if err != nil {
		return Blob{}, err
	}
	sn, err := s.GetBlob(ctx, src.Container, src.Name, src.Snapshot, "", src.Cond)
	if err != nil {
		return Blob{}, SourceCondition(err)
	}
	if sn.Type != PageBlob {
		return Blob{}, fmt.Errorf("incremental copy from %s/%s, a %s: %w", src.Container, src.Name, sn.Type, ErrInvalidBlobType)
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	defer unlock()
	old, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return Blob{}, err
	}
	from := BlobName{Container: src.Container, Name: src.Name}
	if hasRow(old) {
		if old.Copy == nil || !old.Copy.Incremental || old.Copy.From != from {
			return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrIncrementalCopyBlobMismatch)
		}
		if old.Copy.Status == CopyPending {
			return Blob{}, fmt.Errorf("blob %s/%s: %w", container, name, ErrPendingCopy)
		}
		if old.Copy.Copied != "" {
			last, err := snapshotTime(old.Copy.Copied)
			if err != nil {
				return Blob{}, err
			}
			if want.Before(last) {
				return Blob{}, fmt.Errorf("blob %s/%s: snapshot %s, last copied %s: %w", container, name, src.Snapshot, old.Copy.Copied, ErrIncrementalCopyOfEarlierSnapshot)
			}
		}
	}
	inc := &CopyInfo{ID: uuidString(), Source: src.URL, Status: CopyPending, Incremental: true, From: from, Copying: src.Snapshot}
	// The destination's own conditions and lease, as a write that may
	// create it (the incremental copy passes its own check).
	o.incremental = old.Copy
	if !hasRow(old) {
		o.incremental = nil
	}
	// An unmet destination condition is ErrConditionNotMet, as for the
	// other copies (blob/doc.go, "Copies").
	if err := s.checkWrite(old, ok, o, writePutBlob); err != nil {
		return Blob{}, err
	}
	now := s.Now()
	b := old
	if !hasRow(old) {
		b = Blob{Container: container, Name: name, Type: PageBlob, ContentKey: contentKey(container, name), Committed: true,
			Created: now, Lease: Lease{State: LeaseAvailable}, Page: &PageState{Lineage: newLineage()}}
	} else {
		inc.Copied, inc.DestinationSnapshot = old.Copy.Copied, old.Copy.DestinationSnapshot
	}
	b.ETag, b.LastModified, b.Copy = newETag(), now, inc
	if err := s.meta.PutBlob(ctx, b, false); err != nil {
		return Blob{}, err
	}
	return b, s.syncMeta(ctx)
}

// FinishIncrementalCopy runs the copy StartIncrementalCopy recorded on
// dst (dst.Copy): the source snapshot's pages become the destination's
// content, a snapshot of the destination keeps them, and the copy is
// recorded a success (x-ms-copy-destination-snapshot that snapshot) or,
// on an error, failed with its reason. A destination deleted or
// recopied meanwhile is left alone.
func (s *Service) FinishIncrementalCopy(ctx context.Context, dst Blob) error {
	inc := dst.Copy
	if inc == nil || !inc.Incremental || inc.Status != CopyPending {
		return fmt.Errorf("blob %s/%s: no pending incremental copy", dst.Container, dst.Name)
	}
	src := CopySource{Container: inc.From.Container, Name: inc.From.Name, Snapshot: inc.Copying, URL: inc.Source}
	err := s.runIncrementalCopy(ctx, src, dst, inc)
	if errors.Is(err, errIncrementalSuperseded) {
		return nil
	}
	if err != nil {
		if rerr := s.endIncrementalCopy(ctx, dst, inc, "", 0, err); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

// runIncrementalCopy copies, snapshots and records the success.
func (s *Service) runIncrementalCopy(ctx context.Context, src CopySource, dst Blob, inc *CopyInfo) error {
	b, err := s.CopyBlob(ctx, src, dst.Container, dst.Name, WriteOptions{Type: PageBlob, incremental: inc})
	if err != nil {
		return fmt.Errorf("incremental copy %s: %w", inc.ID, err)
	}
	sn, err := s.snapshotBlob(ctx, dst.Container, dst.Name, nil, "", Conditions{}, inc)
	if err != nil {
		return fmt.Errorf("incremental copy %s: snapshot: %w", inc.ID, err)
	}
	return s.endIncrementalCopy(ctx, dst, inc, sn.Snapshot, b.Size, nil)
}

// endIncrementalCopy records the end of the copy inc on the destination
// (and on its new snapshot, snap): success, or failed with failure's
// text. Nothing is recorded if the destination no longer waits for inc.
func (s *Service) endIncrementalCopy(ctx context.Context, dst Blob, inc *CopyInfo, snap string, size int64, failure error) error {
	unlock, err := s.lockBlob(ctx, dst.Container, dst.Name)
	if err != nil {
		return err
	}
	defer unlock()
	cur, ok, err := s.blobOrMissing(ctx, dst.Container, dst.Name)
	if err != nil {
		return err
	}
	if !ok || cur.Copy == nil || cur.Copy.ID != inc.ID {
		return nil
	}
	done := *inc
	done.Completed = s.Now()
	if failure != nil {
		done.Status, done.StatusDescription = CopyFailed, failure.Error()
		cur.Copy = &done
		return s.meta.PutBlob(ctx, cur, false)
	}
	done.Status, done.Size, done.Copied, done.DestinationSnapshot = "", size, inc.Copying, snap
	sn, err := s.meta.Snapshot(ctx, dst.Container, dst.Name, snap)
	if err != nil {
		return err
	}
	snCopy := done
	sn.Copy = &snCopy
	if err := s.meta.PutBlob(ctx, sn, false); err != nil {
		return err
	}
	cur.Copy = &done
	if err := s.meta.PutBlob(ctx, cur, false); err != nil {
		return err
	}
	return s.syncMeta(ctx)
}
