// Package storeurl opens the blob store a URL names, so that commands take
// one --blob-backend flag.
//
// Syntax:
//
//	""                           the default: file://<dataDir>/blobs
//	file:///abs/dir              local directory backend rooted at /abs/dir
//	                             (file://localhost/abs/dir is the same)
//	azure://<account>/<container>[?endpoint=<blob service URL>][&key=<account key>]
//	                             Azure Blob Storage (or Azurite) container
//
// For azure://, the endpoint defaults to https://<account>.blob.core.windows.net;
// for Azurite use e.g.
//
//	azure://devstoreaccount1/blobshare?endpoint=http://127.0.0.1:10000/devstoreaccount1
//
// Credentials, first found wins: the key= query parameter; the environment
// variable AZURE_STORAGE_KEY (the account key); the environment variable
// AZURE_STORAGE_CONNECTION_STRING (a full connection string, which then
// also supplies the endpoint; the URL's account must match its
// AccountName). Prefer the environment to key= so keys stay out of process
// listings. The container is created if missing.
//
// Anything else (other schemes, relative file paths, missing account or
// container, unknown query parameters) is an error wrapping ErrBadURL.
package storeurl
