package fs

import (
	"context"
	"errors"

	"github.com/blobshare/blobshare/locks"
)

var errTODO = errors.New("fs: not implemented yet")

func (fsys *FileSystem) lookup(ctx context.Context, parent FileID, name string) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) getAttr(ctx context.Context, id FileID) (Attr, error) { return Attr{}, errTODO }

func (fsys *FileSystem) readDir(ctx context.Context, dir FileID) ([]DirEntry, error) {
	return nil, errTODO
}

func (fsys *FileSystem) create(ctx context.Context, req CreateRequest) (*Handle, Attr, error) {
	return nil, Attr{}, errTODO
}

func (fsys *FileSystem) mkdir(ctx context.Context, parent FileID, name string) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) unlink(ctx context.Context, parent FileID, name string) error { return errTODO }

func (fsys *FileSystem) rmdir(ctx context.Context, parent FileID, name string) error { return errTODO }

func (fsys *FileSystem) renameMount(ctx context.Context, req RenameRequest) error { return errTODO }

func (fsys *FileSystem) setattr(ctx context.Context, id FileID, req SetattrRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) openID(ctx context.Context, id FileID, opts OpenOptions) (*Handle, error) {
	return nil, errTODO
}

func (fsys *FileSystem) statFS(ctx context.Context) (StatFS, error) { return StatFS{}, errTODO }

func (fsys *FileSystem) openPath(ctx context.Context, req OpenPathRequest) (*Handle, Attr, error) {
	return nil, Attr{}, errTODO
}

func (fsys *FileSystem) setAttributesByPath(ctx context.Context, path string, attrs Attributes) (Attr, error) {
	return Attr{}, errTODO
}

func (h *Handle) readAt(ctx context.Context, p []byte, off int64) (int, error) { return 0, errTODO }

func (h *Handle) writeAt(ctx context.Context, p []byte, off int64) (int, error) { return 0, errTODO }

func (h *Handle) size(ctx context.Context) (int64, error) { return 0, errTODO }

func (h *Handle) flush(ctx context.Context) error { return errTODO }

func (h *Handle) close(ctx context.Context) error { return errTODO }

func (h *Handle) discard() {}

func (h *Handle) dispose(ctx context.Context, deletePending bool) error { return errTODO }

func (h *Handle) lock(ctx context.Context, r locks.Range, kind locks.LockKind) error { return errTODO }

func (h *Handle) unlock(ctx context.Context, r locks.Range) error { return errTODO }

func (h *Handle) setPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind, wait bool) error {
	return errTODO
}

func (h *Handle) getPOSIXLock(ctx context.Context, key uint64, r locks.Range, kind locks.LockKind) (locks.ByteLock, bool, error) {
	return locks.ByteLock{}, false, errTODO
}

func (h *Handle) releasePOSIXLocks(ctx context.Context, key uint64) error { return errTODO }

func (h *Handle) reshare(ctx context.Context, share locks.ShareMode, wait bool) error { return errTODO }

func (h *Handle) attr(ctx context.Context) (Attr, error) { return Attr{}, errTODO }

func (fsys *FileSystem) createShare(ctx context.Context, req ShareRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) getShare(ctx context.Context, name string) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) setShareQuota(ctx context.Context, name string, quotaGiB int) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) setShareMetadata(ctx context.Context, name string, md map[string]string) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) deleteShare(ctx context.Context, name string) error { return errTODO }

func (fsys *FileSystem) listShares(ctx context.Context, req ListRequest) (ListSharesResult, error) {
	return ListSharesResult{}, errTODO
}

func (fsys *FileSystem) createDirectory(ctx context.Context, req CreateDirectoryRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) stat(ctx context.Context, path, leaseID string) (Attr, locks.LeaseInfo, error) {
	return Attr{}, locks.LeaseInfo{}, errTODO
}

func (fsys *FileSystem) setProperties(ctx context.Context, req SetPropertiesRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) setMetadata(ctx context.Context, path string, md map[string]string, leaseID string) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) deleteDirectory(ctx context.Context, path string) error { return errTODO }

func (fsys *FileSystem) listDirectory(ctx context.Context, path string, req ListRequest) (ListResult, error) {
	return ListResult{}, errTODO
}

func (fsys *FileSystem) createFile(ctx context.Context, req CreateFileRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) putRange(ctx context.Context, req PutRangeRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) putRangeFrom(ctx context.Context, req PutRangeFromRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) getFile(ctx context.Context, req GetFileRequest) (*FileReader, error) {
	return nil, errTODO
}

func (fsys *FileSystem) deleteFile(ctx context.Context, path, leaseID string) error { return errTODO }

func (fsys *FileSystem) listRanges(ctx context.Context, path string, r locks.Range, leaseID string) ([]Range, Attr, error) {
	return nil, Attr{}, errTODO
}

func (fsys *FileSystem) copyFile(ctx context.Context, req CopyFileRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) renamePath(ctx context.Context, req RenamePathRequest) (Attr, error) {
	return Attr{}, errTODO
}

func (fsys *FileSystem) leaseFile(ctx context.Context, path string, req locks.LeaseRequest) (string, Attr, error) {
	return "", Attr{}, errTODO
}

func (fsys *FileSystem) listHandles(ctx context.Context, path string, recursive bool) ([]HandleInfo, error) {
	return nil, errTODO
}

func (fsys *FileSystem) forceCloseHandles(ctx context.Context, path string, id locks.HandleID, all, recursive bool) (int, error) {
	return 0, errTODO
}

type handleState struct {
	id     locks.HandleID
	file   FileID
	access locks.Access
	share  locks.ShareMode
}

func (fsys *FileSystem) recover(ctx context.Context) error { return nil }
func (fsys *FileSystem) collect(ctx context.Context)       {}
