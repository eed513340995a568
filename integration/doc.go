// Package integration holds blobshare's end-to-end tests: real blobshare
// processes (serve, mount, session) built from ./cmd/blobshare, real FUSE
// mounts, the official Azure SDK for Go against the REST endpoint, and real
// command-line tools on the mount.
//
// The tests build the binary once (TestMain) and start every process
// themselves, stopping it in t.Cleanup. A test that needs FUSE fails instead
// of skipping when BLOBSHARE_REQUIRE_ALL=1, as CI sets it.
package integration
