// Package storagehttp is the HTTP plumbing every Azure Storage service of
// blobshare shares: FileREST (package rest), the Blob (package blob),
// Queue (package queue) and Table (package table) services. It knows the wire conventions common to
// all of them and nothing about shares, queues or blobs.
//
// # What is here (one file per concern)
//
//   - request.go: the per-request Info (x-ms-request-id, start time, the
//     authenticator's Grant) kept in the context, and the RequestID
//     middleware that sets the headers every response carries
//     (x-ms-request-id, Date, the request's x-ms-version and
//     x-ms-client-request-id echoed, Server).
//   - middleware.go: Limits (header count and size, a body cap per
//     request chosen by the service), Recover (a panic becomes 500
//     InternalError, logged with its stack), CheckVersion (any
//     syntactically valid YYYY-MM-DD x-ms-version; malformed → 400
//     InvalidHeaderValue; missing on SharedKey → 400 MissingRequiredHeader)
//     and Authenticate (the authenticator chain).
//   - auth.go: the Authenticator interface (Azurite's IAuthenticator:
//     pass, fail or not mine), Grant and SASGrant.
//   - sharedkey.go: Signer, the SharedKey / SharedKey Lite authenticator
//     with the service's string-to-sign supplied as functions, and the
//     string-to-sign of the Blob, Queue and File services (2009-09-19 and
//     later), including the .NET-culture header collation the SDKs sort
//     x-ms-* headers with.
//   - sas.go: account SAS (ss must name the service's letter) and service
//     SAS, whose string-to-sign the service supplies (its canonicalized
//     resource and fields differ per service); the SAS time window,
//     protocol and source IP checks; stored access policies (si) through
//     a resolver the service supplies (FileREST: share ACLs; Blob: container
//     ACLs).
//   - errors.go: Error (status, x-ms-error-code, message, details), the
//     common error codes and constructors, Classify (the service's own
//     table first, then the neutral cases: an over-long body is 413, a
//     cancelled or short request 400, anything else 500) and WriteError,
//     the one renderer of <Error><Code/><Message/>…</Error>.
//   - tableauth.go: the Table service's SharedKey and SharedKey Lite
//     strings-to-sign (no Content-Length/If-*/Range lines, no x-ms-*
//     headers, the x-ms-date value on the date line, only comp kept),
//     its service-SAS string-to-sign (tn, spk/srk/epk/erk) and the key
//     range a table SAS grants (TableKeyRange, enforced by the service).
//   - odataerror.go: ErrorFormat, the middleware that picks the error
//     renderer per request (WriteError then uses it, middleware
//     included), and WriteODataError, the OData JSON renderer
//     ({"odata.error":{"code":…,"message":{"lang":"en-US","value":…}}}).
//   - format.go: FormatTime7 (7 fractional digits, as the SDKs parse),
//     ValidVersion, WriteXML and DecodeXMLBody (strict, bounded).
//
// # What each service supplies
//
// Its routes and handlers, its error table (a func(error) *Error given to
// Classify), the string-to-sign functions of its SharedKey flavour, its
// account-SAS service letter and service-SAS string-to-sign, and the body
// limit per request. The middleware order a service should assemble,
// outermost first: RequestID → Limits → Recover → Authenticate →
// CheckVersion → dispatch (rest.New and queue.New do exactly this; table.New
// adds ErrorFormat after RequestID).
//
// # Concurrency
//
// Everything here is stateless per request; Info lives in the request's
// context. Authenticators are values safe for concurrent use.
package storagehttp
