// Package blob is the Azure Blob service's HTTP front end: path-style
// URLs http://HOST:PORT/<account>/<container>/<blob>, the dispatch table
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
//   - auth.go: the authenticator chain, the blob service-SAS
//     string-to-sign, and the authorization of a From-URL operation's
//     source (its own SAS, or a public container; Copy Blob proper reads
//     a source of the account with the request's credentials).
//   - handlers.go: one function per operation.
//   - params.go: conditional headers, lease headers, ranges, properties.
//   - page.go: page blob operations.
//   - batch.go: Blob Batch; its sub-requests run through the whole
//     chain (storagehttp.ReadBatch, WriteBatch), each authorized alone.
//   - structured.go: structured bodies (see below).
//   - unsupported.go: the headers refused (see "Not supported").
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
// # Structured bodies
//
// Put Blob, Put Block, Append Block and Put Page take a body sent with
// x-ms-structured-body: XSM/1.0; properties=crc64 and
// x-ms-structured-content-length (the format of Azure's "Structured body
// format" page, which azblob frames uploads in with
// TransferValidationTypeComputeStructuredMessageCRC64): the body is
// decoded as the store reads it (storagehttp.StructuredReader), every
// segment's CRC-64 and the message's are checked, and only the data is
// stored; the answer echoes x-ms-structured-body. Content-Length is the
// message's length, x-ms-structured-content-length the data's, and that
// is the length checked against a page range, Append Block's 100 MiB and
// the body caps (which grow by the framing's most). A bad message is 400
// (Crc64Mismatch for a CRC-64, InvalidInput with a Reason for the
// framing, InvalidHeaderValue or MissingRequiredHeader for the headers)
// and stores nothing: the stores commit only after reading the whole body
// without error, and the decoder reports a failure no later than the Read
// of the last data byte. Content-MD5 and x-ms-content-crc64 on such a
// request are checked against the data (the docs' "content"). The
// structured headers on a write without a body of content (From-URL
// writes, Copy Blob, a page clear, Put Blob of a page blob) are 400
// InvalidHeaderValue. Get Blob with x-ms-structured-body answers the
// range (or the whole blob) framed in 4 MiB segments, with
// x-ms-structured-body, x-ms-structured-content-length and a Content-Range
// of the data; Azure's recorded SDK tests download whole blobs this way,
// so unlike x-ms-range-get-content-md5 no 4 MiB range limit applies.
// Azurite (3.35) does not know the headers and stores the message itself
// as the blob; Azure's page says of the format "Note that the request
// body itself is what is encoded into this format", so blobshare stores
// what it encodes.
//
// # Not supported (answered with a documented error, never a wrong success)
//
// Put Block List and Set Blob Tags check the Content-MD5 or
// x-ms-content-crc64 of their document ("used to verify the integrity of
// the request content during transport"): 400 Md5Mismatch or
// Crc64Mismatch, nothing committed (storagehttp.BodySums).
//
// Request headers of features blobshare lacks whose meaning would change
// what is stored or answered (customer-provided keys, encryption scopes,
// immutability policies and legal holds, tier-change conditions, the
// managed-disk diff URL, sealing on copy) are refused before any operation
// runs, 400 UnsupportedHeader naming the header (unsupported.go; Azure's
// code for "One of the HTTP headers specified in the request is not
// supported."); a value that asks for nothing (false) passes.
//
// Get Page Ranges with prevsnapshoturl, incremental copy, versions (400
// InvalidQueryParameterValue); copies from another account (400
// CannotVerifyCopySource). Copy Blob within the
// account is synchronous (status success at once), so Abort Copy Blob
// answers 409 NoPendingCopyOperation.
package blob
