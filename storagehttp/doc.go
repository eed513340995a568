// Package storagehttp is the HTTP plumbing every Azure Storage service of
// blobshare shares: FileREST (package filerest), the Blob (package blob),
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
//   - server.go: NewServer, the http.Server every endpoint runs, whose
//     header cap (MaxRequestHeaderBytes) sits above the services' own so
//     oversized headers get Limits' 400, as on Azure, not net/http's 431.
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
//     x-ms-* headers with. A signature that does not match carries the
//     string the server signed in its cause (Error.Err), which the chain
//     logs at debug level and never sends.
//   - sas.go: account SAS (ss must name the service's letter) and service
//     SAS, whose string-to-sign the service supplies (its canonicalized
//     resource and fields differ per service); the SAS time window,
//     protocol and source IP checks; stored access policies (si) through
//     a resolver the service supplies (FileREST: share ACLs; Blob: container
//     ACLs).
//   - oauth.go: OAuth, bearer tokens as Azurite's `--oauth basic` takes
//     them: the JWT's issuer (Entra ID's token services), audience
//     (https://storage.azure.com, Azure Storage's application id, or
//     https://ACCOUNT.SERVICE.core.windows.net of this account) and
//     lifetime (nbf, exp) are checked, its signature and any permission
//     are not; a token that passes is the account owner. Only over TLS.
//     Where Azurite and Azure differ, blobshare answers as Azure: a refused
//     token is 401 InvalidAuthenticationInfo ("Server failed to
//     authenticate the request. Please refer to the information in the
//     www-authenticate header.") with the reason as
//     AuthenticationErrorDetail and the challenge "WWW-Authenticate: Bearer
//     authorization_uri=https://login.microsoftonline.com/TENANT/oauth2/authorize
//     resource_id=https://storage.azure.com" the SDKs parse, where Azurite
//     answers 403 AuthenticationFailed without a challenge. A bearer token
//     over plain HTTP is Azurite's 403 AuthenticationFailed ("Authentication
//     scheme Bearer is not allowed with HTTP."): Azure documents only that
//     OAuth needs HTTPS. FileREST requires "x-ms-file-request-intent:
//     backup" with a token ("Required if Authorization header specifies an
//     OAuth token"); without it blobshare answers 400 MissingRequiredHeader,
//     another value 400 InvalidHeaderValue (the docs name no code).
//     With OAuth a From-URL operation's source may be authorized by a
//     bearer token in x-ms-copy-source-authorization (SAS.SourceToken,
//     copysource.go), checked the same way.
//   - userdelegation.go: user delegation keys (Get User Delegation Key,
//     ServeUserDelegationKey) and the key part of a user delegation SAS:
//     the key's Value is an HMAC of its fields under the account key, so
//     every process with the key verifies a SAS without a table of issued
//     keys; the sk fields, sduoid (the delegated user's bearer token must
//     come too: SASWithBearer) and srh/srq (signed request headers and
//     parameters). The service supplies the string-to-sign
//     (SAS.UserDelegationStringToSign).
//   - host.go: production-style URLs. Azure addresses an account by its
//     host (https://ACCOUNT.SERVICE.core.windows.net/CONTAINER/…), Azurite's
//     default endpoints by the first path segment
//     (http://127.0.0.1:10000/ACCOUNT/CONTAINER/…); every service takes both,
//     as Azurite does. A host whose second label is the service's name
//     names the account (AccountFromHost) and the services parse the path
//     as if "/ACCOUNT" preceded it (PathStyle). The SharedKey resource is
//     "/ACCOUNT" and the path as sent either way, which is what the SDKs
//     sign.
//   - errors.go: Error (status, x-ms-error-code, message, details), the
//     common error codes and constructors, Classify (the service's own
//     table first, then the neutral cases: an over-long body is 413, a
//     cancelled or short request 400, anything else 500) and WriteError,
//     the one renderer of <Error><Code/><Message/>…</Error>.
//   - crc64.go: Azure's CRC-64 (x-ms-content-crc64 and friends) and
//     CRC64Reader, which checks a body against it as it passes.
//   - structmsg.go: the structured message format of x-ms-structured-body
//     (XSM/1.0; properties=crc64): StructuredRequest and
//     StructuredResponse read the headers, StructuredReader decodes a
//     request body as it is read (every segment's CRC-64 and the
//     message's checked, truncation, overlong or misnumbered segments,
//     lengths that disagree with Content-Length or
//     x-ms-structured-content-length refused: 400 InvalidInput with a
//     Reason, or 400 Crc64Mismatch), StructuredEncoder frames a response
//     body. Both hold only the framing of the moment, never a body.
//     Azure's REST docs describe the format ("Structured body format")
//     but no error code for a bad frame; InvalidInput is Azure's code
//     for a request input that is not valid, Crc64Mismatch its code for
//     a CRC-64 that does not match.
//   - bodysums.go: BodySums, the transactional Content-MD5 and
//     x-ms-content-crc64 of a request document (Put Block List, Set Blob
//     Tags), checked over the whole body; MD5Mismatch.
//   - unsupported.go: CheckUnsupported, the refusal (400
//     UnsupportedHeader by default) of a header whose feature a service
//     lacks, from the table the service supplies.
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
// CheckVersion → dispatch (filerest.New and queue.New do exactly this; table.New
// adds ErrorFormat after RequestID).
//
// # Concurrency
//
// Everything here is stateless per request; Info lives in the request's
// context. Authenticators are values safe for concurrent use.
package storagehttp
