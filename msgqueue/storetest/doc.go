// Package storetest is the conformance suite of msgqueue.Store: every
// store (sqlstore, pgstore) runs Run with an Opener that gives each test a
// fresh database. The suite drives the store through msgqueue.Service
// with an injected clock, so it checks what clients see — visibility and
// TTL edges to the millisecond, which pop receipts delete and update,
// peeks, bounds, listing, Clear and Delete Queue while workers poll, a get
// that waited behind a put, and a close and reopen — on that store.
// These sentences were msgqueue's own tests over SQLite; they moved here
// unchanged in what they assert so that every store runs them.
//
// A store whose times come from the database rather than the caller
// (pgstore's default) cannot follow an injected clock: it runs the suite
// in its caller-clock mode and tests the database clock on its own.
package storetest
