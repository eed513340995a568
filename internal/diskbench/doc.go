// Package diskbench holds what the transfer benchmarks need of the disk
// they run on: the upload's yardsticks (the same bytes written by one
// writer that fsyncs every 4 MiB, Write, and by 4 writers at once that
// each do so, WriteParallel: the disk's durable bandwidth at the
// benchmarks' concurrency of 4 ranges or blocks in flight), the page-cache
// warm-up every timed side starts with (Warm), the file of random bytes
// uploads stream from, a preallocated file for downloads to overwrite, so
// that no side's download times the file system allocating blocks, and
// the median the benchmarks take of their per-round ratios.
package diskbench
