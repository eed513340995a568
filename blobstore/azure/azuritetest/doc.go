// Package azuritetest starts a real Azurite blob emulator (Start) or
// Azurite's Queue service (StartQueue) for tests.
//
// Start runs integration/js/node_modules/.bin/azurite-blob (installed by
// `make npm`; the module root is found by walking up from the working
// directory to go.mod) on a free loopback port with a fresh
// t.TempDir() workspace, waits until it answers HTTP, and stops it (the
// whole process group) in t.Cleanup. When Azurite or node is missing the
// test is skipped, or fails when BLOBSHARE_REQUIRE_ALL=1.
//
// The helper knows nothing about blobshare's backends: it returns the
// endpoint and the well-known development account, so any test (the blob
// backend's conformance run, a REST benchmark) can build its own client.
package azuritetest
