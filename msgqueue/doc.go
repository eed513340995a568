// Package msgqueue is the Azure Queue service's semantics, apart from
// HTTP: queues with metadata and stored access policies, and messages
// with pop receipts, visibility timeouts, time to live and dequeue
// counts. Package queue is its HTTP front end; sqlstore its SQLite store,
// pgstore its PostgreSQL store, storetest the suite both run.
//
// # The model (Azure's documented rules)
//
//   - Put Message stores the text as sent (at most 64 KiB; base64 is a
//     client convention, not the service's), visible after its
//     visibility timeout (0…7 days), expiring after its TTL (default 7
//     days; -1 never, reported as 9999-12-31T23:59:59Z; a TTL must exceed
//     the visibility timeout). It answers a pop receipt that already
//     allows Delete and Update.
//   - Get Messages takes up to 32 messages visible and unexpired now,
//     hides each until now + visibility timeout (1 s…7 days), gives it a
//     new pop receipt and increments its dequeue count. Peek returns
//     visible messages and changes nothing.
//   - A pop receipt stays valid until the message is got again, updated
//     or deleted, or expires — not merely until its visibility timeout
//     passes: a worker whose message became visible again but was not yet
//     taken by anyone can still delete it.
//   - Update Message needs the current pop receipt, sets a new
//     visibility timeout (0…7 days, from now) and optionally new text,
//     and answers a new pop receipt; the old one is dead. Last writer
//     wins only in the sense that each update replaces the receipt: a
//     second updater holding the old receipt fails.
//   - Expired messages vanish from every operation at once (and are
//     removed for good by a sweep at most once a minute). Clear and Delete
//     Queue are single statements/transactions, safe while workers poll:
//     a poller then sees an empty queue or QueueNotFound.
//
// # Stale pop receipts: 404 MessageNotFound, never 400 PopReceiptMismatch
//
// Delete Message and Update Message with a pop receipt that is not the
// message's current one answer ErrMessageNotFound (404 MessageNotFound),
// whatever the reason: the message was got again, updated, deleted,
// expired, or never had that receipt. Why:
//
//   - Azure's Delete Message page: "If a message with a matching pop
//     receipt isn't found, the service returns error code 404 (Not
//     Found). This error occurs in the previously listed cases in which
//     the pop receipt is no longer valid" (the cases: expired, deleted
//     with the last receipt, dequeued again after its invisibility
//     elapsed, updated with a new visibility timeout). Update Message
//     takes "a valid pop receipt value returned from an earlier call to
//     the Get Messages or Update Message operation" and fails the same
//     way.
//   - Users of the real service report exactly that answer, "404 The
//     specified message does not exist", for a receipt an update
//     replaced (Azure/azure-storage-python#300,
//     Azure/azure-storage-queue-go#20).
//   - PopReceiptMismatch (400, "The specified pop receipt did not match
//     the pop receipt for a dequeued message") is in Azure's list of
//     Queue error codes, but no operation page documents when it is
//     answered. Azurite answers it whenever the message exists with
//     another receipt (LokiQueueMetadataStore.deleteMessage and
//     updateMessage); that is where blobshare and Azurite differ, and
//     queue's doc (its differential test against Azurite) lists it.
//
// A worker therefore treats 404 on Delete as "someone else owns this
// message now", the way the Azure SDK documentation tells it to.
//
// # Time
//
// The clock is injected (New's now); times are kept to the millisecond
// and rendered to the second as Azure does. Tests drive visibility and
// TTL edges by advancing a fake clock, never by sleeping.
//
// # Concurrency
//
// Service holds no per-message state; every decision about a message is
// a conditional statement in the Store (see Store's doc), so several
// Services — in one process or several gateways on one database — can
// serve the same queues without taking a message twice or honouring a
// stale receipt. Get, Delete and Update hand the Store the clock rather
// than a time, so that a get reads "now" only when its statement runs:
// otherwise a get that waited behind a put could miss that message
// (msgqueue/storetest, GetSeesPutCommittedWhileItWaited). sqlstore
// guarantees that order within one process; pgstore across gateways, on
// the database's clock. Every store runs the suite in msgqueue/storetest.
package msgqueue
