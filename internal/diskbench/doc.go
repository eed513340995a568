// Package diskbench holds what the transfer benchmarks need of the disk
// they run on: FileREST's baseline (the same bytes written by one writer
// that fsyncs every 4 MiB, as a server acknowledging each range durably
// and serially would), the file of random bytes uploads stream from, and a
// preallocated file for downloads to overwrite, so that no side's download
// times the file system allocating blocks.
package diskbench
