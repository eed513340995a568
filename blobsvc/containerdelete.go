package blobsvc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// Container soft delete. Azure configures it per account outside the
// data plane (the storage account's blob service properties in Azure
// Resource Manager, containerDeleteRetentionPolicy), so here it is the
// Service's setting (SetContainerRetention, the server's
// configuration): with it, Delete Container keeps the container, its
// blobs and snapshots for that many days, listed by List Containers with
// include=deleted and brought back by Restore Container.

// DeletedContainer is a soft-deleted container: its row as it was, the
// version Restore Container names it by, when it was deleted and until
// when it is kept.
type DeletedContainer struct {
	Container     Container
	Version       string
	Time, Expires time.Time
}

// HiddenContainer is the container name a soft-deleted container's rows
// are kept under: never a valid container name (it holds NULs), unique
// per deletion.
func HiddenContainer(name, version string) string { return "\x00" + name + "\x00" + version }

// SetContainerRetention turns container soft delete on for days days
// (0: off; Azure allows 1 to 365). Call it before serving.
func (s *Service) SetContainerRetention(days int) { s.containerDays.Store(int32(days)) }

// softDeleteContainer soft-deletes the container c (its lock held, its
// conditions and lease checked). Each blob's content is copied off the
// key the name gives it first, as a new container of that name would
// write there; uncommitted blobs (staged blocks only) are not kept.
func (s *Service) softDeleteContainer(ctx context.Context, c Container, days int) error {
	var old []string
	from := ""
	for {
		rows, err := s.meta.ListBlobs(ctx, c.Name, "", from, listBatch)
		if err != nil {
			return err
		}
		for _, row := range rows {
			key, err := s.relocate(ctx, c.Name, row.Name)
			if err != nil {
				return err
			}
			if key != "" {
				old = append(old, key)
			}
		}
		if len(rows) < listBatch {
			break
		}
		from = rows[len(rows)-1].Name + "\x00"
	}
	now := s.Now()
	var v [8]byte
	_, _ = rand.Read(v[:])
	d := DeletedContainer{Container: c, Version: fmt.Sprintf("%X", v), Time: now,
		Expires: now.Add(time.Duration(days) * 24 * time.Hour)}
	d.Container.Lease = Lease{}
	if err := s.meta.SoftDeleteContainer(ctx, d); err != nil {
		return err
	}
	var errs []error
	for _, k := range old {
		if err := s.deleteContentKey(ctx, k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// relocate copies a blob of the container being soft-deleted (its lock
// held) off its name's key under the blob's own lock, so a write of the
// blob meanwhile is neither lost nor left on the name's key; it returns
// the key it left ("" for an uncommitted blob, dropped).
func (s *Service) relocate(ctx context.Context, container, name string) (string, error) {
	unlock, err := s.lockBlobIn(ctx, container, name)
	if err != nil {
		return "", err
	}
	defer unlock()
	b, err := s.meta.Blob(ctx, container, name)
	if errors.Is(err, ErrBlobNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !b.Committed {
		if err := s.meta.DeleteBlob(ctx, container, name); err != nil && !errors.Is(err, ErrBlobNotFound) {
			return "", err
		}
		return "", nil
	}
	key, err := s.copyContent(ctx, b.ContentKey, "-c")
	if err != nil {
		return "", fmt.Errorf("blob %s/%s: soft delete container: %w", container, name, err)
	}
	old := b.ContentKey
	b.ContentKey = key
	if err := s.meta.PutBlob(ctx, b, false); err != nil {
		return "", err
	}
	return old, nil
}

// restoreKey moves a restored blob's content back under its name's key,
// under the blob's lock (the container's is held), unless a write got
// there first.
func (s *Service) restoreKey(ctx context.Context, container, name string) error {
	unlock, err := s.lockBlobIn(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	b, err := s.meta.Blob(ctx, container, name)
	if errors.Is(err, ErrBlobNotFound) {
		return nil
	}
	if err != nil || b.ContentKey == contentKey(container, name) {
		return err
	}
	return s.restoreContent(ctx, b)
}

// ListedContainer is an item of List Containers with include=deleted: a
// live container, or a soft-deleted one (Deleted set).
type ListedContainer struct {
	Container Container
	Deleted   *DeletedContainer
}

// ListContainersWithDeleted is ListContainers with the soft-deleted
// containers still in their retention, each after a live container of
// the same name.
func (s *Service) ListContainersWithDeleted(ctx context.Context, prefix, marker string, limit int) ([]ListedContainer, string, error) {
	if err := s.purgeContainers(ctx); err != nil {
		return nil, "", err
	}
	from := max(marker, prefix)
	live, err := s.meta.ListContainers(ctx, prefix, from, limit+1)
	if err != nil {
		return nil, "", err
	}
	gone, err := s.meta.DeletedContainers(ctx, prefix, from, limit+1)
	if err != nil {
		return nil, "", err
	}
	var out []ListedContainer
	i, j := 0, 0
	for len(out) <= limit && (i < len(live) || j < len(gone)) {
		if j >= len(gone) || (i < len(live) && live[i].Name <= gone[j].Container.Name) {
			out = append(out, ListedContainer{Container: live[i]})
			i++
			continue
		}
		d := gone[j]
		out = append(out, ListedContainer{Container: d.Container, Deleted: &d})
		j++
	}
	next := ""
	if len(out) > limit {
		next = out[limit].Container.Name
		out = out[:limit]
	}
	return out, next, nil
}

// RestoreContainer brings the soft-deleted container (name, version) back
// as container as (Restore Container; as is the request's container,
// normally name): its blobs, snapshots and soft-deleted blobs with it,
// each blob's content back under the key its name gives it. A missing
// record is ErrContainerNotFound, a live container as ErrContainerExists.
func (s *Service) RestoreContainer(ctx context.Context, name, version, as string) (Container, error) {
	if err := ValidContainerName(as); err != nil {
		return Container{}, err
	}
	if err := s.purgeContainers(ctx); err != nil {
		return Container{}, err
	}
	gone, err := s.meta.DeletedContainers(ctx, name, name, 1000)
	if err != nil {
		return Container{}, err
	}
	var d *DeletedContainer
	for i := range gone {
		if gone[i].Container.Name == name && gone[i].Version == version {
			d = &gone[i]
		}
	}
	if d == nil {
		return Container{}, fmt.Errorf("deleted container %s version %s: %w", name, version, ErrContainerNotFound)
	}
	unlock, err := s.lockBlob(ctx, as, "")
	if err != nil {
		return Container{}, err
	}
	defer unlock()
	c := d.Container
	c.Name, c.ETag, c.LastModified, c.Lease = as, newETag(), s.Now(), Lease{State: LeaseAvailable}
	if err := s.meta.RestoreContainer(ctx, name, version, c); err != nil {
		return Container{}, err
	}
	s.deletingMu.Lock()
	delete(s.deleting, as)
	s.deletingMu.Unlock()
	from := ""
	for {
		rows, err := s.meta.ListBlobs(ctx, as, "", from, listBatch)
		if err != nil {
			return Container{}, err
		}
		for _, row := range rows {
			if err := s.restoreKey(ctx, as, row.Name); err != nil {
				return Container{}, err
			}
		}
		if len(rows) < listBatch {
			break
		}
		from = rows[len(rows)-1].Name + "\x00"
	}
	return c, nil
}

// purgeContainers forgets the soft-deleted containers whose retention
// has ended, with their content.
func (s *Service) purgeContainers(ctx context.Context) error {
	for {
		gone, err := s.meta.ExpiredContainers(ctx, s.Now(), listBatch)
		if err != nil {
			return err
		}
		for _, d := range gone {
			keys, err := s.meta.PurgeDeletedContainer(ctx, d.Container.Name, d.Version)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if err := s.deleteContentKey(ctx, k); err != nil {
					return err
				}
			}
		}
		if len(gone) < listBatch {
			return nil
		}
	}
}
