// Package dberr holds the classes of database failures that the metadata
// stores' drivers are classified into (internal/pgdb for PostgreSQL), so
// that a front end answers them — without knowing the driver — as a
// failure of the server, never of the request.
package dberr

import "errors"

// ErrUnavailable: the database could not be reached, refused the
// connection, or dropped it (a restart, a failover, a network cut). What
// the request asked may or may not have been applied if the failure came
// at its commit; a client may retry. Front ends answer 503 ServerBusy.
var ErrUnavailable = errors.New("database unavailable")
