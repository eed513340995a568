package blobsvc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Access tiers: Set Blob Tier, rehydration from Archive, and the
// conditions on the tier's change time.

// Rehydration is an archived blob on its way back to an online tier
// (Set Blob Tier from Archive to Hot, Cool or Cold): the tier it goes
// to, its x-ms-rehydrate-priority and when it was asked. Until it
// completes the blob stays Archive (reads 409 BlobArchived) and answers
// x-ms-archive-status: rehydrate-pending-to-<tier>.
type Rehydration struct {
	To       string
	Priority string // Standard or High
	Since    time.Time
}

// DefaultRehydrateTime is how long a rehydration takes unless
// SetRehydrateTime says otherwise. Azure takes hours ("up to 15 hours"
// at Standard priority, "under one hour" at High for objects under 10
// GB); an emulator's clients want the pending state observable (the
// azblob tests read rehydrate-pending-to-* right after Set Blob Tier)
// and the end reachable in a test: 10 seconds, whatever the priority.
const DefaultRehydrateTime = 10 * time.Second

// Rehydration priorities (x-ms-rehydrate-priority).
const (
	PriorityStandard = "Standard"
	PriorityHigh     = "High"
)

var (
	// ErrBlobBeingRehydrated: Set Blob Tier to another tier than the one
	// a pending rehydration goes to (409 BlobBeingRehydrated, "This
	// operation is not permitted because the blob is being rehydrated.").
	ErrBlobBeingRehydrated = errors.New("blob is being rehydrated")
	// ErrInvalidRehydratePriority: x-ms-rehydrate-priority other than
	// Standard or High (400 InvalidHeaderValue).
	ErrInvalidRehydratePriority = errors.New("invalid rehydrate priority")
	// ErrAccessTierConditionNotMet: Delete Blob's
	// x-ms-access-tier-if-modified-since or -if-unmodified-since not met
	// by the tier's change time (412 AccessTierChangeTimeConditionNotMet).
	ErrAccessTierConditionNotMet = errors.New("access tier change time condition not met")
)

// SetRehydrateTime sets how long a rehydration takes (d <= 0: the
// default).
func (s *Service) SetRehydrateTime(d time.Duration) {
	if d <= 0 {
		d = DefaultRehydrateTime
	}
	s.rehydrate.Store(int64(d))
}

// rehydrateTime is the current rehydration time.
func (s *Service) rehydrateTime() time.Duration {
	if d := time.Duration(s.rehydrate.Load()); d > 0 {
		return d
	}
	return DefaultRehydrateTime
}

// settle completes b's rehydration if its time has come: the blob takes
// the target tier, changed when the rehydration ended. Derived from the
// stored times at each read with the service's clock, as leases are: no
// timer runs, and a write of the row stores the settled state.
func (s *Service) settle(b *Blob) {
	if b.Rehydrate == nil {
		return
	}
	done := b.Rehydrate.Since.Add(s.rehydrateTime())
	if s.Now().Before(done) {
		return
	}
	b.Tier, b.TierChanged, b.Rehydrate = b.Rehydrate.To, done, nil
}

// ArchiveStatus is x-ms-archive-status: rehydrate-pending-to-hot, -cool
// or -cold while b is being rehydrated, else "".
func ArchiveStatus(b Blob) string {
	if b.Rehydrate == nil {
		return ""
	}
	return "rehydrate-pending-to-" + strings.ToLower(b.Rehydrate.To)
}

// CheckRehydratePriority validates x-ms-rehydrate-priority ("" passes).
func CheckRehydratePriority(p string) error {
	if p == "" || p == PriorityStandard || p == PriorityHigh {
		return nil
	}
	return fmt.Errorf("x-ms-rehydrate-priority %q: %w", p, ErrInvalidRehydratePriority)
}

// SetBlobTier stores the access tier of the blob, or of one of its
// snapshots (snapshot != ""): Hot, Cool, Cold or Archive for block
// blobs; P4 to P80 for page blobs. An Archive blob refuses reads (409
// BlobArchived). Setting an online tier on it starts a rehydration
// (Rehydration, with priority, Standard when ""): the blob stays Archive
// for the rehydration time, then takes the tier. Meanwhile setting the
// same tier again may raise the priority ("The priority setting can be
// changed from Standard to High ... The priority setting can't be
// lowered from High to Standard": a lower one is ignored), setting
// another is ErrBlobBeingRehydrated. An archived snapshot stays archived:
// "Snapshots and previous versions cannot be rehydrated back to the hot
// or cool tiers once they are moved to the archive tier" ("Blob
// rehydration from the archive tier"; 409 BlobArchived). The ETag stays.
func (s *Service) SetBlobTier(ctx context.Context, container, name, snapshot, tier, priority, leaseID string) error {
	if err := s.checkNames(ctx, container, name); err != nil {
		return err
	}
	if err := CheckRehydratePriority(priority); err != nil {
		return err
	}
	unlock, err := s.lockBlob(ctx, container, name)
	if err != nil {
		return err
	}
	defer unlock()
	var b Blob
	if snapshot != "" {
		b, err = s.meta.Snapshot(ctx, container, name, snapshot)
	} else {
		b, err = s.committedBlob(ctx, container, name)
	}
	if err != nil {
		return err
	}
	if snapshot == "" {
		if err := checkIncremental(b, nil); err != nil {
			return err
		}
	}
	if tier == "" {
		return fmt.Errorf("blob %s/%s (%s): tier %q: %w", container, name, b.Type, tier, ErrInvalidTier)
	}
	if err := checkTier(container, name, b.Type, tier); err != nil {
		return err
	}
	if snapshot != "" {
		if b.Tier == "Archive" && tier != "Archive" {
			return fmt.Errorf("blob %s/%s snapshot %s: %w", container, name, snapshot, ErrBlobArchived)
		}
	} else if err := checkWriteLease(b.Lease, leaseID, s.Now()); err != nil {
		return fmt.Errorf("blob %s/%s: %w", container, name, err)
	}
	now := s.Now()
	switch {
	case b.Rehydrate != nil && tier == b.Rehydrate.To:
		if priority == PriorityHigh {
			b.Rehydrate.Priority = PriorityHigh
		}
	case b.Rehydrate != nil:
		return fmt.Errorf("blob %s/%s: rehydrating to %s, tier %s asked: %w", container, name, b.Rehydrate.To, tier, ErrBlobBeingRehydrated)
	case b.Tier == "Archive" && tier != "Archive" && b.Type == BlockBlob:
		if priority == "" {
			priority = PriorityStandard
		}
		b.Rehydrate = &Rehydration{To: tier, Priority: priority, Since: now}
	default:
		b.Tier, b.TierChanged = tier, now
	}
	return s.meta.PutBlob(ctx, b, false)
}

// checkTierTime evaluates Delete Blob's conditions on the access tier's
// change time: the time the tier was last set, or the blob's creation
// for a blob whose tier was never set (its inferred tier has been its
// tier since). At the one-second resolution of the HTTP dates.
func (c Conditions) checkTierTime(b Blob) error {
	if c.AccessTierIfModifiedSince == nil && c.AccessTierIfUnmodifiedSince == nil {
		return nil
	}
	changed := b.TierChanged
	if b.Tier == "" || changed.IsZero() {
		changed = b.Created
	}
	if t := c.AccessTierIfModifiedSince; t != nil && !modifiedSince(changed, *t) {
		return fmt.Errorf("x-ms-access-tier-if-modified-since %s: %w", t.Format(time.RFC1123), ErrAccessTierConditionNotMet)
	}
	if t := c.AccessTierIfUnmodifiedSince; t != nil && modifiedSince(changed, *t) {
		return fmt.Errorf("x-ms-access-tier-if-unmodified-since %s: %w", t.Format(time.RFC1123), ErrAccessTierConditionNotMet)
	}
	return nil
}
