// Package rclone drives rclone's azurefiles backend, a real sync client of
// Azure Files, against a `blobshare serve`: what a user does with rclone
// sync, check, about, copy, mkdir, rmdir and moveto, asserting that the
// share ends up as the source and that a second sync copies nothing.
//
// It is a module of its own (go.mod here, blobshare replaced by ../..) so
// that rclone's dependencies stay out of blobshare's go.mod; rclone is used
// as a library with only the azurefiles and local backends linked in. Its
// cmd/rclone is rclone's command with the mount command and the local and
// azureblob backends, which fs/fusefs's peer benchmarks build and mount.
// `make rclone` runs it; `make test` includes it. The blobshare binary is
// built from the main module (go build -C ../..), with its own go.sum.
package rclone
