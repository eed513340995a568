package filerest

import (
	"net/http"

	"github.com/blobshare/blobshare/fs"

	"github.com/blobshare/blobshare/storagehttp"
)

// fsErrors maps the namespace's sentinels (fs/errors.go) to Azure answers
// (filerest.md §7). toError tries lockErrors first, then these, in order.
var fsErrors = []storagehttp.Mapping{
	{Target: fs.ErrSnapshotNotFound, Status: http.StatusNotFound, Code: "ShareSnapshotNotFound", Message: "The specified share snapshot does not exist."},
	{Target: fs.ErrFileGeneration, Status: http.StatusConflict, Code: "FileGenerationMismatch", Message: "The file has been recreated since the previous snapshot was taken."},
	{Target: fs.ErrFileRenamed, Status: http.StatusConflict, Code: "PreviousSnapshotNotFound", Message: "The previous snapshot is not found."},
	{Target: fs.ErrSnapshotLeased, Status: http.StatusConflict, Code: "DeleteShareWhenSnapshotLeased", Message: "Unable to delete share because one or more share snapshots have active leases."},
	{Target: fs.ErrShareHasSnapshots, Status: http.StatusConflict, Code: "ShareHasSnapshots", Message: "The share has snapshots and the operation requires no snapshots."},
	{Target: fs.ErrShareNotFound, Status: http.StatusNotFound, Code: CodeShareNotFound, Message: "The specified share does not exist."},
	{Target: fs.ErrParentNotFound, Status: http.StatusNotFound, Code: CodeParentNotFound, Message: "The specified parent path does not exist."},
	{Target: fs.ErrNotFound, Status: http.StatusNotFound, Code: CodeResourceNotFound, Message: "The specified resource does not exist."},
	{Target: fs.ErrStaleHandle, Status: http.StatusNotFound, Code: CodeResourceNotFound, Message: "The specified resource does not exist."},
	{Target: fs.ErrShareExist, Status: http.StatusConflict, Code: CodeShareAlreadyExists, Message: "The specified share already exists."},
	{Target: fs.ErrExist, Status: http.StatusConflict, Code: CodeResourceAlreadyExists, Message: "The specified resource already exists."},
	{Target: fs.ErrIsDir, Status: http.StatusConflict, Code: CodeResourceTypeMismatch, Message: "The specified resource type does not match the type of the existing resource (it is a directory)."},
	{Target: fs.ErrNotDir, Status: http.StatusConflict, Code: CodeResourceTypeMismatch, Message: "The specified resource type does not match the type of the existing resource (it is a file)."},
	{Target: fs.ErrNameTooLong, Status: http.StatusBadRequest, Code: CodeInvalidPathName, Message: "The specified resource name length is not within the permissible limits."},
	{Target: fs.ErrInvalidName, Status: http.StatusBadRequest, Code: CodeInvalidPathName, Message: "The specified resource name contains invalid characters."},
	{Target: fs.ErrInvalidRange, Status: http.StatusRequestedRangeNotSatisfiable, Code: CodeInvalidRange, Message: "The range specified is invalid for the current size of the resource."},
	{Target: fs.ErrCrossShare, Status: http.StatusBadRequest, Code: CodeInvalidInput, Message: "The source and the destination must be in the same share."},
	{Target: fs.ErrNotSupported, Status: http.StatusBadRequest, Code: "UnsupportedOperation", Message: "The operation is not supported."},
	{Target: fs.ErrPermissionKeyNotFound, Status: http.StatusBadRequest, Code: "FileInvalidPermissionKey", Message: "The specified file permission key does not exist in the share."},
	{Target: fs.ErrInvalidArg, Status: http.StatusBadRequest, Code: CodeInvalidInput, Message: "One of the request inputs is not valid."},
}
