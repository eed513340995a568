package fs

import (
	"context"
	"fmt"
	"syscall"

	"github.com/blobshare/blobshare/locks"
)

// ErrQuotaExceeded is the outcome of a REST operation that would make the
// files of a share larger than its quota (Azure's 403
// ShareSizeLimitReached). It also matches syscall.EDQUOT, so callers that
// map "disk quota exceeded" (rest, the mount) answer it without knowing
// this package's sentinel.
var ErrQuotaExceeded error = quotaExceeded{}

type quotaExceeded struct{}

func (quotaExceeded) Error() string { return "share quota exceeded" }
func (quotaExceeded) Is(target error) bool {
	return target == syscall.EDQUOT
}

// shareUsage is the sum of the sizes of the files below share, as Azure
// counts a share's usage (the files' lengths, holes included). Files
// unlinked through the mount while open still count: they keep their
// bytes until their last handle closes. It walks the share's tree with a
// recursive query (standard SQL, as PostgreSQL runs it too), so it costs
// one pass over the share's entries: only operations that grow a file
// pay it.
func (q *q) shareUsage(share FileID) (int64, error) {
	var used int64
	err := q.queryRow(`WITH RECURSIVE dirs(id) AS (
		SELECT ? UNION ALL
		SELECT e.id FROM ns_entries e JOIN dirs ON e.parent = dirs.id WHERE e.kind <> ?
	)
	SELECT coalesce(sum(size), 0) FROM ns_entries WHERE kind = ? AND parent IN (SELECT id FROM dirs)`,
		int64(share), KindFile, KindFile).Scan(&used)
	return used, err
}

// checkQuota fails with ErrQuotaExceeded when file e, now of e.size bytes,
// growing to newSize would take its share past the share's quota.
// Shrinking or keeping the size is always allowed.
func (q *q) checkQuota(e entry, newSize int64) error {
	if newSize <= e.size {
		return nil
	}
	shareID, err := q.shareOf(e)
	if err != nil {
		return err
	}
	return q.checkShareRoom(shareID, newSize-e.size)
}

// checkShareRoom fails with ErrQuotaExceeded when share has less than
// grow bytes left under its quota.
func (q *q) checkShareRoom(shareID FileID, grow int64) error {
	if grow <= 0 || shareID == RootID {
		return nil
	}
	sh, err := q.get(shareID)
	if err != nil {
		return err
	}
	limit := int64(sh.quota) << 30
	if sh.quota <= 0 || grow > limit {
		return fmt.Errorf("%w: %d more bytes, quota %d GiB", ErrQuotaExceeded, grow, sh.quota)
	}
	used, err := q.shareUsage(shareID)
	if err != nil {
		return err
	}
	if used+grow > limit {
		return fmt.Errorf("%w: %d bytes used, %d more asked, quota %d GiB", ErrQuotaExceeded, used, grow, sh.quota)
	}
	return nil
}

// ShareStats is what Get Share Stats reports.
type ShareStats struct {
	UsageBytes int64 // the sum of the files' sizes
}

// ShareStats counts the files of a share. Errors: ErrShareNotFound.
func (fsys *FileSystem) ShareStats(ctx context.Context, name string) (ShareStats, error) {
	var st ShareStats
	err := fsys.view(ctx, func(tx *locks.Tx, q *q) error {
		sh, err := q.share(name)
		if err != nil {
			return err
		}
		st.UsageBytes, err = q.shareUsage(sh.id)
		return err
	})
	return st, pathErr("share stats", name, err)
}
