package filerest

import "github.com/blobshare/blobshare/storagehttp"

// unsupportedHeaders are the FileREST request headers (from the
// operations' REST pages and the azfile SDK's requests) of features
// blobshare lacks whose meaning would change what is stored or answered;
// any operation carrying one is refused before it runs, never served as
// if it were absent. The NFS file properties get the answer NFS shares get
// (smbOnly: 400 InvalidHeaderValue, "NFS shares are not supported"); the
// source CRC-64 conditions of Put Range From URL are 400 UnsupportedHeader
// (a copy made against an unmet condition would be a wrong success).
// docs/unsupported.md lists them.
var unsupportedHeaders = []storagehttp.Unsupported{
	{Name: "x-ms-mode", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-owner", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-group", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-file-file-type", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-file-mode-copy-mode", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-file-owner-copy-mode", Reason: nfsReason, Code: CodeInvalidHeaderValue},
	{Name: "x-ms-source-if-match-crc64", Reason: "conditions on the source range's CRC-64 are not supported"},
	{Name: "x-ms-source-if-none-match-crc64", Reason: "conditions on the source range's CRC-64 are not supported"},
}

const nfsReason = "NFS shares are not supported: blobshare serves SMB shares only (NFS file properties)."
