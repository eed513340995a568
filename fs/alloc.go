package fs

import "context"

// Allocation sizes. SMB reports an allocation size beside every size
// (FileStandardInformation, FileAllInformation,
// FileNetworkOpenInformation, directory entries, the CREATE and CLOSE
// responses), and a client can ask for one apart from the size: the
// CREATE's AllocationSize context (MS-SMB2 2.2.13.2.2, applied by MS-FSA
// 2.1.5.1.2.1 to the file it creates or overwrites) and
// FileAllocationInformation (MS-FSA 2.1.5.15.1, MS-FSCC 2.4.4). Only the
// asked allocation is stored (the entry's props, key "al"); the one
// reported is derived from it and the size, so the hot paths (writes,
// truncates) never touch it.

// ClusterSize is the cluster size allocation sizes are counted in: the
// 4 KiB the SMB server reports as its bytes per sector times sectors per
// allocation unit.
const ClusterSize = 4096

// blockAlign rounds n up to whole clusters (MS-FSA's BlockAlign).
func blockAlign(n int64) int64 {
	return (n + ClusterSize - 1) &^ (ClusterSize - 1)
}

// Allocated is the allocation size reported for a file: the size rounded
// up to whole clusters, or the allocation set apart from it when that is
// larger (MS-FSA 2.1.5.15.1: the end of file never passes the allocation,
// and a write or an extension past it grows it, 2.1.5.3, 2.1.5.15.4).
// A directory reports none.
func (a Attr) Allocated() int64 {
	if a.Kind.IsDir() {
		return 0
	}
	return max(a.AllocationSize, blockAlign(a.Size))
}

// allocationCut checks a SetattrRequest's AllocationSize and, when it is
// below the file's size, adds the truncation to it (MS-FSA 2.1.5.15.1:
// "If Open.Stream.Size is greater than InputBuffer.AllocationSize", the
// size becomes the allocation; FILE_ALLOCATION_INFO: "If the allocation
// size is set to a value that is less than EOF, the EOF position is
// automatically adjusted to match"). The size is read after the
// handles' staged writes are committed, so a write answered before this
// call is cut too.
func (fsys *FileSystem) allocationCut(ctx context.Context, id FileID, req SetattrRequest) (SetattrRequest, error) {
	n := *req.AllocationSize
	if n < 0 {
		return req, ErrInvalidRange
	}
	if err := fsys.flushFile(ctx, id, req.Handle); err != nil {
		return req, err
	}
	a, err := fsys.getAttr(ctx, id)
	if err != nil {
		return req, err
	}
	if a.Kind.IsDir() {
		return req, ErrIsDir
	}
	if req.Size == nil && a.Size > n {
		req.Size = &n
	}
	return req, nil
}
