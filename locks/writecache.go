package locks

import (
	"context"
	"fmt"
)

// WriteBreakable reports whether a write to file would break anything: an
// oplock or lease on it that still lets its client cache (any state but
// none) and is not already breaking to none. It reads the file's caching
// rows in a lone read statement, so a writer outside SMB (the mount,
// `blobshare session`) pays one read per write when nothing on the file is
// cached, and decides (Tx.DecideCache with CacheOpWrite) only when
// something is. A v2 lease breaking to none, or an oplock breaking to
// none, has nothing left for a write to take.
func (t *Table) WriteBreakable(ctx context.Context, file FileID) (bool, error) {
	var n int64
	err := t.PeekStatement(ctx, func(tx *Tx) error {
		return tx.queryRow(`SELECT EXISTS(SELECT 1 FROM lk_opcache WHERE file = ? AND oplock BETWEEN 1 AND 254 AND NOT (breaking = 1 AND break_to = 0))
			OR EXISTS(SELECT 1 FROM lk_smbleases WHERE file = ? AND state != 0 AND NOT (breaking = 1 AND break_to = 0))`,
			[]any{int64(file), int64(file)}, &n)
	})
	if err != nil {
		return false, fmt.Errorf("locks: caching of file %d: %w", file, err)
	}
	return n != 0, nil
}

// openMeetsDeletePending reports whether c is an open (before it exists:
// no Handle yet) of a file whose delete is pending. Such an open fails
// with STATUS_DELETE_PENDING before the oplock break check runs (MS-FSA
// 2.1.5.1.2), so it breaks nothing (smbtorture smb2.oplock.doc: "2nd open
// should not break and get DELETE_PENDING").
func (tx *Tx) openMeetsDeletePending(c CacheCall) (bool, error) {
	if c.Req.Kind != CacheOpOpen || c.Req.Handle != 0 {
		return false, nil
	}
	return tx.DeletePending(c.File)
}
