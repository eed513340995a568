// Package queue is blobshare's Azure Queue service endpoint: the Queue
// REST API that the official SDKs (Go azqueue, JS @azure/storage-queue, …)
// use unchanged, on Azurite's port 10001 by default
// (`blobshare serve --queue-addr`). URLs are path-style:
// http://127.0.0.1:10001/<account>/<queue>/messages[/<id>].
//
// It is a thin front end: parse and validate → one msgqueue.Service call
// → render. The semantics (pop receipts, visibility, TTL, dequeue counts)
// live in msgqueue, storage in msgqueue/sqlstore, and the HTTP plumbing
// every Azure Storage service shares (request ids, limits, recovery,
// SharedKey / SharedKey Lite / account and service SAS, x-ms-version,
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
// get and delete), the service-SAS letter.
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
// that is not one well-formed <QueueMessage> with <MessageText>, and 413
// RequestBodyTooLarge (MaxLimit 65536) for a longer text.
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
