package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Blob index tag bounds (Azure's).
const (
	MaxTags        = 10
	MaxTagKeyLen   = 128
	MaxTagValueLen = 256
)

// ErrInvalidTag: more than MaxTags tags, a key of 0 or more than 128
// characters, a value over 256, or a character outside letters, digits,
// space and + - . / : = _ (400 InvalidTag).
var ErrInvalidTag = errors.New("invalid blob tag")

// ValidTags checks a tag set.
func ValidTags(tags map[string]string) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("%d tags: %w", len(tags), ErrInvalidTag)
	}
	ok := func(s string) bool {
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') && !containsRune(" +-./:=_", r) {
				return false
			}
		}
		return true
	}
	for k, v := range tags {
		if k == "" || len(k) > MaxTagKeyLen || len(v) > MaxTagValueLen || !ok(k) || !ok(v) {
			return fmt.Errorf("tag %q=%q: %w", k, v, ErrInvalidTag)
		}
	}
	return nil
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// SortedTagKeys returns the keys of tags in order (for stable output).
func SortedTagKeys(tags map[string]string) []string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SetBlobTags replaces the blob's index tags. As Azure documents, this
// changes neither the ETag nor Last-Modified. The If-* conditions are
// evaluated as for a write; an active lease needs its id (as Azurite
// checks it).
func (s *Service) SetBlobTags(ctx context.Context, container, name string, tags map[string]string, leaseID string, cond Conditions) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	if err := ValidTags(tags); err != nil {
		return err
	}
	mu := s.stripe(container, name)
	mu.Lock()
	defer mu.Unlock()
	b, err := s.conditionedBlob(ctx, container, name, cond, false)
	if err != nil {
		return err
	}
	if err := cond.checkWrite(true, b.ETag, b.LastModified, false); err != nil {
		return fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	if err := checkWriteLease(b.Lease, leaseID, s.Now()); err != nil {
		return fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	b.Tags = tags
	return s.meta.PutBlob(ctx, b, false)
}
