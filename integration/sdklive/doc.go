// Package sdklive runs the Azure SDK for Go storage modules' own live
// tests (azblob, azfile, azqueue and aztables, at the versions in
// run_test.go) against blobshare, as `make sdktests`.
//
// The tests address https://ACCOUNT.SERVICE.core.windows.net. The harness
// copies each module from the module cache into a fixed directory under
// the user cache directory (blobshare-sdklive/TARGET/MODULE@VERSION:
// writable; the same path every run, so Go's build cache keeps the
// compiled tests), downloads its dependencies through the Go proxy, starts `blobshare serve` over TLS
// with --oauth basic and a certificate for *.SERVICE.core.windows.net
// signed by a CA it makes, and runs `go test -json` on each package with
// AZURE_RECORD_MODE=live, the development account, HTTPS_PROXY pointing at
// a CONNECT proxy in this package and SSL_CERT_FILE at the CA. The proxy
// only tunnels: a CONNECT to ACCOUNT.SERVICE.core.windows.net:443 becomes a
// TCP connection to blobshare's SERVICE endpoint, and TLS runs from the
// SDK to blobshare, so the URL, the Host header and what the SDK signed
// arrive as sent (blobshare takes production-style URLs, see
// storagehttp/host.go). The recording package's live transport is
// http.DefaultTransport's clone (it honours HTTPS_PROXY; it skips
// certificate checks), and clients the tests build without it use
// azcore's default transport, which honours both HTTPS_PROXY and
// SSL_CERT_FILE.
//
// The azblob tests that ask for the SDK team's soft-delete account
// (testcommon.TestAccountSoftDelete: an account with blob soft delete on)
// run last, one package at a time, with the development account's
// DeleteRetentionPolicy enabled (1 day, AllowPermanentDelete) and
// disabled again after (softdelete_test.go); the others run with it off,
// as on Azure's default test account.
//
// exclusions.txt lists every test that does not run, grouped under its
// reason; any other test that fails fails TestSDKSuites with its output.
// A test that skips itself is listed in the log, and fails the run under
// BLOBSHARE_REQUIRE_ALL=1, as does a missing module download. RESULTS.md
// records the counts of a full run against blobshare and against Azurite.
//
// TestSDKSuites runs only with BLOBSHARE_SDKTESTS=1 (make sdktests sets
// it), so go test ./... does not start it. These variables steer a run by
// hand: BLOBSHARE_SDKLIVE_TARGET (blobshare or azurite),
// BLOBSHARE_SDKLIVE_SUITES (a subset of the suites),
// BLOBSHARE_SDKLIVE_PACKAGES (a subset of each suite's packages),
// BLOBSHARE_SDKLIVE_RUN (a go test -run pattern within them),
// BLOBSHARE_SDKLIVE_SERVELOG=FILE (serve's log, written at the end),
// BLOBSHARE_SDKLIVE_NOEXCLUDE=1 (run the excluded tests too, fail nothing)
// and BLOBSHARE_SDKLIVE_REPORT=FILE (every test's outcome).
package sdklive
