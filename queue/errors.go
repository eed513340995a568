package queue

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/blobshare/blobshare/msgqueue"
	"github.com/blobshare/blobshare/storagehttp"
)

// Error codes of the Queue service.
const (
	CodeQueueNotFound      = "QueueNotFound"
	CodeQueueAlreadyExists = "QueueAlreadyExists"
	CodeMessageNotFound    = "MessageNotFound"
)

// queueErrors is the Queue service's error table (msgqueue's sentinels).
var queueErrors = []storagehttp.Mapping{
	{Target: msgqueue.ErrQueueNotFound, Status: http.StatusNotFound, Code: CodeQueueNotFound, Message: "The specified queue does not exist."},
	{Target: msgqueue.ErrMessageNotFound, Status: http.StatusNotFound, Code: CodeMessageNotFound, Message: "The specified message does not exist."},
	{Target: msgqueue.ErrQueueExists, Status: http.StatusConflict, Code: CodeQueueAlreadyExists, Message: "The specified queue already exists."},
	{Target: msgqueue.ErrInvalidName, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidResourceName, Message: "The specified resource name contains invalid characters."},
	{Target: msgqueue.ErrNameLength, Status: http.StatusBadRequest, Code: storagehttp.CodeOutOfRangeInput, Message: "The specified resource name length is not within the permissible limits."},
	{Target: msgqueue.ErrInvalidACL, Status: http.StatusBadRequest, Code: storagehttp.CodeInvalidXMLDocument, Message: "XML specified is not syntactically valid."},
}

// toError maps any error to its reply: storagehttp.Classify with
// queueErrorsOf.
func toError(err error) *storagehttp.Error { return storagehttp.Classify(err, queueErrorsOf) }

// queueErrorsOf maps msgqueue's outcomes: the sentinel table, a too large
// message → 413 RequestBodyTooLarge (MaxLimit 65536), a bound crossed →
// 400 OutOfRangeQueryParameterValue, a parameter refused with the others
// → 400 InvalidQueryParameterValue.
func queueErrorsOf(err error) *storagehttp.Error {
	if errors.Is(err, msgqueue.ErrMessageTooLarge) {
		return &storagehttp.Error{Status: http.StatusRequestEntityTooLarge, Code: storagehttp.CodeRequestBodyTooLarge,
			Message: "The request body is too large and exceeds the maximum permissible limit.",
			Details: []storagehttp.Detail{{Name: "MaxLimit", Value: strconv.Itoa(msgqueue.MaxMessageBytes)}}, Err: err}
	}
	var re *msgqueue.RangeError
	if errors.As(err, &re) {
		return storagehttp.OutOfRangeQuery(re.Param, strconv.FormatInt(re.Value, 10), re.Min, re.Max)
	}
	var pe *msgqueue.ParamError
	if errors.As(err, &pe) {
		return storagehttp.InvalidQuery(pe.Param, strconv.FormatInt(pe.Value, 10), pe.Reason)
	}
	return storagehttp.MatchTable(err, queueErrors)
}
