package fusefs

import (
	"syscall"

	"github.com/blobshare/blobshare/fs"
)

// coreRules maps the sentinels of package fs to errno. ErrNameTooLong comes
// before ErrInvalidName, which it also matches.
func coreRules() []errnoRule {
	return []errnoRule{
		{fs.ErrNotFound, syscall.ENOENT},       // STATUS_OBJECT_NAME_NOT_FOUND → -ENOENT
		{fs.ErrParentNotFound, syscall.ENOENT}, // STATUS_OBJECT_PATH_NOT_FOUND → -ENOENT
		{fs.ErrShareNotFound, syscall.ENOENT},  // STATUS_BAD_NETWORK_NAME → -ENOENT
		{fs.ErrExist, syscall.EEXIST},          // STATUS_OBJECT_NAME_COLLISION → -EEXIST
		{fs.ErrShareExist, syscall.EEXIST},
		{fs.ErrIsDir, syscall.EISDIR},             // STATUS_FILE_IS_A_DIRECTORY → -EISDIR
		{fs.ErrNotDir, syscall.ENOTDIR},           // STATUS_NOT_A_DIRECTORY → -ENOTDIR
		{fs.ErrNameTooLong, syscall.ENAMETOOLONG}, // STATUS_NAME_TOO_LONG → -ENAMETOOLONG
		{fs.ErrInvalidName, syscall.EINVAL},       // STATUS_OBJECT_NAME_INVALID (-ENOENT in the kernel; EINVAL says why)
		{fs.ErrInvalidRange, syscall.EINVAL},
		{fs.ErrInvalidArg, syscall.EINVAL},       // STATUS_INVALID_PARAMETER → -EINVAL
		{fs.ErrCrossShare, syscall.EXDEV},        // STATUS_NOT_SAME_DEVICE → -EXDEV
		{fs.ErrNotSupported, syscall.EOPNOTSUPP}, // STATUS_NOT_SUPPORTED → -EOPNOTSUPP
		{fs.ErrStaleHandle, syscall.ESTALE},
	}
}
