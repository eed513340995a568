package rest

import (
	"net/http"

	"github.com/blobshare/blobshare/fs"
)

// fsErrors maps the namespace's sentinels (fs/errors.go) to Azure answers
// (filerest.md §7). toError tries lockErrors first, then these, in order.
var fsErrors = []mapping{
	{fs.ErrShareNotFound, http.StatusNotFound, CodeShareNotFound, "The specified share does not exist."},
	{fs.ErrParentNotFound, http.StatusNotFound, CodeParentNotFound, "The specified parent path does not exist."},
	{fs.ErrNotFound, http.StatusNotFound, CodeResourceNotFound, "The specified resource does not exist."},
	{fs.ErrStaleHandle, http.StatusNotFound, CodeResourceNotFound, "The specified resource does not exist."},
	{fs.ErrShareExist, http.StatusConflict, CodeShareAlreadyExists, "The specified share already exists."},
	{fs.ErrExist, http.StatusConflict, CodeResourceAlreadyExists, "The specified resource already exists."},
	{fs.ErrIsDir, http.StatusConflict, CodeResourceTypeMismatch, "The specified resource type does not match the type of the existing resource (it is a directory)."},
	{fs.ErrNotDir, http.StatusConflict, CodeResourceTypeMismatch, "The specified resource type does not match the type of the existing resource (it is a file)."},
	{fs.ErrNameTooLong, http.StatusBadRequest, CodeInvalidPathName, "The specified resource name length is not within the permissible limits."},
	{fs.ErrInvalidName, http.StatusBadRequest, CodeInvalidPathName, "The specified resource name contains invalid characters."},
	{fs.ErrInvalidRange, http.StatusRequestedRangeNotSatisfiable, CodeInvalidRange, "The range specified is invalid for the current size of the resource."},
	{fs.ErrCrossShare, http.StatusBadRequest, CodeInvalidInput, "The source and the destination must be in the same share."},
	{fs.ErrNotSupported, http.StatusBadRequest, "UnsupportedOperation", "The operation is not supported."},
	{fs.ErrInvalidArg, http.StatusBadRequest, CodeInvalidInput, "One of the request inputs is not valid."},
}
