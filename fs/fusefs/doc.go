// Package fusefs is blobshare's FUSE binding: it mounts the share file
// system of package fs on Linux with go-fuse v2.
package fusefs
