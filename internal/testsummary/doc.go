// Command testsummary runs `go test -json` and prints what `go test` prints
// without -json — an "ok" line per passing package, the whole output of
// every failed test, build errors — and counts the test functions
// (top-level tests, fuzz targets' seed runs and examples; subtests are part
// of their test) that passed, failed and were skipped. make test runs it
// for the main module and for the rclone module, adding their counts in
// one state file, and ends with
//
//	testsummary -state FILE -print
//
// which prints the closing line CI reads, alone on its line, of the form
//
//	N passed, M failed, K skipped
//
// Usage:
//
//	testsummary -state FILE -- go test -json [flags] [packages]
//
// It exits 1 when the command fails or a test fails, so a failing test
// still fails make test. A package that fails without a failing test (a
// build error, a panic in TestMain, a test binary killed by -timeout) counts
// as one failed test, named after the package, so the line never says
// "0 failed" for a run that failed.
package main
