package fs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blobshare/blobshare/locks"
)

// OpenHandle is one open handle as `blobshare status` shows it: the lock
// table's row with the path of its file, its byte-range locks, the file's
// delete-pending and lease state, and its owner.
type OpenHandle struct {
	locks.Handle
	ShareName string // the share's name (Share is the handle's share mode)
	Path      string // the path inside the share ("dir/file"; "" for the share root)
	// Unlinked: the name is gone from the namespace (deleted through the
	// mount while open); Path is the name it had.
	Unlinked      bool
	Locks         []locks.ByteLock
	DeletePending bool
	Lease         locks.LeaseInfo
	OwnerState    locks.OwnerState
	// Durable is set for a durable SMB open: whether its client is away
	// (Disconnected) and until when it is kept.
	Durable *locks.DurableOpen
}

// LeasedFile is a file with a lease (REST Lease File): leases are not
// handles, so they are listed apart.
type LeasedFile struct {
	File          FileID
	ShareName     string
	Path          string
	Lease         locks.LeaseInfo
	DeletePending bool
}

// Status is every handle and lease of a data directory's database.
type Status struct {
	Handles []OpenHandle // in handle id order
	Leases  []LeasedFile // in file id order
	Owners  []locks.OwnerState
}

// ReadStatus reads the lock table and the namespace of the database at
// dbPath in one read transaction, without joining it (locks.Inspect): it
// changes nothing, so the handles of a killed process still show, with
// OwnerState.Alive false, until a process that opens the database reaps
// them. A file id the namespace no longer has shows with an empty path.
func ReadStatus(ctx context.Context, dbPath string) (Status, error) {
	var st Status
	err := locks.Inspect(ctx, dbPath, func(ctx context.Context, c *locks.Conn) error {
		snap, err := locks.ReadSnapshot(ctx, c, dbPath)
		if err != nil {
			return err
		}
		q := &q{ctx: ctx, tx: c}
		where := func(file FileID) (share, path string, unlinked bool, err error) {
			e, err := q.get(file)
			if errors.Is(err, ErrNotFound) || errors.Is(err, locks.ErrNoTable) {
				return "", "", false, nil
			}
			if err != nil {
				return "", "", false, err
			}
			p, err := q.pathOf(e)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return "", "", false, err
			}
			share, path, _ = strings.Cut(p, "/")
			return share, path, e.unlinked, nil
		}
		st = Status{Handles: make([]OpenHandle, 0, len(snap.Handles))}
		for _, h := range snap.Handles {
			oh := OpenHandle{Handle: h, Locks: snap.Locks[h.ID], OwnerState: snap.Owners[h.Owner]}
			fst := snap.Files[h.File]
			oh.DeletePending, oh.Lease = fst.DeletePending, fst.Lease
			if d, ok := snap.Durable[h.ID]; ok && d.File == h.File {
				oh.Durable = &d
			}
			if oh.ShareName, oh.Path, oh.Unlinked, err = where(h.File); err != nil {
				return fmt.Errorf("handle %d: %w", h.ID, err)
			}
			st.Handles = append(st.Handles, oh)
		}
		for file, fst := range snap.Files {
			if fst.Lease.State == locks.LeaseAvailable {
				continue
			}
			lf := LeasedFile{File: file, Lease: fst.Lease, DeletePending: fst.DeletePending}
			if lf.ShareName, lf.Path, _, err = where(file); err != nil {
				return fmt.Errorf("file %d: %w", file, err)
			}
			st.Leases = append(st.Leases, lf)
		}
		slices.SortFunc(st.Leases, func(a, b LeasedFile) int { return cmp.Compare(a.File, b.File) })
		for _, o := range snap.Owners {
			st.Owners = append(st.Owners, o)
		}
		slices.SortFunc(st.Owners, func(a, b locks.OwnerState) int { return cmp.Compare(a.ID, b.ID) })
		return nil
	})
	if err != nil {
		return Status{}, fmt.Errorf("status of %s: %w", dbPath, err)
	}
	return st, nil
}
