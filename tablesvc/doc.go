// Package tablesvc is the Azure Table service's semantics, apart from
// HTTP: tables, entities with ETags and mandatory optimistic concurrency,
// the $filter language, validation and limits, and entity group
// transactions. Package table is its HTTP front end; sqlstore its SQLite
// store.
package tablesvc
