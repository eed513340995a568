// Package diskbench measures the disk a benchmark runs on, as the
// yardstick for the transfer benchmarks: an upload that a server makes
// durable can be no faster than the disk writes the same bytes, so the
// benchmarks report the disk's speed measured in the same run beside the
// server's and its peer's.
package diskbench
