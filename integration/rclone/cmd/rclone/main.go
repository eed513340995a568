// Command rclone is rclone v1.68.2 (the version this module requires) with
// only what the mount benchmarks of fs/fusefs run linked in: the mount
// command (bazil.org/fuse, rclone's default `mount` on Linux), mkdir (the
// benchmarks create Azurite's container with it), version, and
// the local and azureblob backends. rclone's own main imports every backend
// and command; linking two keeps their dependencies out of this module's
// go.sum. fs/fusefs builds it with `go build` in this directory at
// benchmark time and caches the binary (see rclone_bench_test.go there).
package main

import (
	_ "github.com/rclone/rclone/backend/azureblob"
	_ "github.com/rclone/rclone/backend/local"
	"github.com/rclone/rclone/cmd"
	_ "github.com/rclone/rclone/cmd/mkdir"
	_ "github.com/rclone/rclone/cmd/mount"
	_ "github.com/rclone/rclone/cmd/version"
)

func main() { cmd.Main() }
