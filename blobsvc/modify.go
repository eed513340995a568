package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Writes that change only a row — Set Blob Properties and Metadata, Seal
// Append Blob, Lease Blob, the container's metadata, ACL and lease — are
// one transaction of the store (Store.ModifyBlob, ModifyContainer): the
// check and the write see one row, and no other process's writer acts in
// between, without the claim's own statements. They fall back to the
// claim (lockBlob) when the store says the blob is claimed or has a
// commit intent (a writer is in it, or died in it: the claim waits or
// resolves), and, for blobs, when the row is missing or uncommitted (the
// claim's path answers those as before: conditions, then 404).

// errSlowPath is a fast path's "take the claim".
var errSlowPath = errors.New("take the blob's claim")

// changeBlob checks an update of the committed blob b (conditions, then
// lease) and applies f with b's new ETag and Last-Modified in place.
func (s *Service) changeBlob(b *Blob, o WriteOptions, f func(*Blob) error) error {
	if err := s.checkWrite(*b, true, o, writeUpdate); err != nil {
		return err
	}
	// The new ETag first: f may record the final row as a commit intent.
	b.ETag, b.LastModified = newETag(), s.Now()
	b.Lease = b.Lease.AfterWrite(b.LastModified)
	return f(b)
}

// modifyBlob runs fn on the blob's row in one store transaction (under the
// blob's stripe, in this process). done is false when the caller must
// take the claim's path instead: the blob is claimed, committing, missing,
// or (unless anyRow) uncommitted.
func (s *Service) modifyBlob(ctx context.Context, container, name string, anyRow bool, fn func(*Blob) error) (Blob, bool, error) {
	mu := s.stripe(container, name)
	mu.Lock()
	defer mu.Unlock()
	b, err := s.meta.ModifyBlob(ctx, container, name, func(b *Blob) error {
		s.settle(b)
		if !anyRow && !b.Committed {
			return errSlowPath
		}
		return fn(b)
	})
	if errors.Is(err, errSlowPath) || errors.Is(err, ErrClaimHeld) || errors.Is(err, ErrBlobNotFound) {
		return Blob{}, false, nil
	}
	return b, true, err
}

// updateBlobRow is updateBlob for an f that changes the row only (no
// I/O): one store transaction when it can (modifyBlob), the claim's path
// otherwise.
func (s *Service) updateBlobRow(ctx context.Context, container, name string, o WriteOptions, f func(*Blob) error) (Blob, error) {
	if err := s.checkNames(ctx, container, name); err != nil {
		return Blob{}, err
	}
	if b, done, err := s.modifyBlob(ctx, container, name, false, func(b *Blob) error {
		return s.changeBlob(b, o, f)
	}); done {
		return b, err
	}
	return s.updateBlob(ctx, container, name, o, f)
}

// modifyContainer is updateContainer in one store transaction; done is
// false when the container's claim is held (take it instead).
func (s *Service) modifyContainer(ctx context.Context, name string, cond Conditions, f func(*Container, time.Time) error) (Container, bool, error) {
	mu := s.stripe(name, "")
	mu.Lock()
	defer mu.Unlock()
	c, err := s.meta.ModifyContainer(ctx, name, func(c *Container) error {
		if err := cond.checkWrite(true, c.ETag, c.LastModified, false); err != nil {
			return fmt.Errorf("container %s: %w", name, err)
		}
		if err := f(c, s.Now()); err != nil {
			return fmt.Errorf("container %s: %w", name, err)
		}
		return nil
	})
	if errors.Is(err, ErrClaimHeld) {
		return Container{}, false, nil
	}
	return c, true, err
}
