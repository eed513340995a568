package blob

import (
	"errors"
	"net/http"

	"github.com/blobshare/blobshare/blobsvc"
	"github.com/blobshare/blobshare/lease"
	"github.com/blobshare/blobshare/storagehttp"
)

// blobErrors is the Blob service's error table for blob operations
// (blobsvc's sentinels).
var blobErrors = []storagehttp.Mapping{
	{Target: blobsvc.ErrContainerNotFound, Status: http.StatusNotFound, Code: "ContainerNotFound", Message: "The specified container does not exist."},
	{Target: blobsvc.ErrSystemContainer, Status: http.StatusForbidden, Code: "AuthorizationFailure", Message: "This request is not authorized to perform this operation."},
	{Target: blobsvc.ErrContainerExists, Status: http.StatusConflict, Code: "ContainerAlreadyExists", Message: "The specified container already exists."},
	{Target: blobsvc.ErrBlobNotFound, Status: http.StatusNotFound, Code: "BlobNotFound", Message: "The specified blob does not exist."},
	{Target: blobsvc.ErrInvalidContainerName, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidResourceName, Message: "The specified resource name contains invalid characters."},
	{Target: blobsvc.ErrInvalidBlobName, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidResourceName, Message: "The specified resource name contains invalid characters."},
	{Target: blobsvc.ErrInvalidBlockID, Status: http.StatusBadRequest, Code: "InvalidBlockId", Message: "The specified block ID is invalid. The block ID must be Base64-encoded."},
	{Target: blobsvc.ErrInvalidBlockList, Status: http.StatusBadRequest, Code: "InvalidBlockList", Message: "The specified block list is invalid."},
	{Target: blobsvc.ErrConditionNotMet, Status: http.StatusPreconditionFailed, Code: "ConditionNotMet", Message: "The condition specified using HTTP conditional header(s) is not met."},
	{Target: blobsvc.ErrSourceConditionNotMet, Status: http.StatusPreconditionFailed, Code: "SourceConditionNotMet", Message: "The source condition specified using HTTP conditional header(s) is not met."},
	{Target: blobsvc.ErrMultipleConditions, Status: http.StatusBadRequest, Code: "MultipleConditionHeadersNotSupported", Message: "Multiple condition headers are not supported."},
	{Target: blobsvc.ErrUnsatisfiableCondition, Status: http.StatusBadRequest, Code: "UnsatisfiableCondition", Message: "The request includes an unsatisfiable condition for this operation."},
	{Target: blobsvc.ErrBlobExists, Status: http.StatusConflict, Code: "BlobAlreadyExists", Message: "The specified blob already exists."},
	{Target: blobsvc.ErrBlockIDLength, Status: http.StatusBadRequest, Code: "InvalidBlobOrBlock", Message: "The specified blob or block content is invalid."},
	{Target: blobsvc.ErrSnapshotsPresent, Status: http.StatusConflict, Code: "SnapshotsPresent", Message: "This operation is not permitted because the blob has snapshots."},
	{Target: blobsvc.ErrInvalidDeleteSnapshots, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidHeaderValue, Message: "The value for one of the HTTP headers is not in the correct format."},
	{Target: blobsvc.ErrInvalidSnapshot, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidQueryParameterValue, Message: "Value for one of the query parameters specified in the request URI is invalid."},
	{Target: blobsvc.ErrInvalidBlobType, Status: http.StatusConflict, Code: "InvalidBlobType", Message: "The blob type is invalid for this operation."},
	{Target: blobsvc.ErrMaxSizeCondition, Status: http.StatusPreconditionFailed, Code: "MaxBlobSizeConditionNotMet", Message: "The max blob size condition specified was not met."},
	{Target: blobsvc.ErrAppendPosCondition, Status: http.StatusPreconditionFailed, Code: "AppendPositionConditionNotMet", Message: "The append position condition specified was not met."},
	{Target: blobsvc.ErrBlockCountExceeded, Status: http.StatusConflict, Code: "BlockCountExceedsLimit", Message: "The committed block count cannot exceed the maximum limit of 50,000 blocks."},
	{Target: blobsvc.ErrInvalidACL, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidXMLDocument, Message: "XML specified is not syntactically valid."},
	{Target: blobsvc.ErrInvalidTag, Status: http.StatusBadRequest, Code: "InvalidTag", Message: "The tags specified are invalid. It contains characters that are not permitted."},
	{Target: blobsvc.ErrInvalidPageRange, Status: http.StatusRequestedRangeNotSatisfiable, Code: "InvalidPageRange", Message: "The page range specified is invalid."},
	{Target: blobsvc.ErrInvalidPageBlobLength, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidHeaderValue, Message: "The value for one of the HTTP headers is not in the correct format."},
	{Target: blobsvc.ErrSequenceNumberCondition, Status: http.StatusPreconditionFailed, Code: "SequenceNumberConditionNotMet", Message: "The sequence number condition specified was not met."},
	{Target: blobsvc.ErrBlobSealed, Status: http.StatusConflict, Code: "BlobIsSealed", Message: "The blob is sealed and its contents cannot be modified."},
	{Target: blobsvc.ErrPreviousSnapshotNotFound, Status: http.StatusConflict, Code: "PreviousSnapshotNotFound", Message: "The previous snapshot is not found."},
	{Target: blobsvc.ErrBlobOverwritten, Status: http.StatusConflict, Code: "BlobOverwritten", Message: "The blob has been recreated since the previous snapshot was taken."},
	{Target: blobsvc.ErrPermanentDelete, Status: http.StatusConflict, Code: "OperationNotAllowedInCurrentState", Message: "The operation is not allowed in the current state."},
	{Target: blobsvc.ErrInvalidTier, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidHeaderValue, Message: "The value for one of the HTTP headers is not in the correct format."},
	{Target: blobsvc.ErrCPKRequired, Status: http.StatusConflict, Code: "BlobUsesCustomerSpecifiedEncryption", Message: msgCPKRequired},
	{Target: blobsvc.ErrCPKMismatch, Status: http.StatusConflict, Code: "BlobCustomerSpecifiedEncryptionMismatch", Message: msgCPKMismatch},
	{Target: blobsvc.ErrCPKNotUsed, Status: http.StatusConflict, Code: "BlobDoesNotUseCustomerSpecifiedEncryption", Message: msgCPKNotUsed},
	{Target: blobsvc.ErrBlobArchived, Status: http.StatusConflict, Code: "BlobArchived", Message: "This operation is not permitted on an archived blob."},
	{Target: blobsvc.ErrIncrementalCopySource, Status: http.StatusConflict, Code: "IncrementalCopySourceMustBeSnapshot", Message: "The source for incremental copy request must be a snapshot."},
	{Target: blobsvc.ErrIncrementalCopyBlobMismatch, Status: http.StatusConflict, Code: "IncrementalCopyBlobMismatch", Message: "The specified source blob is different than the copy source of the destination blob."},
	{Target: blobsvc.ErrIncrementalCopyOfEarlierSnapshot, Status: http.StatusConflict, Code: "IncrementalCopyOfEarlierSnapshotNotAllowed", Message: "The specified snapshot is earlier than the last snapshot copied into the incremental copy blob."},
	{Target: blobsvc.ErrIncrementalCopyBlob, Status: http.StatusConflict, Code: "OperationNotAllowedOnIncrementalCopyBlob", Message: "The specified operation is not allowed on an incremental copy blob."},
	{Target: blobsvc.ErrPendingCopy, Status: http.StatusConflict, Code: "PendingCopyOperation", Message: "There is currently a pending copy operation."},
	{Target: blobsvc.ErrBlobBeingRehydrated, Status: http.StatusConflict, Code: "BlobBeingRehydrated", Message: "This operation is not permitted because the blob is being rehydrated."},
	{Target: blobsvc.ErrInvalidRehydratePriority, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidHeaderValue, Message: "The value for one of the HTTP headers is not in the correct format."},
	{Target: blobsvc.ErrAccessTierConditionNotMet, Status: http.StatusPreconditionFailed, Code: "AccessTierChangeTimeConditionNotMet", Message: "The access tier change time condition specified was not met."},
	{Target: blobsvc.ErrInvalidRange, Status: http.StatusRequestedRangeNotSatisfiable, Code: "InvalidRange", Message: "The range specified is invalid for the current size of the resource."},
	{Target: blobsvc.ErrMD5Mismatch, Status: http.StatusBadRequest, Code: "Md5Mismatch", Message: "The MD5 value specified in the request did not match with the MD5 value calculated by the server."},
	{Target: blobsvc.ErrServerBusy, Status: http.StatusServiceUnavailable, Code: "ServerBusy", Message: "The server is currently unable to receive requests. Please retry your request."},
}

// toError maps any error to its reply; forContainer picks the container
// wording of the lease errors (storagehttp.LeaseError).
func toError(err error, forContainer bool) *storagehttp.Error {
	return storagehttp.Classify(err, func(err error) *storagehttp.Error {
		if errors.Is(err, blobsvc.ErrInvalidTagsCondition) {
			return storagehttp.InvalidHeader("x-ms-if-tags", "")
		}
		res := lease.Blob
		if forContainer {
			res = lease.Container
		}
		if e := storagehttp.LeaseError(err, res); e != nil {
			return e
		}
		return storagehttp.MatchTable(err, blobErrors)
	})
}
