// Package queue is blobshare's Azure Queue service endpoint: the Queue
// REST API that the official SDKs (Go azqueue, JS @azure/storage-queue, …)
// use unchanged, on Azurite's port 10001 by default
// (`blobshare serve --queue-addr`). URLs are path-style:
// http://127.0.0.1:10001/<account>/<queue>/messages[/<id>], or
// production-style, the account in the host as on Azure:
// https://<account>.queue.core.windows.net/<queue>/… (any host whose
// second label is "queue"; storagehttp.PathStyle). A queue service SAS may
// name a stored access policy of its queue (si). An operation no service
// SAS may do (create, delete or list queues, metadata and ACL writes) is
// 403 AuthorizationFailure, a permission the SAS lacks
// AuthorizationPermissionMismatch, as Azure answers (the azqueue live
// tests).
//
// It is a thin front end: parse and validate → one msgqueue.Service call
// → render. The semantics (pop receipts, visibility, TTL, dequeue counts)
// live in msgqueue, storage in msgqueue/sqlstore, and the HTTP plumbing
// every Azure Storage service shares (request ids, limits, recovery,
// SharedKey / SharedKey Lite / account and service SAS, bearer tokens with
// Config.OAuth, x-ms-version,
// error rendering) in storagehttp.
//
// # Dispatch
//
// routeTable: the URL's scope (service, queue, messages, one message),
// method, restype and comp choose the operation; Get Messages with
// peekonly=true is Peek Messages. An unknown comp or restype is 400
// InvalidQueryParameterValue, another verb 405 UnsupportedHttpVerb, a
// path of another shape 400 InvalidUri. Each route names the account-SAS
// permission and resource type it needs and, for the operations a queue
// service SAS may perform (r: metadata and peek, a: put, u: update, p:
// get and delete), the service-SAS letter. An operation no queue SAS can
// perform (Create Queue, Set Queue ACL, …) is 403 AuthorizationFailure, a
// missing letter AuthorizationPermissionMismatch, as on Azure. A service
// SAS naming a stored access policy (si) takes the fields it leaves out
// from the queue's ACL (Set Queue ACL: at most five identifiers, each up
// to 64 characters; more is 400 InvalidXmlDocument).
//
// # Errors
//
// toError is storagehttp.Classify with the queue table: QueueNotFound,
// MessageNotFound (also for every stale pop receipt: msgqueue's doc says
// why not PopReceiptMismatch), QueueAlreadyExists, InvalidResourceName /
// OutOfRangeInput for names, OutOfRangeQueryParameterValue for bounds
// (numofmessages 1…32, visibilitytimeout, maxresults) with Minimum- and
// MaximumAllowed, InvalidQueryParameterValue for a non-integer or a
// visibility timeout not before the TTL, InvalidXmlDocument for a body
// that is not one well-formed UTF-8 <QueueMessage> whose <MessageText>
// holds only text (Put also needs the MessageText; Update without one, or
// without a body, keeps the text), and 413 RequestBodyTooLarge (MaxLimit
// 65536) for a longer text. TestHostileInput and the fuzz targets
// FuzzMessageBody and FuzzQueueRequest hold the handler to these answers
// (never a 5xx).
//
// # Differences from Azurite (TestDifferentialAzurite)
//
// The differential test sends seeded request sequences to Azurite's
// Queue service and to this one and compares status, x-ms-error-code and
// the server-independent part of each answer. It tolerates exactly these
// differences, where Azure's documentation sides with blobshare:
//
//   - A stale pop receipt of an existing message: blobshare 404
//     MessageNotFound, Azurite 400 PopReceiptMismatch. Delete Message:
//     "If a message with a matching pop receipt isn't found, the service
//     returns error code 404 (Not Found)" (msgqueue's doc has the rest).
//   - A request Azurite's generated validator refuses (a parameter that
//     is not an integer or below the schema's minimum, a missing
//     popreceipt or visibilitytimeout, an unknown comp, a verb the URL
//     does not take): Azurite answers 400 with no body and no error
//     code; blobshare answers the code of Azure's common error table:
//     InvalidQueryParameterValue ("An invalid value was specified for one
//     of the query parameters in the request URI"),
//     OutOfRangeQueryParameterValue ("One of the query parameters
//     specified in the request URI is outside the permissible range"),
//     MissingRequiredQueryParameter ("A required query parameter wasn't
//     specified for this request"), 405 UnsupportedHttpVerb ("The
//     resource doesn't support the specified HTTP verb"), or 413
//     RequestBodyTooLarge when the same request also has a body over the
//     limit (which fault a request with two is answered for is not
//     documented).
//   - A Put/Update body that is not exactly one <QueueMessage> document
//     in UTF-8: Azurite takes a MessageText under any root element,
//     ignores what follows the document and turns bytes that are not
//     UTF-8 into U+FFFD; blobshare answers 400 InvalidXmlDocument, as Put
//     Message documents the body as "<QueueMessage>
//     <MessageText>message-content</MessageText></QueueMessage>" and says
//     "A message must be in a format that can be included in an XML
//     request with UTF-8 encoding". An element inside MessageText is 400
//     on both (blobshare: InvalidXmlDocument; Azurite: no code).
//
// Not compared: List Queues markers after queues were created or deleted
// ("The marker value is opaque to the client"; blobshare's is the next
// name, Azurite's an internal counter), and times.
//
// Matched to Azurite where Azure's documentation is silent: the queue
// name is checked before the rest of the request; Update Message with a
// <QueueMessage> lacking MessageText keeps the text; messagettl is any
// 64-bit number ("the maximum time-to-live can be any positive number, as
// well as -1", beyond about 292 years it is kept at that). Update
// Message's page says the visibility timeout "cannot be set to a value
// later than the expiry time", but neither Azurite nor blobshare refuses
// one (Azure itself was reported not to, azure-sdk-for-java#105).
//
// # Formats
//
// Message times are RFC 1123 (as Azure sends them); Put answers MessageId,
// the three times and PopReceipt; Get adds DequeueCount and MessageText;
// Peek has no PopReceipt or TimeNextVisible. Update answers 204 with
// x-ms-popreceipt and x-ms-time-next-visible. Service properties are kept
// in the store as the document the client sent (parts left out keep their
// values).
//
// # Connection strings
//
// The Go azqueue SDK (v1.0.1) does not expand UseDevelopmentStorage=true
// (its parser wants AccountName or QueueEndpoint); the equivalent string
// works unchanged:
//
//	DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
//	AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;
//	QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;
//
// SDKs that do expand it (.NET, JS, Python) reach the same endpoint.
package queue
