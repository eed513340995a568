// Package tablesvc is the Azure Table service's semantics, apart from
// HTTP: tables with stored access policies, entities with ETags and the
// Table service's default optimistic concurrency, the $filter language,
// the data model's validation and limits, entity group transactions, and
// streaming queries. Package table is its HTTP front end (payloads,
// $select, Prefer, SAS key ranges, the multipart $batch format);
// tablesvc/sqlstore is its SQLite store, tablesvc/pgstore its PostgreSQL
// store; tablesvc/storetest is the conformance suite every Store runs. The reference is
// ../shared/spec/table.md (sections cited as §n below).
//
// # Concurrency: the seed's rules, decided inside the write
//
// "The Table service uses optimistic concurrency checks as the default
// behavior when you're working with entities": Update, Merge and Delete
// carry If-Match; a current ETag or "*" lets the write happen and gives
// the entity a new ETag, a stale one is ErrConditionNotMet (412), any
// If-Match on a missing entity is ErrEntityNotFound (404); Insert is 409
// ErrEntityExists when the key is taken; Insert Or Replace and Insert Or
// Merge "don't do any concurrency checks".
//
// Every such decision is made by Service inside Store.Write (or
// SingleWriter.WriteSingle, the same for a one-entity write, which makes
// at most one change, as its last step; an Insert through Inserter.Insert
// is one step that writes only if the keys are free): the store
// opens one write transaction, Service reads the entity through Tx.Get,
// decides (exists? ETag current? the new Timestamp), and writes through
// Tx.Put/Tx.Delete before the transaction commits. No check is ever made
// on a read outside the write it guards, so sixteen clients doing
// read-modify-write with If-Match on one entity lose no update, in one
// process or across processes on one database (storetest's Contention
// and RunShared). sqlstore's transactions are BEGIN IMMEDIATE: SQLite's
// write lock is held from the first read to the commit. pgstore, with
// concurrent writers, runs Write at READ COMMITTED and locks each entity
// (an advisory transaction lock) before reading or writing it, and may
// call fn again (to take its locks in order, or after a deadlock or
// serialization failure); fn keeps no state across runs.
//
// A batch is one Write: every op is validated first (at most 100, one
// PartitionKey, no row twice, each op's own rules), then all ops are
// decided and written in the one transaction; the first failure rolls all
// back and is reported as a *BatchError with the op's 0-based index.
//
// # Time and ETags
//
// The clock is injected (New's now). A write's Timestamp is now at 100 ns
// precision, but strictly after the entity's previous Timestamp (that
// plus 100 ns if the clock has not moved on or stepped back), so an
// entity never gets an ETag it had before and a stale If-Match can never
// match again. The ETag is W/"datetime'<Timestamp, 7 digits, ':' as
// %3A>'"; If-Match compares byte for byte after treating %3A (either
// case) and ':' alike. The ops of one batch share one instant; ETags are
// unique per entity, not across entities (§3).
//
// # Queries
//
// $filter (§8) is parsed into a tree of and/or/not over comparisons of
// one property with one typed literal; the literal may come first ("3 lt
// N"). Comparisons are type-strict: "The constant value must be of the
// same data type as the property in order for the filter to return valid
// results", so N eq '3' on an Int32 and N eq 3L on an Int32 match
// nothing, and a missing property matches no comparison, ne included.
// The parser bounds the input (32 KiB), the nesting (64) and the number
// of comparisons (15, QRY: "no more than 15 discrete comparisons are
// permitted within a $filter string").
//
// Query narrows the store's scan to the PartitionKey/RowKey bounds of
// the comparisons ANDed at the top level (the primary key's range), still
// evaluates the whole filter on each row, and streams: rows are decoded
// one at a time and dropped unless they match, so a page's memory is its
// result whatever the table's size. A page ends after Top matches (at
// most 1,000), after reading DefaultScanBudget rows or DefaultScanBytes of
// entities (which also bounds the result: 1,000 entities of 1 MiB would
// be a gigabyte); in each case, if a row follows, the page has More and
// continues at that row's keys.
// QRY: "It is possible for a query to return no results but to still
// return a continuation header" — Azure bounds a page by five seconds,
// blobshare by rows read, so a filter matching nothing in a million
// entities answers fifty short pages instead of holding one request.
//
// # Where blobshare follows Azure's documentation and Azurite differs
//
// Azurite 3.37.0 (table.md §11, §12) answers otherwise in these places;
// blobshare answers what the documentation (DM, ERR, QRY, EGT) says:
//
//   - Table names (DM): "Table names may contain only alphanumeric
//     characters", may not begin with a number, 3 to 63 characters.
//     Azurite answers bad names with an empty error code; blobshare with
//     OutOfRangeInput (length) and InvalidResourceName (characters), and
//     InvalidInput for the reserved name "tables".
//   - Keys (DM): values are "up to 1 KiB in size", and the forward slash,
//     backslash, number sign, question mark and the control characters
//     U+0000–U+001F and U+007F–U+009F are not allowed in them. Azurite
//     answers InvalidInput and counts 512 characters; blobshare answers
//     OutOfRangeInput for characters and PropertyValueTooLarge beyond
//     1 KiB of UTF-16 (512 units: 256 characters outside the BMP).
//   - Properties (DM): an entity has up to 255 properties including the 3
//     system properties (so 252 of the user's), names of up to 255
//     characters following the naming rules for C# identifiers (no dash
//     since 2009-04-14), and at most 1 MiB of data by DM's estimation
//     formula (EntitySize). Azurite stores 400 properties, dashed and
//     256-character names and 2.4 MB entities on insert; blobshare refuses
//     them with TooManyProperties, PropertyNameInvalid,
//     PropertyNameTooLong and EntityTooLarge, also when a merge's result
//     would exceed them.
//   - Delete Entity lists If-Match as "Required": without it blobshare
//     answers MissingRequiredHeader where Azurite answers a bare 400.
//   - A malformed If-Match is InvalidInput ("The etag value ... is not
//     valid") for every verb; Azurite answers InvalidOperation for MERGE.
//   - EGT: "All entities subject to operations as part of the transaction
//     must have the same PartitionKey value." Azurite applies a change set
//     over two partitions; blobshare refuses it with
//     CommandsInBatchActOnDifferentPartitions at the first op of another
//     partition and applies nothing.
//   - Edm.DateTime has 100 ns precision; Azurite compares DateTimes in
//     $filter through JavaScript dates (milliseconds), blobshare to the
//     tick. Int64 literals compare as numbers (Azurite's 12L/120 bug
//     compared strings of digits).
//   - An unterminated string literal (N eq 'x) is InvalidInput; Azurite
//     answers 200.
//   - Values that do not fit their type (an Int32 out of range, a Guid
//     that is not one, a DateTime before 1601 or after 9999) are refused;
//     Azurite stores them.
//
// Where the documentation is silent, blobshare keeps Azurite's answers:
// a deleted table's name is free at once (no TableBeingDeleted), a change
// set over 100 ops fails at index 0, $top above 1000 is clamped, an empty
// $filter selects everything, and not/ne over a missing property follow
// two-valued logic (a missing property matches no comparison; not of that
// is true).
//
// Strings compare and sort ordinally by UTF-8 bytes (SQLite's BINARY
// collation), which is code point order; Azure's UTF-16 code unit order
// differs only between U+E000–U+FFFF and characters outside the BMP.
package tablesvc
