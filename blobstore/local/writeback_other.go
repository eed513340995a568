//go:build !linux

package local

import "os"

// startWriteback is a no-op where sync_file_range does not exist.
func startWriteback(*os.File) {}
