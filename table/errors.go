package table

import (
	"errors"
	"net/http"

	"github.com/blobshare/blobshare/storagehttp"
	"github.com/blobshare/blobshare/tablesvc"
)

// Error codes of the Table service (table-service-error-codes).
const (
	CodeTableNotFound          = "TableNotFound"
	CodeTableAlreadyExists     = "TableAlreadyExists"
	CodeResourceNotFound       = "ResourceNotFound"
	CodeEntityAlreadyExists    = "EntityAlreadyExists"
	CodeUpdateConditionNotMet  = "UpdateConditionNotSatisfied"
	CodeXMethodNotUsingPost    = "XMethodNotUsingPost"
	CodeXMethodIncorrectCount  = "XMethodIncorrectCount"
	CodeXMethodIncorrectValue  = "XMethodIncorrectValue"
	CodeAtomFormatNotSupported = "AtomFormatNotSupported"
)

// tableErrors is the Table service's error table (tablesvc's sentinels).
var tableErrors = []storagehttp.Mapping{
	{Target: tablesvc.ErrTableNotFound, Status: http.StatusNotFound, Code: CodeTableNotFound, Message: "The table specified does not exist."},
	{Target: tablesvc.ErrTableExists, Status: http.StatusConflict, Code: CodeTableAlreadyExists, Message: "The table specified already exists."},
	{Target: tablesvc.ErrEntityNotFound, Status: http.StatusNotFound, Code: CodeResourceNotFound, Message: "The specified resource does not exist."},
	{Target: tablesvc.ErrEntityExists, Status: http.StatusConflict, Code: CodeEntityAlreadyExists, Message: "The specified entity already exists."},
	{Target: tablesvc.ErrConditionNotMet, Status: http.StatusPreconditionFailed, Code: CodeUpdateConditionNotMet, Message: "The update condition specified in the request was not satisfied."},
}

// toError maps any error to its reply: storagehttp.Classify with
// tableErrorsOf.
func toError(err error) *storagehttp.Error { return storagehttp.Classify(err, tableErrorsOf) }

// tableErrorsOf maps tablesvc's outcomes: an *InputError is 400 with its
// code and message, the sentinels by the table.
func tableErrorsOf(err error) *storagehttp.Error {
	var ie *tablesvc.InputError
	if errors.As(err, &ie) {
		return &storagehttp.Error{Status: http.StatusBadRequest, Code: ie.Code, Message: ie.Message, Err: err}
	}
	return storagehttp.MatchTable(err, tableErrors)
}

// errResourceNotFound is Delete Table's answer for a missing table.
func errResourceNotFound(err error) *storagehttp.Error {
	return &storagehttp.Error{Status: http.StatusNotFound, Code: CodeResourceNotFound, Message: "The specified resource does not exist.", Err: err}
}

func errAuthorizationFailure() *storagehttp.Error {
	return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationFailure,
		"This request is not authorized to perform this operation.")
}

func errPermission() *storagehttp.Error {
	return storagehttp.NewError(http.StatusForbidden, storagehttp.CodeAuthorizationPermissionMismatch,
		"This request is not authorized to perform this operation using this permission.")
}
