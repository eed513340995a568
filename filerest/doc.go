// Package filerest is blobshare's FileREST endpoint: the Azure Files HTTP API
// that the official SDKs (Go azfile, JS @azure/storage-file-share, …) use
// unchanged, over the same share that the FUSE mount and `blobshare
// session` see, with their SMB-style locks honoured.
//
// # Shape
//
// New(Config) returns a *Server, an http.Handler. Listening is the
// caller's business (`blobshare serve` wraps it in an http.Server on
// --addr, 127.0.0.1:10003 by default). URLs are path-style:
// http://127.0.0.1:10003/<account>/<share>/<dir>/<file>; use 127.0.0.1,
// not localhost, because the Go SDK only treats IP hosts as path-style
// (filerest.md §0.6). Production-style URLs, the account in the host as on
// Azure (https://<account>.file.core.windows.net/<share>/…, any host whose
// second label is "file"; storagehttp.PathStyle), work too.
//
// Handlers are thin: parse and validate → call one fs.FileSystem method →
// render. rest holds no SQL, does no blob I/O and decides no sharing,
// lease or byte-range rule: fs runs locks.Tx.CheckREST (and friends)
// inside the transaction of each operation, and rest only maps the
// outcome to HTTP.
//
// # Middleware order (outermost first)
//
// The plumbing is package storagehttp's, shared with the Queue service
// (and Blob and Table next); rest supplies only what is FileREST's:
//
//  1. storagehttp.RequestID: x-ms-request-id, Date, x-ms-version and
//     x-ms-client-request-id echoed; the request's start time is kept
//     for error messages and SAS windows.
//  2. storagehttp.Limits: at most 256 header lines / 64 KiB of headers;
//     bodies capped (maxBody: 4 MiB for PUT, 64 KiB otherwise) by
//     Content-Length up front (413 RequestBodyTooLarge) and by
//     http.MaxBytesReader while reading. Memory held by bodies is bounded
//     separately (see "Request bodies in memory").
//  3. storagehttp.Recover: a panic below becomes 500 InternalError and is
//     logged with its stack (http.ErrAbortHandler passes through).
//  4. storagehttp.Authenticate over rest's chain (auth.go): with
//     Config.OAuth first bearer tokens (storagehttp.OAuth, with
//     x-ms-file-request-intent: backup required), then SharedKey
//     with the Blob/Queue/File string-to-sign (SharedKey Lite is
//     refused), then SAS (account SAS with ss containing 'f' and srt,
//     service SAS with sr=s|f, whose string-to-sign fileServiceSAS
//     builds). None claims the request → 401
//     NoAuthenticationInformation. Config.DisableAuth removes the link.
//     The SAS permission letter and resource type are checked after
//     dispatch, when the operation is known (checkSASScope).
//  5. storagehttp.CheckVersion: any syntactically valid YYYY-MM-DD
//     x-ms-version is accepted, newer ones included; malformed → 400
//     InvalidHeaderValue; missing on a SharedKey request → 400
//     MissingRequiredHeader.
//  6. dispatch → handler.
//
// # Dispatch
//
// ServeMux cannot route on query strings, so routing is a table
// (routeTable): method + restype + comp + at most one deciding header
// (x-ms-type, x-ms-copy-source, x-ms-write, x-ms-file-rename-source,
// x-ms-lease-action, x-ms-handle-id) + the URL's scope (service, share,
// path). An unknown comp or restype → 400 InvalidQueryParameterValue; a
// known combination with another verb → 405 UnsupportedHttpVerb; a
// missing or unknown deciding header → 400 MissingRequiredHeader /
// InvalidHeaderValue; the wrong scope → 400 InvalidUri. List Handles and
// Force Close Handles carry no restype: fs looks the path up.
//
// Paths are parsed once (parsePath): account, share (name rules of
// filerest.md §2.1 → InvalidResourceName), then the rest is percent-
// decoded and split on "/" (the SDKs send "dir%2Ffile", which the
// service treats as a separator). "." and ".." (plain or encoded),
// backslashes, control characters, forbidden characters, reserved DOS
// names and over-long names are refused with 400
// InvalidFileOrDirectoryPathName before anything reaches fs, so no
// request can name anything outside its share.
//
// # Errors
//
// Handlers return errors; they never write error replies. toError is
// storagehttp.Classify with FileREST's table (fileErrors): *Error as is;
// *locks.LeaseError (a file lease) by its Status(); a share's
// *lease.Error through storagehttp.LeaseError; storage full; the locks
// sentinels
// (SharingViolation, SMBDeletePending, FileLockConflict,
// ReadOnlyAttribute, …, locking.md §6.2) and the fs sentinels
// (ResourceNotFound, ParentNotFound, ShareNotFound, ResourceAlreadyExists,
// …, fsmap.go) matched with errors.Is; then storagehttp's neutral cases:
// an over-long body → 413; a cancelled or short request → 400; anything
// unknown → 500 InternalError (logged). Deterministic failures never use
// 5xx: the Go SDK retries 500/502/503/504.
//
// storagehttp.WriteError renders status, x-ms-error-code (always, HEAD
// included: the SDKs read the code from that header first) and, except
// for HEAD, the XML body <Error><Code/><Message/>…</Error> whose Message
// ends with "\nRequestId:<id>\nTime:<7 fractional digits>Z", plus detail
// elements (HeaderName/HeaderValue, QueryParameterName/Value/Reason).
//
// Delete-pending files answer 409 SMBDeletePending (locking.md A1); the Go
// SDK knows that condition as fileerror.DeletePending, so Go callers must
// compare the error code string "SMBDeletePending".
//
// # Formats and traps
//
//   - x-ms-file-*-time response headers carry exactly 7 fractional digits
//     (storagehttp.FormatTime7): the Go SDK parses them strictly.
//   - GET/HEAD of a file without a stored content type send no
//     Content-Type at all (net/http would sniff one otherwise).
//   - Set File Properties replaces the content-header group as a whole,
//     except for a pure resize (x-ms-content-length alone).
//   - Put Range: both range ends required, Content-Length must equal the
//     range, > 4 MiB → 413. The body is hashed as it passes (the
//     response's Content-MD5); with a Content-MD5 header the sum is
//     checked before the reader hands fs the last bytes, so a mismatch
//     fails fs's staging and nothing is committed (fs.PutRange stages,
//     then commits only after the whole body was read). Get File streams
//     from fs (only a ranged read with x-ms-range-get-content-md5,
//     ≤ 4 MiB, is buffered to hash it).
//
// # Request bodies in memory (body.go)
//
// Nothing allocates a body's declared length when its headers arrive.
// Put Range and Create File bodies take a charge from one server-wide
// budget (Config.BodyBudget, 64 MiB by default) while their bytes are in
// memory:
//
//   - ≤ 256 KiB: read whole in rest, charged their length; a request
//     waits for its charge with its context.
//   - larger: streamed into fs, charged fs's block-sized staging buffer
//     (fs.BlockSize, which fs fills before staging) plus the length
//     unless the range covers whole blocks. If the budget has no room at
//     once, the body is first copied into an unlinked spill file
//     (Config.SpillDir) — no memory held however slowly the client sends
//     — and the request then waits for its charge and feeds fs from the
//     file. Waiters are served in arrival order.
//
// Once a request has its charge, its connection gets a read deadline of
// Config.BodyReadTimeout (2 min by default) for the body, cleared as soon
// as the body is read (net/http's background read after the body would
// otherwise hit it and cancel the request's context). A stalled client
// fails with 400 InvalidInput and frees its charge. The deadline is kept
// when the body is abandoned, so net/http's post-handler drain of a small
// remainder cannot block on a stalled client.
//
// Storage full: ENOSPC or EDQUOT anywhere in the error chain (the blob
// store's or the database's file system), or a full database (locks.ErrStorageFull), is 403
// ShareSizeLimitReached ("The specified share is full."), which the SDKs
// do not retry, logged at Warn with the path. Other I/O failures (EIO,
// EROFS) stay 500 InternalError, logged at Error with the path.
//   - Copy File completes synchronously (x-ms-copy-status: success);
//     sources must be files of this account (SAS on the source URL is
//     ignored: the request is already authorized for the account).
//   - Service properties (GET/PUT ?restype=service&comp=properties) are
//     kept in memory for the life of the Server; they configure nothing.
//
// # Share features (sharelease.go, shareacl.go, permission.go)
//
//   - Lease Share: header syntax here (durations 15..60 or -1, break
//     period 0..60); the rules are lease.Decide's, run by fs at
//     fs's clock, so expiry and break periods follow the injected clock
//     (tests share one fake clock between filerest.Config.Now and
//     fs.Config.Now). The lease lives in fs's ns_share_state, off the
//     share's entry: lease calls leave the share's ETag alone.
//   - Share ACL: at most 5 signed identifiers, each of at most 64
//     characters (more is 400 InvalidXmlDocument, as Azure answers the
//     azfile live test TestShareSetPermissionsNegative; an empty or repeated
//     id is InvalidXmlNodeValue); permission letters are
//     canonicalised to "rcwdl" order (acl.ShareRules, checked by fs;
//     shareACLError words the refusal). A service SAS naming a policy (si)
//     is resolved by storagehttp.SAS.StoredPolicy → fs.SharePolicy after
//     the signature checks out; a field given by both the policy and the
//     SAS is refused (403 AuthenticationFailed), as is an unknown policy.
//   - Permissions: SDDL and the self-relative binary form (base64) parse
//     with package secdesc; fs stores the canonical SDDL, whose hash is
//     the key, so a permission has one key whichever form it came in (an
//     inline one of Set Properties: a salted hash, see below).
//     What secdesc refuses is 400 FileInvalidPermission.
//   - Snapshots: sharesnapshot= is validated in dispatch and allowed
//     only on the operations in snapshotReads (reads, List Ranges, Lease
//     Share, Delete Share); anything else is 400
//     ShareSnapshotOperationNotSupported. How snapshots stay point in
//     time without copying data is fs's (snapshots.go). List Ranges with
//     prevsharesnapshot answers fs.RangeDiff: the ranges written since the
//     previous snapshot, from each file's write log, as Azure reports them
//     ("written ranges", not changed bytes: azfile's live test
//     TestFileGetRangeListSupportRename writes the same 512 bytes again and
//     expects [0, 511] listed). A
//     file renamed or moved since the previous snapshot is 409
//     PreviousSnapshotNotFound unless x-ms-file-support-rename: true,
//     which compares it with its old self (found by file id).
//   - CRC-64: x-ms-content-crc64 (Put Range) and x-ms-source-content-crc64
//     (Put Range From URL) are hashed as the bytes pass, like
//     Content-MD5, with the Azure SDKs' polynomial.
//   - Structured bodies (structured.go): Put Range and Create File with
//     data take x-ms-structured-body: XSM/1.0; properties=crc64 with
//     x-ms-structured-content-length, Azure's structured message
//     ("Structured body format"); the body is decoded by
//     storagehttp.StructuredReader as fs reads it (every segment's CRC-64
//     and the message's checked) and only the data is written; the
//     answer echoes x-ms-structured-body. The range is checked against
//     x-ms-structured-content-length, Content-Length is the message's,
//     and the 4 MiB PUT cap grows by the framing's most. A bad message is
//     400 (Crc64Mismatch, InvalidInput with a Reason, InvalidHeaderValue,
//     MissingRequiredHeader) and writes nothing: Put Range's reader fails
//     before fs commits, Create File checks the whole body (spilled) before
//     it creates or replaces the file. A clear and Put Range From URL
//     refuse the headers (400 InvalidHeaderValue). Get File with
//     x-ms-structured-body answers the range or the whole file framed in
//     4 MiB segments, x-ms-structured-content-length and Content-Range
//     being the data's. The JS SDK's uploads and downloads with
//     contentChecksumAlgorithm StorageCrc64 use both
//     (testdata/structured.js); azfile (v1.7.1, v1.7.2) does not expose
//     them yet.
//   - NFS shares are refused with one answer (smbOnly), and so are the
//     NFS file properties (x-ms-mode, x-ms-owner, x-ms-group,
//     x-ms-file-file-type, the copy modes) on any operation; the source
//     CRC-64 conditions of Put Range From URL are 400 UnsupportedHeader
//     (unsupported.go: checked in dispatch before the handler runs, so a
//     header whose meaning blobshare lacks is never ignored).
//
// # Where Azure's answer was established (issue 26)
//
// Each from the azfile v1.7.1 module's own live tests (recorded against
// Azure) and the documentation's words:
//
//   - Copy File without x-ms-file-attributes gives the destination a new
//     file's Archive, not the source's attributes: the header "Specifies
//     either the option to copy file attributes from a source file(source)
//     to a target file or a list of attributes to set on a target file"
//     (CopyFileSmbInfo), and TestFileStartCopySourceCreationTime copies a
//     ReadOnly|Hidden source with only the creation time from the source
//     and requires other attributes.
//   - Copy File from a file in a share snapshot (?sharesnapshot= on
//     x-ms-copy-source) copies the file as it was in the snapshot ("copies
//     a blob or file to a destination file", the source "a share-snapshot
//     file", filerest.md §5.6): the way to restore a file, onto itself too.
//   - Put Range From URL takes x-ms-file-last-write-time: "Specifies if the
//     file last write time should be set to the current time, or the last
//     write time currently associated with the file should be preserved"
//     (FileLastWrittenMode; TestFileUploadRangeFromURLPreserve).
//   - Put Range From URL from a blob ("The source can be a file or a blob
//     in the same or another storage account"): with Config.Blobs (serve
//     wires its Blob endpoint in), an x-ms-copy-source on the Blob service
//     (ACCOUNT.blob.… or the Blob endpoint's path-style address) is
//     authorized and read by the Blob server in process (blobsource.go
//     says why not over HTTP): the blob URL's own SAS, a bearer token in
//     x-ms-copy-source-authorization, or a public container; a blob with a
//     customer-provided key cannot be a source. Copy File from a blob is
//     not supported (the source must be a file of the account).
//   - x-ms-file-property-semantics "Restore: does not modify file
//     attribute flag …  If Restore is specified, the file permission must
//     also be provided or PropertySemantics will default to New": with no
//     attributes the file has None (TestFileCreateFilePropertySemantics
//     requires Archive unset).
//   - Set File/Directory Properties with an inline SDDL answer a new
//     permission key, also for the descriptor the entry was created with
//     (TestDirSetPropertiesFilePermissionFormat: NotEqual); stored with
//     fs.CreateUpdatePermission, whose key is never Create Permission's.
//   - Delete Share: "When a share is deleted, a share with the same name
//     can't be created for at least 30 seconds"; a second Delete Share in
//     those 30 s answers 202 (TestShareDeleteShareWithoutLeaseId deletes
//     with the lease id, then its cleanup deletes again and requires
//     success). This server remembers its deletes for 30 s
//     (sharedelete.go); other operations answer 404 at once, and unlike
//     Azure a share of the same name may be created at once (no 409
//     ShareBeingDeleted): tests that recreate a share keep working.
//   - Snapshot Share ignores sharesnapshot= (TestShareCreateSnapshotNegative
//     SnapshotOfSnapshot: "this would not fail, snapshot would be ignored").
//   - Every AuthenticationFailed has Azure's one message and the reason in
//     AuthenticationErrorDetail (storagehttp.AuthFailed), the SAS window
//     included.
//
// # Concurrency
//
// A Server has no per-request shared state except the in-memory service
// properties (mutex), the shares it deleted in the last 30 s (mutex) and
// the body budget (mutex plus a FIFO of waiters,
// each woken by closing its channel). All concurrency control of files is fs's and locks'.
//
// # SMB clients' oplocks and leases (cache.go)
//
// With Config.Caching (the lock table FS uses) Get File, Get File
// Properties, Put Range, Set File Properties, Set File Metadata, Create
// File over an existing file and Delete File first break the oplocks and
// leases of SMB clients as Azure's table in "Manage file locks" says
// ("Interaction between FileREST and SMB opportunistic locks";
// ../shared/spec/smb-leases.md §1.2, with §1.3's derived rows): "A Read
// (R) oplock needs to be broken whenever a write operation is issued,
// such as Put Range", "A Write (W) oplock needs to be broken whenever a
// read operation is issued, such as Get File", "A Handle (H) oplock needs
// to be broken whenever a client issues a delete operation". A blocking
// break is waited for — never inside a write transaction — at most the
// request's timeout= (seconds, at most 30: "within the specified request
// timeout, or within 30 seconds, whichever completes first"), and the
// operation then runs from the start, so Get File returns what the client
// flushed before it acknowledged, and Delete File answers 409
// SharingViolation only for a handle the client really keeps open.
//
// A break not acknowledged in time answers ClientCacheFlushDelay with
// status 500. Azure's two pages disagree: "Manage file locks" says
// "status code 408 (Request Timeout), and error code
// ClientCacheFlushDelay", the error code table "ClientCacheFlushDelay |
// Internal Server Error (500) | The specified resource state could not be
// flushed from an SMB client in the specified time." We follow the table,
// which the azfile SDK's comment on ServiceCodeClientCacheFlushDelay
// repeats, and use its message.
//
// Only breaks within this process are delivered at once (the lock table's
// CacheChanges); an SMB server in another process on the same data
// directory finds the break in the outbox at its next poll (250 ms), and
// the REST call waits for an acknowledgment made there by polling the lock
// table (every 100 ms) — the metadata engine's post-commit wake-ups would
// make both immediate. Not yet: List Ranges, Copy File (source and
// destination), Put Range From URL, Rename and Lease File do not break.
//
// # Tests
//
// Unit tests cover the parsers, the SharedKey verifier (with the Go SDK's
// own signer as the oracle, through a capturing transport), the error
// writer and the middleware. Fuzz targets (FuzzParseRange,
// FuzzParsePath, FuzzSharedKey, FuzzParseAttributes, FuzzParseSMBTime,
// FuzzParseMetadata, FuzzDecodeXMLBody) run their seed corpora
// (testdata/fuzz) in every `go test`; a short exploration per target:
//
//	for f in FuzzParseRange FuzzParsePath FuzzSharedKey FuzzParseAttributes \
//	         FuzzParseSMBTime FuzzParseMetadata FuzzDecodeXMLBody; do
//	  go test ./filerest -run '^$' -fuzz "^$f\$" -fuzztime 5s || exit 1; done
//
// Integration tests drive an httptest server over a real fs (SQLite +
// local blob store in t.TempDir()) with the azfile SDK, raw
// HTTP for the error paths, and node with the JS SDK (testdata/smoke.js).
// Benchmarks compare transfer throughput with Azurite's blob API and
// measure Get File Properties latency under 16 clients.
package filerest
