package tablesvc

import (
	"errors"
	"fmt"
)

// Sentinels of the Table service's outcomes, wrapped with the table or key
// they concern; match them with errors.Is.
var (
	// ErrTableNotFound: a table-addressed operation on a missing table
	// (404 TableNotFound; the front end answers ResourceNotFound for
	// Delete Table).
	ErrTableNotFound = errors.New("table not found")
	// ErrTableExists: Create Table of an existing name, any case (409
	// TableAlreadyExists).
	ErrTableExists = errors.New("table already exists")
	// ErrEntityNotFound: no entity with these keys (404 ResourceNotFound).
	ErrEntityNotFound = errors.New("entity not found")
	// ErrEntityExists: Insert of an existing entity (409
	// EntityAlreadyExists).
	ErrEntityExists = errors.New("entity already exists")
	// ErrConditionNotMet: If-Match named an ETag the entity no longer (or
	// never) had (412 UpdateConditionNotSatisfied).
	ErrConditionNotMet = errors.New("update condition not satisfied")
)

// InputError is a client mistake the service detects; Code is Azure's
// error code (InvalidInput, OutOfRangeInput, InvalidResourceName,
// PropertiesNeedValue, PropertyValueTooLarge, TooManyProperties,
// EntityTooLarge, PropertyNameTooLong, PropertyNameInvalid,
// DuplicatePropertiesSpecified, InvalidDuplicateRow,
// CommandsInBatchActOnDifferentPartitions, InvalidXmlDocument, ...). All
// are HTTP 400; the front end renders Code and Message.
type InputError struct{ Code, Message string }

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

func inputErr(code, format string, args ...any) *InputError {
	return &InputError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// BatchError says which operation of a batch failed (0-based) and why;
// nothing of the batch was applied.
type BatchError struct {
	Index int
	Err   error // one of the errors above
}

func (e *BatchError) Error() string { return fmt.Sprintf("batch operation %d: %v", e.Index, e.Err) }

// Unwrap returns the operation's error.
func (e *BatchError) Unwrap() error { return e.Err }
