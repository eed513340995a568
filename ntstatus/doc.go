// Package ntstatus is the one home of NT status codes in blobshare: their
// numeric values and names, and the single table that turns outcomes of
// packages fs and locks into them. Every SMB-speaking front end (the smb
// server, `blobshare session`) answers through FromError, so a share-mode
// conflict is STATUS_SHARING_VIOLATION everywhere.
//
// The package knows fs and locks errors but neither of those packages knows
// it: NT status is a protocol's vocabulary, not the file system's.
package ntstatus
