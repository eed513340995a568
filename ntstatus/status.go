package ntstatus

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/locks"
)

// Status is an NTSTATUS value (MS-ERREF 2.3).
type Status uint32

// The codes blobshare answers with.
const (
	Success                  Status = 0x00000000
	Pending                  Status = 0x00000103
	NotifyCleanup            Status = 0x0000010B
	NotifyEnumDir            Status = 0x0000010C
	BufferOverflow           Status = 0x80000005
	NoMoreFiles              Status = 0x80000006
	Unsuccessful             Status = 0xC0000001
	NotImplemented           Status = 0xC0000002
	InvalidInfoClass         Status = 0xC0000003
	InfoLengthMismatch       Status = 0xC0000004
	InvalidHandle            Status = 0xC0000008
	InvalidParameter         Status = 0xC000000D
	NoSuchFile               Status = 0xC000000F
	InvalidDeviceRequest     Status = 0xC0000010
	EndOfFile                Status = 0xC0000011
	MoreProcessingRequired   Status = 0xC0000016
	AccessDenied             Status = 0xC0000022
	BufferTooSmall           Status = 0xC0000023
	ObjectNameInvalid        Status = 0xC0000033
	ObjectNameNotFound       Status = 0xC0000034
	ObjectNameCollision      Status = 0xC0000035
	ObjectPathInvalid        Status = 0xC0000039
	ObjectPathNotFound       Status = 0xC000003A
	ObjectPathSyntaxBad      Status = 0xC000003B
	SharingViolation         Status = 0xC0000043
	DeletePending            Status = 0xC0000056
	PrivilegeNotHeld         Status = 0xC0000061
	LogonFailure             Status = 0xC000006D
	DiskFull                 Status = 0xC000007F
	RangeNotLocked           Status = 0xC000007E
	FileLockConflict         Status = 0xC0000054
	LockNotGranted           Status = 0xC0000055
	InsufficientResources    Status = 0xC000009A
	FileIsADirectory         Status = 0xC00000BA
	NotSupported             Status = 0xC00000BB
	NetworkNameDeleted       Status = 0xC00000C9
	BadNetworkName           Status = 0xC00000CC
	RequestNotAccepted       Status = 0xC00000D0
	DirectoryNotEmpty        Status = 0xC0000101
	NotADirectory            Status = 0xC0000103
	Cancelled                Status = 0xC0000120
	CannotDelete             Status = 0xC0000121
	FileClosed               Status = 0xC0000128
	UserSessionDeleted       Status = 0xC0000203
	FSDriverRequired         Status = 0xC000019C
	InvalidLockRange         Status = 0xC00001A1
	TooManyOpenedFiles       Status = 0xC000011F
	NotSameDevice            Status = 0xC00000D4
	NetworkSessionExpired    Status = 0xC000035C
	InvalidNetworkResponse   Status = 0xC00000C3
	FileNotAvailable         Status = 0xC0000467
	NameTooLong              Status = 0xC0000106
	StoppedOnSymlink         Status = 0x8000002D
	InvalidDeviceState       Status = 0xC0000184
	InsufficientQuota        Status = 0xC0000044
	ObjectTypeMismatch       Status = 0xC0000024
	IOTimeout                Status = 0xC00000B5
	NotFound                 Status = 0xC0000225
	FileSystemLimitation     Status = 0xC0000427
	InvalidSecurityDescr     Status = 0xC0000079
	BadImpersonationLevel    Status = 0xC00000A5
	NoMoreEAs                Status = 0x80000012
	InvalidEAName            Status = 0x80000013
	EAListInconsistent       Status = 0x80000014
	NonexistentEAEntry       Status = 0x80000015
	EATooLarge               Status = 0xC0000050
	NoEAsOnFile              Status = 0xC0000052
	ShareAccessDeniedUnknown Status = 0xC0000201 // STATUS_NETWORK_ACCESS_DENIED
)

var names = map[Status]string{
	Success:                  "STATUS_SUCCESS",
	Pending:                  "STATUS_PENDING",
	NotifyCleanup:            "STATUS_NOTIFY_CLEANUP",
	NotifyEnumDir:            "STATUS_NOTIFY_ENUM_DIR",
	BufferOverflow:           "STATUS_BUFFER_OVERFLOW",
	NoMoreFiles:              "STATUS_NO_MORE_FILES",
	Unsuccessful:             "STATUS_UNSUCCESSFUL",
	NotImplemented:           "STATUS_NOT_IMPLEMENTED",
	InvalidInfoClass:         "STATUS_INVALID_INFO_CLASS",
	InfoLengthMismatch:       "STATUS_INFO_LENGTH_MISMATCH",
	InvalidHandle:            "STATUS_INVALID_HANDLE",
	InvalidParameter:         "STATUS_INVALID_PARAMETER",
	NoSuchFile:               "STATUS_NO_SUCH_FILE",
	InvalidDeviceRequest:     "STATUS_INVALID_DEVICE_REQUEST",
	EndOfFile:                "STATUS_END_OF_FILE",
	MoreProcessingRequired:   "STATUS_MORE_PROCESSING_REQUIRED",
	AccessDenied:             "STATUS_ACCESS_DENIED",
	BufferTooSmall:           "STATUS_BUFFER_TOO_SMALL",
	ObjectNameInvalid:        "STATUS_OBJECT_NAME_INVALID",
	ObjectNameNotFound:       "STATUS_OBJECT_NAME_NOT_FOUND",
	ObjectNameCollision:      "STATUS_OBJECT_NAME_COLLISION",
	ObjectPathInvalid:        "STATUS_OBJECT_PATH_INVALID",
	ObjectPathNotFound:       "STATUS_OBJECT_PATH_NOT_FOUND",
	ObjectPathSyntaxBad:      "STATUS_OBJECT_PATH_SYNTAX_BAD",
	SharingViolation:         "STATUS_SHARING_VIOLATION",
	DeletePending:            "STATUS_DELETE_PENDING",
	PrivilegeNotHeld:         "STATUS_PRIVILEGE_NOT_HELD",
	LogonFailure:             "STATUS_LOGON_FAILURE",
	DiskFull:                 "STATUS_DISK_FULL",
	RangeNotLocked:           "STATUS_RANGE_NOT_LOCKED",
	FileLockConflict:         "STATUS_FILE_LOCK_CONFLICT",
	LockNotGranted:           "STATUS_LOCK_NOT_GRANTED",
	InsufficientResources:    "STATUS_INSUFFICIENT_RESOURCES",
	FileIsADirectory:         "STATUS_FILE_IS_A_DIRECTORY",
	NotSupported:             "STATUS_NOT_SUPPORTED",
	NetworkNameDeleted:       "STATUS_NETWORK_NAME_DELETED",
	BadNetworkName:           "STATUS_BAD_NETWORK_NAME",
	RequestNotAccepted:       "STATUS_REQUEST_NOT_ACCEPTED",
	DirectoryNotEmpty:        "STATUS_DIRECTORY_NOT_EMPTY",
	NotADirectory:            "STATUS_NOT_A_DIRECTORY",
	Cancelled:                "STATUS_CANCELLED",
	CannotDelete:             "STATUS_CANNOT_DELETE",
	FileClosed:               "STATUS_FILE_CLOSED",
	UserSessionDeleted:       "STATUS_USER_SESSION_DELETED",
	FSDriverRequired:         "STATUS_FS_DRIVER_REQUIRED",
	InvalidLockRange:         "STATUS_INVALID_LOCK_RANGE",
	TooManyOpenedFiles:       "STATUS_TOO_MANY_OPENED_FILES",
	NotSameDevice:            "STATUS_NOT_SAME_DEVICE",
	NetworkSessionExpired:    "STATUS_NETWORK_SESSION_EXPIRED",
	InvalidNetworkResponse:   "STATUS_INVALID_NETWORK_RESPONSE",
	FileNotAvailable:         "STATUS_FILE_NOT_AVAILABLE",
	NameTooLong:              "STATUS_NAME_TOO_LONG",
	StoppedOnSymlink:         "STATUS_STOPPED_ON_SYMLINK",
	InvalidDeviceState:       "STATUS_INVALID_DEVICE_STATE",
	InsufficientQuota:        "STATUS_QUOTA_EXCEEDED",
	ObjectTypeMismatch:       "STATUS_OBJECT_TYPE_MISMATCH",
	IOTimeout:                "STATUS_IO_TIMEOUT",
	NotFound:                 "STATUS_NOT_FOUND",
	FileSystemLimitation:     "STATUS_FILE_SYSTEM_LIMITATION",
	InvalidSecurityDescr:     "STATUS_INVALID_SECURITY_DESCR",
	BadImpersonationLevel:    "STATUS_BAD_IMPERSONATION_LEVEL",
	NoMoreEAs:                "STATUS_NO_MORE_EAS",
	InvalidEAName:            "STATUS_INVALID_EA_NAME",
	EAListInconsistent:       "STATUS_EA_LIST_INCONSISTENT",
	NonexistentEAEntry:       "STATUS_NONEXISTENT_EA_ENTRY",
	EATooLarge:               "STATUS_EA_TOO_LARGE",
	NoEAsOnFile:              "STATUS_NO_EAS_ON_FILE",
	ShareAccessDeniedUnknown: "STATUS_NETWORK_ACCESS_DENIED",
}

// String is the status's symbolic name (STATUS_SHARING_VIOLATION), or its
// hexadecimal value when it has none here.
func (s Status) String() string {
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("0x%08X", uint32(s))
}

// IsError reports whether s is an error status (severity bits 11).
func (s Status) IsError() bool { return s>>30 == 3 }

// FromError maps an error of fs or locks (or nil) to the NT status an SMB
// client gets: the one table of these outcomes. Unknown errors are
// STATUS_UNSUCCESSFUL. The order matters where an error matches several
// sentinels (an fs.Error wrapping a locks outcome).
func FromError(err error) Status {
	var le *locks.LeaseError
	switch {
	case err == nil:
		return Success
	case errors.Is(err, locks.ErrInvalidParameter), errors.Is(err, fs.ErrInvalidArg), errors.Is(err, fs.ErrInvalidRange):
		return InvalidParameter
	case errors.Is(err, locks.ErrSharingViolation), errors.As(err, &le):
		return SharingViolation // an SMB open against a lease is a sharing violation (locking.md §4.4)
	case errors.Is(err, locks.ErrDeletePending):
		return DeletePending
	case errors.Is(err, locks.ErrLockConflict):
		return FileLockConflict
	case errors.Is(err, locks.ErrLockNotGranted):
		return LockNotGranted
	case errors.Is(err, locks.ErrRangeNotLocked):
		return RangeNotLocked
	case errors.Is(err, locks.ErrInvalidLockRange):
		return InvalidLockRange
	case errors.Is(err, locks.ErrCannotDelete):
		return CannotDelete
	case errors.Is(err, locks.ErrAccessDenied), errors.Is(err, locks.ErrReadOnly):
		return AccessDenied
	case errors.Is(err, locks.ErrDirectoryNotEmpty):
		return DirectoryNotEmpty
	case errors.Is(err, locks.ErrHandleLimit):
		return TooManyOpenedFiles
	case errors.Is(err, locks.ErrHandleClosed), errors.Is(err, fs.ErrStaleHandle):
		return FileClosed
	case errors.Is(err, fs.ErrParentNotFound):
		return ObjectPathNotFound
	case errors.Is(err, fs.ErrShareNotFound):
		return BadNetworkName
	case errors.Is(err, fs.ErrNotFound):
		return ObjectNameNotFound
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrShareExist):
		return ObjectNameCollision
	case errors.Is(err, fs.ErrIsDir):
		return FileIsADirectory
	case errors.Is(err, fs.ErrNotDir):
		return NotADirectory
	case errors.Is(err, fs.ErrInvalidName):
		return ObjectNameInvalid
	case errors.Is(err, fs.ErrCrossShare):
		return NotSameDevice
	case errors.Is(err, fs.ErrNotSupported):
		return NotSupported
	case errors.Is(err, fs.ErrInvalidEAName):
		return InvalidEAName
	case errors.Is(err, fs.ErrEATooLarge):
		return EATooLarge
	case errors.Is(err, io.EOF):
		return EndOfFile
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Cancelled
	}
	return Unsuccessful
}
