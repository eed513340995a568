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
//     tokens first: storagehttp.OAuth, after SASWithBearer, which gives a
//     request carrying a SAS too to the SAS), the blob service-SAS
//     string-to-sign, and the authorization of a From-URL operation's
//     source (its own SAS, or a public container; Copy Blob proper reads
//     a source of the account with the request's credentials).
//   - handlers.go: one function per operation.
//   - params.go: conditional headers, lease headers, ranges, properties.
//   - page.go: page blob operations.
//   - batch.go: Blob Batch; its sub-requests run through the whole
//     chain (storagehttp.ReadBatch, WriteBatch), each authorized alone.
//   - svcprops.go: Set Blob Service Properties (merge and validation).
//   - lifecycle.go: Restore Container, Undelete Blob, Seal Append Blob,
//     tier and rehydration headers, Delete Blob's tier conditions.
//   - incremental.go: Incremental Copy Blob and the copy state headers.
//   - udsas.go: Get User Delegation Key, the user delegation SAS
//     string-to-sign, and create-only SAS (see "User delegation SAS").
//   - cpk.go: customer-provided keys (see "Customer-provided keys").
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
// # Conditional headers and leases
//
// Writes follow "Specifying conditional headers for Blob service
// operations", section "Read Operations in Versions Prior to 2013-08-15,
// and for Write Operations (All Versions)": "If a request specifies both
// the If-None-Match and If-Modified-Since headers, the request is
// evaluated based on the criteria specified in If-None-Match. If a
// request specifies both the If-Match and If-Unmodified-Since headers,
// the request is evaluated based on the criteria specified in If-Match.
// With the exception of the two combinations of conditional headers
// listed above, a request may specify only a single conditional header.
// Specifying more than one conditional header results in status code 400
// (Bad Request)", and "requests to the Blob service can only include one
// ETag value": 400 MultipleConditionHeadersNotSupported (blobsvc
// Conditions.ValidateWrite). Get Blob, Get Blob Properties, Get Page
// Ranges and Snapshot Blob are reads: any combination, 304 (with
// x-ms-error-code ConditionNotMet) or 412. Set Blob Tags takes its
// conditions as x-ms-blob-if-match, -none-match, -modified-since and
// -unmodified-since, as the SDKs send them. Put Block List's conditions
// see a blob that has only staged blocks as existing, with the ETag and
// Last-Modified of its first Put Block (an If-Modified-Since after it is
// 412 ConditionNotMet: azblob's TestBlobPutBlockListIfModifiedSinceFalse,
// recorded against Azure); If-None-Match: * fails only on a committed
// blob.
//
// Copies: an unmet destination condition of Copy Blob, Copy Blob From
// URL and Put Blob From URL is 412 ConditionNotMet ("The condition
// specified using HTTP conditional header(s) is not met."), an unmet
// x-ms-source-if-* 412 SourceConditionNotMet. Azure's error table still
// lists "TargetConditionNotMet | Precondition Failed (412) | The target
// condition specified using HTTP conditional header(s) is not met.", and
// Azure answered it once: the azure-sdk-assets recording of azblob's
// TestBlobStartCopyDestIfMatchFalse made on 17 May 2024 (x-ms-version
// 2023-11-03) shows 412 TargetConditionNotMet, as does the -js recording
// of syncUploadFromURL from 2022 (2021-08-06). The same test re-recorded
// on 14 Oct 2024 (x-ms-version 2024-08-04) shows 412 ConditionNotMet,
// and azblob changed its assertion with it: v1.6.4 and v1.8.3 expect
// ConditionNotMet of TestBlobStartCopyDest{IfMatch,IfModifiedSince,
// IfNoneMatch}False and of the live-only TestPutBlobFromUrlDest*False.
// The SDKs blobshare is tested with send later versions (azblob v1.8.3:
// 2026-12-06), and the recordings cannot tell a version switch from a
// service change, so blobshare answers ConditionNotMet for every version (it was
// TargetConditionNotMet from branch blobconc until this was settled).
// A From URL source that answers 304
// (If-None-Match matching, not modified since) is 304
// CannotVerifyCopySource, as azblob's TestPutBlobFromUrlSourceIfNoneMatchFalse
// expects (Copy Blob proper reads its source itself: 412
// SourceConditionNotMet).
//
// Leases follow Lease Blob's two tables (blobsvc). A write without a
// lease id on a broken or expired lease makes it available ("Write, no
// lease specified" on Broken (A) and Expired (A): "Available, write
// succeeds"), so a later renew or release with the old id is 409
// LeaseIdMismatchWithLeaseOperation and a break 409
// LeaseNotPresentWithLeaseOperation; a lease id on a write that would
// create the blob is 412 LeaseNotPresentWithBlobOperation ("Write using
// (A)" on Available: "Fails (412)") and creates nothing.
//
// # Transactional sums on writes
//
// Every write of content answers the x-ms-content-crc64 it computed —
// Put Blob, Put Block, Append Block, Put Page, their From URL forms and
// Copy Blob From URL ("This header is returned so that the client can
// check for message content integrity. The value of this header is
// computed by the Blob service"; the azure-sdk-for-js recordings show it
// on Append Block, Stage Block From URL and syncCopyFromURL sent without
// a checksum) — and the Content-MD5 it checked when the request sent one
// (Content-MD5 for the body, x-ms-source-content-md5 for a From URL
// source; Put Blob always, its content's). A wrong one is 400
// Md5Mismatch or Crc64Mismatch and writes nothing.
//
// # Access tiers
//
// x-ms-access-tier on Put Blob, Put Block List, Copy Blob, Copy Blob From
// URL, Put Blob From URL (else the source's, with
// x-ms-copy-source-blob-properties) and Create Page Blob is stored with
// its change time; Get Blob and Get Blob Properties answer
// x-ms-access-tier and x-ms-access-tier-change-time, and
// x-ms-access-tier-inferred only when true ("If the access tier is not
// explicitly set on the blob, the tier is inferred based on its content
// length, and this header is returned with a value of true"). Set Blob
// Tier takes ?snapshot=; "Snapshots and previous versions cannot be
// rehydrated back to the hot or cool tiers once they are moved to the
// archive tier": 409 BlobArchived (the code is blobshare's choice: the
// docs name none).
//
// Rehydration: Set Blob Tier from Archive to Hot, Cool or Cold (with
// x-ms-rehydrate-priority Standard or High, Standard by default) leaves
// the blob Archive, answering x-ms-archive-status
// rehydrate-pending-to-<tier> and x-ms-rehydrate-priority on Get Blob
// Properties and ArchiveStatus and RehydratePriority in List Blobs, as
// azblob's TestRehydrateStatus expects right after the call; reads stay
// 409 BlobArchived, another tier is 409 BlobBeingRehydrated, the same
// tier may raise the priority to High ("can't be lowered from High to
// Standard"). It completes after the service's rehydration time (serve
// --rehydrate-time, default blobsvc.DefaultRehydrateTime, 10 s, at either
// priority: Azure takes up to 15 hours at Standard and under one at High;
// an emulator keeps the pending state observable and the end reachable
// in a test), derived from the stored request time at each read with
// the service's clock, so tests move time instead of waiting. Copy Blob
// checks x-ms-rehydrate-priority; copying an archived source is 409
// BlobArchived here (Azure rehydrates it into the destination).
//
// Delete Blob takes x-ms-access-tier-if-modified-since and
// -if-unmodified-since ("operate only on a blob if the access-tier has
// been modified since" the date, or not): compared with the tier's change
// time at one-second resolution, or with the creation time of a blob
// whose tier was never set (blobshare's choice: its inferred tier has
// been its tier since); unmet is 412 AccessTierChangeTimeConditionNotMet
// (azblob's TestBlobDeleteAccessTierIf*), both at once 400
// MultipleConditionHeadersNotSupported. Other operations refuse them
// (400 UnsupportedHeader) rather than ignore them.
//
// # Soft delete
//
// Set Blob Service Properties replaces only the root elements it sends
// ("If you omit a root element, the existing settings for the service for
// that functionality are preserved") and checks DeleteRetentionPolicy:
// Enabled required, Days required when enabled, "The minimum specified
// value can be 1 and the maximum value can be 365" — else 400
// InvalidXmlDocument (azblob's TestAccountDeleteRetentionPolicy* tests).
// Under an enabled policy Delete Blob soft-deletes (blobsvc), answers
// x-ms-delete-type-permanent: false, List Blobs lists the soft-deleted
// blobs with include=deleted (snapshots with include=snapshots too),
// Undelete Blob (comp=undelete) restores them, and Delete Blob with
// deletetype=permanent removes a soft-deleted snapshot when the policy's
// AllowPermanentDelete is true (otherwise 409
// OperationNotAllowedInCurrentState, blobshare's choice of code).
// "When blob soft delete is enabled, overwriting a blob automatically
// creates a soft-deleted snapshot of the blob's state prior to the write
// operation": the writes that replace a blob's content (Put Blob, Put
// Block List, Copy Blob, Copy Blob From URL, Put Blob From URL, Create
// Page Blob over a blob) keep one, listed and restored as above; writes
// of metadata, properties, pages or appends keep none here.
//
// Container soft delete is configured outside the data plane on Azure
// (the storage account in Azure Resource Manager); here it is the
// Service's (blobsvc.Service.SetContainerRetention, from the server's
// configuration). Delete Container then keeps the container; List
// Containers include=deleted lists it with its Version, DeletedTime and
// RemainingRetentionDays; Restore Container (restype=container&
// comp=undelete with x-ms-deleted-container-name and
// x-ms-deleted-container-version) brings it back under the URL's name:
// 400 MissingRequiredHeader without either header, 404 ContainerNotFound
// for an unknown version, 409 ContainerAlreadyExists while the name is
// taken.
//
// Seal Append Blob (comp=seal) takes a write's conditions, lease and
// x-ms-blob-condition-appendpos; a sealed blob answers x-ms-blob-sealed
// and refuses Append Block (409 BlobIsSealed); Copy Blob keeps a sealed
// source sealed unless x-ms-seal-blob: false (azblob's TestSeal and
// TestCopySealedBlob).
//
// # Service SAS scope
//
// "You cannot grant permissions to read or write container properties or
// metadata, nor to lease a container, with a container SAS. Use an
// account SAS instead." Get and Set Container Properties/Metadata and
// Lease Container with a service SAS, and operations no service SAS can
// do (Create and Delete Container), are 403 AuthorizationFailure (azblob's
// TestSASContainerClient and TestSASContainerClient2); a permission the
// SAS lacks stays AuthorizationPermissionMismatch. A directory SAS (sr=d,
// sdd its depth) signs "/blob/<account>/<container>/<directory>", the
// first sdd segments of the blob path, and reaches only the blob named
// as that directory and the blobs under it (azblob's
// TestDirectorySASAllPermissions creates foo and foo/test with one SAS
// for the directory foo).
//
// # User delegation SAS
//
// With Config.OAuth, Get User Delegation Key (POST
// ?restype=service&comp=userdelegationkey) answers a bearer token, and
// only a bearer token ("Only authorization with Microsoft Entra ID is
// supported"; SharedKey and SAS are 403 AuthenticationFailed), with a key
// for the token's oid and tid whose Value is derived from the account key
// (storagehttp/userdelegation.go says how, and why nothing is stored). A
// SAS with skoid is checked against that derivation and the string-to-sign
// of its version (udsas.go); it reaches what a service SAS with the same
// sr reaches, only while the key is valid (skt to ske: the key's expiry
// ends the SAS), and with sduoid only together with that user's bearer
// token (a request carrying a SAS and a token is the SAS's,
// storagehttp.SASWithBearer). Signed request headers and query parameters
// (srh, srq) are checked by signing the request's own values. A SAS — of
// any kind — granting Create but not Write may Put Blob, Put Block and
// Put Block List only where no blob exists: "Create (c): Write a new
// blob"; over an existing blob it is 403 UnauthorizedBlobOverwrite.
//
// # Names
//
// A container operation without a container name (/<account>?
// restype=container) is 400 InvalidQueryParameterValue, as Azure answers
// azblob's TestContainerCreateEmptyName; List Blobs that way lists $root.
// Blob names may hold U+FFFE and U+FFFF; List Blobs sends such a name
// URL-encoded under <Name Encoded="true">, as Azure does and the SDKs
// decode, and a page ending at one resumes through a base64 marker. List
// Blobs takes startFrom (inclusive) and endBefore (exclusive), the names
// API version 2026-12-06 bounds a listing with (azblob v1.8's StartFrom
// and EndBefore; that SDK sends endBefore only with its Apache Arrow
// listings, which blobshare does not serve, and blobshare honours it on
// the XML listing too rather than list past it).
//
// The system container $logs exists in every account (blobsvc
// EnsureSystemContainers, run by serve): Storage Analytics' container,
// "not displayed when a container listing operation is performed, such
// as the List Containers operation", so List Containers lists it only
// with include=system ("Specifies that system containers be included in
// the response"). It reads like any container and stays empty (blobshare
// writes no analytics logs). Create Container on it is 409
// ContainerAlreadyExists; Delete Container is 403 AuthorizationFailure:
// the docs say it "cannot be deleted once Storage Analytics has been
// enabled" without naming the answer, so the code is blobshare's choice.
//
// Get Page Ranges answers whole pages: x-ms-range is widened to the
// pages it touches (bytes=0-1022 answers 0-1023, as azblob's
// TestPutGetPages expects of Azure); a range with a negative start is
// ignored, as for Get Blob.
//
// Get Page Ranges with prevsnapshot answers the pages written or cleared
// since the snapshot, as Azure does, whether or not their bytes changed
// (blobsvc's page write history); a missing prevsnapshot is 409
// PreviousSnapshotNotFound, one from an earlier creation of the blob 409
// BlobOverwritten ("The blob has been recreated since the previous
// snapshot was taken.").
//
// # Differences from Azurite
//
// The differential tests (azurite_diff_test.go: a seeded random sequence;
// azurite_matrix_test.go: every operation that takes conditions × each
// header alone and each pair, met and unmet, and every lease state Azurite
// can reach without waiting × writes, reads and lease actions with the
// holder's id, another and none) compare status and x-ms-error-code with
// Azurite. Where they differ, blobshare follows Azure and the test names
// the difference (knownDiffs in azurite_known_test.go):
//
//   - Copy source conditions: Azurite 412 or 304 ConditionNotMet; Azure
//     "SourceConditionNotMet | Precondition Failed (412) | The source
//     condition specified using HTTP conditional header(s) is not met."
//
//   - Conditions on container writes that Azure does not list ("Operations
//     Supporting Conditional Headers": Set Container Metadata
//     If-Modified-Since; Delete Container, Lease Container, Set Container
//     ACL If-Modified-Since and If-Unmodified-Since): Azurite ignores
//     If-Match, If-None-Match (and If-Unmodified-Since on Set Container
//     Metadata); blobshare honours every conditional header a write
//     carries rather than ignore one, under the one-header rule above.
//
//   - x-ms-blob-if-* on Set Blob Tags: Azurite ignores them; Azure
//     evaluates them (azblob's TestGetSetTagsWithBlobModifiedAccessConditions
//     expects If-None-Match current and If-Unmodified-Since past to fail).
//
//   - A lease id on a write that creates the blob: Azurite creates it;
//     blobshare answers 412 LeaseNotPresentWithBlobOperation ("Write using
//     (A)" on Available: "Fails (412)").
//
//   - A second Delete Container right after the first: Azurite 404
//     ContainerNotFound; Azure "marks the specified container for
//     deletion. The container and any blobs contained within it are later
//     deleted during garbage collection" and answers the second one 202
//     (the recording of TestContainerDeleteContainerWithoutLeaseId, though
//     the page says other operations then fail with 404); blobshare
//     accepts it for 30 s (blobsvc.ContainerDeleteWindow).
//
//   - Staged blocks after Put Blob, Copy Blob or Delete Blob: "All
//     uncommitted blocks are also discarded when a new blob of the same
//     name is created using a single step (rather than the two-step block
//     upload-then-commit process)" ("Understanding block blobs, append
//     blobs, and page blobs"); Azurite keeps them and a later Put Block
//     List commits them, blobshare answers 400 InvalidBlockList.
//
//   - If-Match: * on a write to a missing blob: Azurite lets it through
//     (Put Blob 201, an update 404); blobshare answers 412 ConditionNotMet,
//     there being no ETag to match (If-Match: "perform the operation only
//     if the resource's ETag matches the value specified"; RFC 7232:
//     false "if the origin server does not have a current
//     representation").
//
//   - Copy Blob onto a blob whose lease is broken or expired: Azurite
//     keeps it so; blobshare makes it available, as after any write
//     (Lease Blob lists "Copy Blob (lease ID needed for destination
//     blob)" among the writes, and "Write, no lease specified" on Broken
//     (A) and Expired (A) is "Available, write succeeds").
//
//   - A lease id on an expired lease: Azurite 412
//     LeaseNotPresentWithBlobOperation; Azure "LeaseLost | Precondition
//     Failed (412) | A lease ID was specified, but the lease for the blob
//     has expired." (Blob service error codes).
//
//   - Renew of an expired lease with another id: Azurite renews it under
//     that id; Lease Blob's table has "Renew (B)" on Expired (A) as "Fails
//     (409)" (LeaseIdMismatchWithLeaseOperation).
//
// The lease matrix (blob leases available, leased, breaking, broken,
// released, expired — 15-second leases it waits out — and broken or
// expired then written; container leases; and the lease state each
// operation leaves) found no other difference: Azurite, too, makes a
// broken or expired blob lease available on a write, Put Block and Set
// Blob Tags included, and breaks an expired lease ("Break" on Expired
// (A): "Broken (A)").
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
// # Customer-provided keys
//
// "Azure Storage writes an SHA-256 hash of the encryption key alongside
// the blob's contents. The hash is used to verify that all subsequent
// operations against the blob use the same encryption key." cpk.go
// validates x-ms-encryption-key, -key-sha256 and -algorithm on the
// operations that take them (a 32-byte base64 key whose SHA-256 is the one
// sent, AES256, HTTPS only: 400 InvalidHeaderValue or
// MissingRequiredHeader) and hands blobsvc the hash as a condition
// (blobsvc.Conditions.EncryptionKeySHA256), checked under the blob's lock
// with the other conditions: Get Blob, Get Blob Properties and Metadata,
// Set Blob Properties and Metadata, Snapshot Blob, Append Block and Put
// Page on a blob written with a key need the same key ("If the key isn't
// provided on a request for a blob that has already been encrypted with a
// customer-provided key, then the request fails with error code 409":
// BlobUsesCustomerSpecifiedEncryption; another key is 409
// BlobCustomerSpecifiedEncryptionMismatch and a key on a blob without one
// 409 BlobDoesNotUseCustomerSpecifiedEncryption, codes Azure's table does
// not list). Put Blob, Put Block List, the copies and a new page blob
// record the request's hash, or none. A snapshot keeps its blob's hash
// ("Each blob snapshot … can have its own encryption key"). A From-URL
// source is read with x-ms-source-encryption-*; a keyed source without its
// key is 409 CannotVerifyCopySource with the source's message. Writes
// answer x-ms-request-server-encrypted: true and x-ms-encryption-key-sha256,
// Snapshot Blob with a key false (azblob's TestBlobSnapshotWithCPK
// recording); List Blobs names the hash (CustomerProvidedKeySha256). The content is stored as sent, not encrypted with the key:
// the API behaves as Azure's does, but the data directory holds plain
// content (docs/unsupported.md says so). Encrypting would make every
// range read, page write, append and copy decrypt and re-encrypt with a
// key blobshare must not keep, for a guarantee a local emulator's users
// do not get from its plain SQLite metadata anyway. Encryption scopes
// stay refused.
//
// # Not supported (answered with a documented error, never a wrong success)
//
// Put Block List and Set Blob Tags check the Content-MD5 or
// x-ms-content-crc64 of their document ("used to verify the integrity of
// the request content during transport"): 400 Md5Mismatch or
// Crc64Mismatch, nothing committed (storagehttp.BodySums).
//
// Request headers of features blobshare lacks whose meaning would change
// what is stored or answered (encryption scopes, customer-provided keys
// on an operation that takes none, immutability policies and legal holds,
// the access tier's change-time conditions on any operation but Delete
// Blob, the managed-disk diff URL) are refused before any operation
// runs, 400 UnsupportedHeader naming the header (unsupported.go; Azure's
// code for "One of the HTTP headers specified in the request is not
// supported."); a value that asks for nothing (false) passes.
//
// Get Page Ranges with prevsnapshoturl, versions (400
// InvalidQueryParameterValue); copies from another account (400
// CannotVerifyCopySource). Copy Blob within the
// account is synchronous (status success at once), so Abort Copy Blob
// answers 409 NoPendingCopyOperation; a copyid that is not a GUID is 400
// InvalidQueryParameterValue before the blob is looked up (azblob's
// TestBlobAbortCopyNoCopyStarted on Azure). Set Blob Expiry exists only
// on hierarchical-namespace accounts: 400 HierarchicalNamespaceNotEnabled
// (expiry.go).
//
// # Incremental Copy Blob
//
// comp=incrementalcopy (incremental.go; blobsvc's incremental.go) copies
// a page blob snapshot, reached with its own SAS or through a public
// container ("The source blob must either be public or must be
// authorized via a shared access signature"), into an incremental copy
// blob. It answers 202 with x-ms-copy-status: pending as soon as the copy
// is recorded, then the same request copies the pages, snapshots the
// destination and records success (Get Blob Properties:
// x-ms-incremental-copy, x-ms-copy-destination-snapshot) or failed with
// x-ms-copy-status-description: "performed asynchronously ... and must be
// polled for completion", as azblob's TestIncrementalCopy polls. The
// rules Azure documents: the source must be a snapshot (409
// IncrementalCopySourceMustBeSnapshot) of a page blob (409
// InvalidBlobType); a destination that exists must be an incremental copy
// of the same blob (409 IncrementalCopyBlobMismatch), with no copy
// pending (409 PendingCopyOperation), and the snapshot must not be
// earlier than the last copied (409
// IncrementalCopyOfEarlierSnapshotNotAllowed); "The only supported
// operations are Get Blob Properties, Incremental Copy Blob, and Delete
// Blob" on the destination (409 OperationNotAllowedOnIncrementalCopyBlob
// for reads, writes, leases, snapshots, tags and tiers); its snapshots
// read as usual. Abort Copy Blob does not stop one (it runs for the
// length of its request).
package blob
