package blobsvc

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/blobshare/blobshare/blobstore"
)

// DeletePolicy is the Blob service's DeleteRetentionPolicy (Set Blob
// Service Properties): with Enabled, Delete Blob soft-deletes for Days
// days; AllowPermanentDelete lets deletetype=permanent remove a
// soft-deleted snapshot before then.
type DeletePolicy struct {
	Enabled              bool `xml:"Enabled"`
	Days                 int  `xml:"Days"`
	AllowPermanentDelete bool `xml:"AllowPermanentDelete"`
}

// ErrPermanentDelete: deletetype=permanent on something that is not a
// soft-deleted snapshot, or while the policy does not allow it (409
// OperationNotAllowedInCurrentState).
var ErrPermanentDelete = errors.New("permanent delete not allowed")

// DeletePolicy reads the stored DeleteRetentionPolicy (disabled when none
// is stored).
func (s *Service) DeletePolicy(ctx context.Context) (DeletePolicy, error) {
	doc, err := s.meta.ServiceProperties(ctx)
	if err != nil || doc == nil {
		return DeletePolicy{}, err
	}
	var props struct {
		Policy *DeletePolicy `xml:"DeleteRetentionPolicy"`
	}
	if err := xml.Unmarshal(doc, &props); err != nil {
		return DeletePolicy{}, fmt.Errorf("blob service properties: %w", err)
	}
	if props.Policy == nil || !props.Policy.Enabled || props.Policy.Days < 1 {
		return DeletePolicy{}, nil
	}
	return *props.Policy, nil
}

// deletedCopy is b as a soft-deleted row: deleted now, kept for the
// policy's days, its lease gone.
func deletedCopy(b Blob, now time.Time, p DeletePolicy) Blob {
	b.Deleted = &DeletedInfo{Time: now, Expires: now.Add(time.Duration(p.Days) * 24 * time.Hour)}
	b.Lease = Lease{}
	return b
}

// softDeleteBlob soft-deletes the committed base blob b (under its lock)
// and the snapshots snaps (all of them, or only them with onlySnaps):
// the base blob's content is copied to a key of its own first (its key
// is the name's, which a new blob of that name reuses), the snapshots
// keep theirs.
func (s *Service) softDeleteBlob(ctx context.Context, b Blob, snaps []Blob, onlySnaps bool, p DeletePolicy) error {
	now := s.Now()
	var live, deleted []Blob
	for _, sn := range snaps {
		live = append(live, sn)
		deleted = append(deleted, deletedCopy(sn, now, p))
	}
	if !onlySnaps {
		if !b.Committed { // nothing to keep: only staged blocks
			if err := s.meta.SoftDelete(ctx, live, deleted); err != nil {
				return err
			}
			return s.meta.DeleteBlob(ctx, b.Container, b.Name)
		}
		key, err := s.copyContent(ctx, b.ContentKey, "-d")
		if err != nil {
			return fmt.Errorf("blob %s/%s: soft delete: %w", b.Container, b.Name, err)
		}
		d := deletedCopy(b, now, p)
		d.ContentKey = key
		live = append(live, b)
		deleted = append(deleted, d)
	}
	if err := s.meta.SoftDelete(ctx, live, deleted); err != nil {
		return err
	}
	if onlySnaps {
		return nil
	}
	return s.deleteContent(ctx, b)
}

// copyContent streams the content under key to a new key (key+tag+id).
func (s *Service) copyContent(ctx context.Context, key, tag string) (string, error) {
	rc, _, err := s.content.ReadRange(ctx, key, 0, -1)
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	defer rc.Close()
	to := key + tag + blobstore.NewBlockID()
	if _, err := blobstore.Put(ctx, s.content, to, rc, stageChunk, blobstore.Conditions{}); err != nil {
		return "", fmt.Errorf("copy: %w", err)
	}
	return to, nil
}

// PermanentDelete is Delete Blob with deletetype=permanent on a
// soft-deleted snapshot: "This property when set to true allows deletion
// of the soft deleted blob versions and snapshots" (AllowPermanentDelete).
func (s *Service) PermanentDelete(ctx context.Context, container, name, snapshot string) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	p, err := s.DeletePolicy(ctx)
	if err != nil {
		return err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	// What is not there is 404 (the container's absence too), whatever
	// the policy.
	cur, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return err
	}
	rows, err := s.liveDeleted(ctx, container, name)
	if err != nil {
		return err
	}
	if !ok && !hasRow(cur) && len(rows) == 0 {
		return fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	if snapshot == "" || !p.AllowPermanentDelete {
		return fmt.Errorf("blob %s/%s: %w", container, name, ErrPermanentDelete)
	}
	for _, d := range rows {
		if d.Snapshot == snapshot {
			return s.purge(ctx, d)
		}
	}
	if _, err := s.meta.Snapshot(ctx, container, name, snapshot); err == nil {
		return fmt.Errorf("blob %s/%s snapshot %s is not soft-deleted: %w", container, name, snapshot, ErrPermanentDelete)
	}
	return fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, ErrBlobNotFound)
}

// liveDeleted returns a name's soft-deleted rows still in their
// retention, purging the others.
func (s *Service) liveDeleted(ctx context.Context, container, name string) ([]Blob, error) {
	rows, err := s.meta.DeletedBlobs(ctx, container, name)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	var out []Blob
	for _, d := range rows {
		if !now.Before(d.Deleted.Expires) {
			if err := s.purge(ctx, d); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// purge forgets a soft-deleted row and its content.
func (s *Service) purge(ctx context.Context, d Blob) error {
	if err := s.meta.RemoveDeleted(ctx, d.Deleted.Seq); err != nil && !errors.Is(err, ErrBlobNotFound) {
		return err
	}
	return s.deleteContent(ctx, d)
}

// PurgeDeleted forgets the soft-deleted blobs and containers whose
// retention has ended (run with the content store's garbage collection).
func (s *Service) PurgeDeleted(ctx context.Context) error {
	if err := s.purgeContainers(ctx); err != nil {
		return err
	}
	for {
		rows, err := s.meta.ExpiredDeleted(ctx, s.Now(), listBatch)
		if err != nil {
			return err
		}
		for _, d := range rows {
			if err := s.purge(ctx, d); err != nil {
				return err
			}
		}
		if len(rows) < listBatch {
			return nil
		}
	}
}

// UndeleteBlob restores a soft-deleted blob and its soft-deleted
// snapshots ("Undelete Blob restores the contents and metadata of a
// soft-deleted blob and any associated soft-deleted snapshots"). The
// latest soft-deleted base version becomes the blob again when no blob
// of that name exists; otherwise (a blob was written since, as Azure
// keeps an overwritten soft-deleted blob as a snapshot) it comes back as
// a snapshot taken at its deletion time, as do older ones. Undeleting a
// blob that exists and has nothing soft-deleted succeeds; a name with
// neither is ErrBlobNotFound.
func (s *Service) UndeleteBlob(ctx context.Context, container, name string) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	cur, ok, err := s.blobOrMissing(ctx, container, name)
	if err != nil {
		return err
	}
	rows, err := s.liveDeleted(ctx, container, name)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		if ok {
			return nil
		}
		return fmt.Errorf("blob %s/%s: %w", container, name, ErrBlobNotFound)
	}
	latest := -1
	if !ok && !hasRow(cur) {
		for i, d := range rows {
			if d.Snapshot == "" {
				latest = i // rows are in seq order within the base versions
			}
		}
	}
	// Snapshots first, so that a base version coming back as a snapshot
	// takes a time none of them has.
	order := make([]int, 0, len(rows))
	for i, d := range rows {
		if d.Snapshot != "" {
			order = append(order, i)
		}
	}
	for i, d := range rows {
		if d.Snapshot == "" {
			order = append(order, i)
		}
	}
	for _, i := range order {
		d := rows[i]
		switch {
		case i == latest:
			if err := s.restoreBase(ctx, d); err != nil {
				return err
			}
			continue
		case d.Snapshot == "":
			if err := s.restoreAsSnapshot(ctx, d); err != nil {
				return err
			}
		default:
			sn := d
			sn.Deleted = nil
			if err := s.meta.PutBlob(ctx, sn, false); err != nil {
				return err
			}
		}
		if err := s.meta.RemoveDeleted(ctx, d.Deleted.Seq); err != nil {
			return err
		}
	}
	return nil
}

// restoreAsSnapshot puts a soft-deleted base version back as a snapshot
// of its deletion time (unique for the blob).
func (s *Service) restoreAsSnapshot(ctx context.Context, d Blob) error {
	sn := d
	sn.Deleted = nil
	t := d.Deleted.Time
	for {
		sn.Snapshot = t.Format(snapshotLayout)
		if _, err := s.meta.Snapshot(ctx, d.Container, d.Name, sn.Snapshot); errors.Is(err, ErrBlobNotFound) {
			break
		} else if err != nil {
			return err
		}
		t = t.Add(100 * time.Nanosecond)
	}
	return s.meta.PutBlob(ctx, sn, false)
}

// restoreBase makes the soft-deleted base version d the blob again
// (restoreContent) and forgets its record.
func (s *Service) restoreBase(ctx context.Context, d Blob) error {
	b := d
	b.Deleted = nil
	b.Lease = Lease{State: LeaseAvailable}
	if err := s.restoreContent(ctx, b); err != nil {
		return err
	}
	return s.meta.RemoveDeleted(ctx, d.Deleted.Seq)
}

// restoreContent makes b, whose content is under a key of its own (a
// soft-deleted copy), the blob of its name: the content is staged back
// under the name's key in the pieces its layout names (committed blocks,
// appended blocks or page chunks, so later writes find them by id),
// committed with the row, and the copy deleted.
func (s *Service) restoreContent(ctx context.Context, d Blob) error {
	rc, _, err := s.content.ReadRange(ctx, d.ContentKey, 0, -1)
	if err != nil {
		return fmt.Errorf("blob %s/%s: restore: read: %w", d.Container, d.Name, err)
	}
	defer rc.Close()
	b := d
	b.ContentKey = contentKey(d.Container, d.Name)
	b.Blocks = append([]Block(nil), d.Blocks...)
	if d.Page != nil {
		ps := *d.Page
		ps.Chunks = append([]PageChunk(nil), d.Page.Chunks...)
		b.Page = &ps
	}
	var ids []string
	stage := func(n int64) (string, int64, error) {
		id := blobstore.NewBlockID()
		got, err := s.content.StageBlock(ctx, b.ContentKey, id, io.LimitReader(rc, n))
		if err != nil {
			return "", 0, fmt.Errorf("blob %s/%s: restore: stage: %w", d.Container, d.Name, err)
		}
		ids = append(ids, id)
		return id, got, nil
	}
	switch {
	case b.Page != nil:
		for i := range b.Page.Chunks {
			if b.Page.Chunks[i].StoreID, _, err = stage(b.Page.Chunks[i].Size); err != nil {
				return err
			}
		}
	case len(b.Blocks) > 0:
		for i := range b.Blocks {
			if b.Blocks[i].StoreID, _, err = stage(b.Blocks[i].Size); err != nil {
				return err
			}
		}
	default:
		for {
			_, n, err := stage(stageChunk)
			if err != nil {
				return err
			}
			if n == 0 { // as PutBlob: no empty block
				ids = ids[:len(ids)-1]
			}
			if n < stageChunk {
				break
			}
		}
	}
	if err := s.commitContent(ctx, &b, ids, true); err != nil {
		return err
	}
	return s.deleteContentKey(ctx, d.ContentKey)
}

// deleteContentKey removes the content under key (missing is no error).
func (s *Service) deleteContentKey(ctx context.Context, key string) error {
	if err := s.content.Delete(ctx, key, blobstore.Conditions{}); err != nil && !errors.Is(err, blobstore.ErrNotFound) {
		return fmt.Errorf("delete content %s: %w", key, err)
	}
	return nil
}

// keepOverwritten is the first half of what an enabled policy does to a
// write that replaces a committed blob's content: "When blob soft delete
// is enabled, overwriting a blob automatically creates a soft-deleted
// snapshot of the blob's state prior to the write operation". Under the
// blob's lock, before the write commits, it copies old's content to a key
// of its own and returns the soft-deleted snapshot to record once the
// write has committed (recordOverwritten); nil when there is none to keep.
func (s *Service) keepOverwritten(ctx context.Context, old Blob) (*Blob, error) {
	if !old.Committed {
		return nil, nil
	}
	p, err := s.DeletePolicy(ctx)
	if err != nil || !p.Enabled {
		return nil, err
	}
	key, err := s.copyContent(ctx, old.ContentKey, "-o")
	if err != nil {
		return nil, fmt.Errorf("blob %s/%s: keep overwritten version: %w", old.Container, old.Name, err)
	}
	sn := deletedCopy(old, s.Now(), p)
	sn.ContentKey = key
	gone, err := s.meta.DeletedBlobs(ctx, old.Container, old.Name)
	if err != nil {
		return nil, err
	}
	t := sn.Deleted.Time
	for {
		sn.Snapshot = t.Format(snapshotLayout)
		taken := false
		for _, d := range gone {
			taken = taken || d.Snapshot == sn.Snapshot
		}
		if _, err := s.meta.Snapshot(ctx, old.Container, old.Name, sn.Snapshot); err == nil {
			taken = true
		} else if !errors.Is(err, ErrBlobNotFound) {
			return nil, err
		}
		if !taken {
			break
		}
		t = t.Add(100 * time.Nanosecond)
	}
	return &sn, nil
}

// recordOverwritten records what keepOverwritten kept once the write
// committed (committed false: the write failed, the copy goes).
func (s *Service) recordOverwritten(ctx context.Context, sn *Blob, committed bool) error {
	if sn == nil {
		return nil
	}
	if !committed {
		return s.deleteContentKey(ctx, sn.ContentKey)
	}
	return s.meta.SoftDelete(ctx, nil, []Blob{*sn})
}
