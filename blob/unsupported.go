package blob

import "github.com/blobshare/blobshare/storagehttp"

// unsupportedHeaders are the Blob request headers (from the operations'
// REST pages and the azblob SDK's requests) of features blobshare lacks
// whose meaning would change what is stored or answered. Any operation
// carrying one is refused before it runs (400 UnsupportedHeader, Azure's
// "One of the HTTP headers specified in the request is not supported.",
// with the header and the reason), never served as if it were absent: a
// "legal hold" that does not hold would be a wrong success. A value that
// asks for nothing (a legal hold of false) passes. docs/unsupported.md
// lists them.
var unsupportedHeaders = []storagehttp.Unsupported{
	{Name: "x-ms-encryption-scope", Reason: scopeReason},
	{Name: "x-ms-default-encryption-scope", Reason: scopeReason},
	{Name: "x-ms-deny-encryption-scope-override", Reason: scopeReason, Benign: "false"},
	{Name: "x-ms-immutability-policy-mode", Reason: "immutability policies are not supported"},
	{Name: "x-ms-immutability-policy-until-date", Reason: "immutability policies are not supported"},
	{Name: "x-ms-legal-hold", Reason: "legal holds are not supported", Benign: "false"},
	{Name: "x-ms-previous-snapshot-url", Reason: "managed-disk page-range differences are not supported"},
}

// deleteOnlyHeaders are Delete Blob's conditions on the access tier's
// change time (lifecycle.go, tierConditions): on any other operation they
// would be ignored, so they are refused there as unsupported.
var deleteOnlyHeaders = []storagehttp.Unsupported{
	{Name: "x-ms-access-tier-if-modified-since", Reason: "conditions on the access tier's change time are taken by Delete Blob only"},
	{Name: "x-ms-access-tier-if-unmodified-since", Reason: "conditions on the access tier's change time are taken by Delete Blob only"},
}

// Customer-provided keys are honoured (cpk.go); encryption scopes are
// not.
const scopeReason = "encryption scopes are not supported: the account has none"
