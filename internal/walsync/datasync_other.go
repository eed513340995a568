//go:build !linux

package walsync

import "os"

// datasync is fsync where fdatasync(2) is not at hand.
func datasync(f *os.File) error { return f.Sync() }
