// Package blob is the Azure Blob service's HTTP front end: path-style
// URLs http://HOST:PORT/<account>/<container>/<blob> and production-style
// ones, the account in the host as on Azure
// (https://<account>.blob.core.windows.net/<container>/<blob>, any host
// whose second label is "blob"; storagehttp.PathStyle), the dispatch table
// of the supported operations, header and query parsing, the XML bodies,
// the Blob flavours of SharedKey, SharedKey Lite, account SAS and service
// SAS, and the mapping of blobsvc's outcomes to Azure error codes. It is
// thin: every decision about containers, blobs, conditions and leases is
// blobsvc's; the wire conventions shared with the other services are
// storagehttp's.
//
// # Files
//
//   - server.go: Config, New (the storagehttp middleware chain), limits.
//   - dispatch.go: path parsing ($root included), the route table and the
//     SAS check against it.
//   - auth.go: the authenticator chain (with Config.OAuth, bearer
//     tokens first: storagehttp.OAuth), the blob service-SAS
//     string-to-sign, and the authorization of a From-URL operation's
//     source (its own SAS, or a public container; Copy Blob proper reads
//     a source of the account with the request's credentials).
//   - handlers.go: one function per operation.
//   - params.go: conditional headers, lease headers, ranges, properties.
//   - page.go: page blob operations.
//   - batch.go: Blob Batch; its sub-requests run through the whole
//     chain (storagehttp.ReadBatch, WriteBatch), each authorized alone.
//   - xml.go: the block-list decoder (fuzzed) and the listing, block
//     list, ACL and tag bodies.
//   - errors.go: the error table.
//
// # Streaming
//
// Put Blob and Put Block bodies are staged into the content store as they
// arrive; Get Blob copies from the content store's reader to the
// response. Nothing holds a whole blob in memory (x-ms-range-get-content-md5
// reads its at most 4 MiB range once).
//
// # Not supported (answered with a documented error, never a wrong success)
//
// Get Page Ranges with prevsnapshoturl, incremental copy, versions (400
// InvalidQueryParameterValue); copies from another account (400
// CannotVerifyCopySource). Copy Blob within the
// account is synchronous (status success at once), so Abort Copy Blob
// answers 409 NoPendingCopyOperation.
package blob
